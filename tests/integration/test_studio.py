"""LangGraph Studio's server (``langgraph dev``), offline: step a thread with
``interrupt_before``, edit its state, continue; and the project's own langgraph.json loads."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from tests.integration.servers import ROOT, Server, base_env, free_port

pytestmark = [pytest.mark.integration]

LANGGRAPH = Path(sys.executable).parent / "langgraph"


def start_dev(workdir: Path, name: str) -> Server:
    if not LANGGRAPH.exists():
        pytest.skip("langgraph-cli is not installed (pip install 'grounded-rag[studio]')")
    port = free_port()
    argv = [str(LANGGRAPH), "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1",
            "--port", str(port), "--config", str(workdir / "langgraph.json")]
    server = Server(argv, port=port, log=workdir / f"{name}.log", cwd=workdir,
                    env=base_env(), ready_path="/ok")
    try:
        server.wait_ready(timeout=90)
    except RuntimeError:
        server.stop()
        raise
    return server


@pytest.fixture
def fake_studio(tmp_path):
    # A temp project so .langgraph_api/ lands there, with a graph built on the fakes.
    (tmp_path / "langgraph.json").write_text(json.dumps({
        "dependencies": ["."], "graphs": {"grounded-rag-fake": "tests.studio_graph:graph"}}))
    server = start_dev(tmp_path, "studio-fake")
    yield server
    server.stop()


def test_step_edit_and_continue_a_thread_through_the_sdk(fake_studio):
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=fake_studio.url)
    assistants = client.assistants.search(graph_id="grounded-rag-fake")
    assert assistants, fake_studio.output()
    assistant_id = assistants[0]["assistant_id"]
    thread = client.threads.create()

    # Stop before verification: the draft claims are there, unverified.
    client.runs.wait(thread["thread_id"], assistant_id,
                     input={"question": "Does the X100 battery last 24 hours?"},
                     interrupt_before=["verify_claims"])
    state = client.threads.get_state(thread["thread_id"])
    assert state["next"] == ["verify_claims"]
    claims = state["values"]["claims"]
    assert [c["text"] for c in claims] == ["The X100 battery lasts 24 hours.",
                                           "Charging takes 2 hours."]
    assert all("verdict" not in c for c in claims)

    # A person fixes the wrong claim by hand, then lets the run continue.
    fixed = [{**claims[0], "text": "The X100 battery lasts up to 10 hours."}, claims[1]]
    client.threads.update_state(thread["thread_id"], {"claims": fixed})
    assert client.threads.get_state(thread["thread_id"])["values"]["claims"][0]["text"] == (
        "The X100 battery lasts up to 10 hours.")
    result = client.runs.wait(thread["thread_id"], assistant_id, input=None)
    assert result["status"] == "answered"
    assert result["attempts"] == 1  # the edit passed verification: no regeneration
    assert [c["verdict"] for c in result["claims"]] == ["supported", "supported"]
    history = client.threads.get_history(thread["thread_id"])
    assert len(history) >= 5

    # Review mode works through the Agent Server's own checkpointer too.
    review_thread = client.threads.create()
    paused = client.runs.wait(review_thread["thread_id"], assistant_id,
                              input={"question": "How long does the X100 battery last?"},
                              config={"configurable": {"review_mode": True,
                                                       "review_threshold": 0.99}})
    assert "needs_review" in paused["flags"]
    state = client.threads.get_state(review_thread["thread_id"])
    assert state["next"] == ["review_answer"]
    resumed = client.runs.wait(review_thread["thread_id"], assistant_id,
                               command={"resume": {"action": "reject", "note": "no"}})
    assert resumed["status"] == "abstained"


def test_the_projects_langgraph_json_loads(tmp_path):
    shutil.copy(ROOT / "langgraph.json", tmp_path / "langgraph.json")
    server = start_dev(tmp_path, "studio-real")
    try:
        from langgraph_sdk import get_sync_client

        client = get_sync_client(url=server.url)
        assistants = client.assistants.search()
        assert [a["graph_id"] for a in assistants] == ["grounded-rag"], server.output()
        graph = client.assistants.get_graph(assistants[0]["assistant_id"])
        names = {node["id"] for node in graph["nodes"]}
        assert {"retrieve_evidence", "verify_claims", "review_answer", "abstain_answer"} <= names
        schemas = client.assistants.get_schemas(assistants[0]["assistant_id"])
        assert "question" in json.dumps(schemas["input_schema"])
        assert "max_retries" in json.dumps(schemas.get("context_schema") or
                                           schemas.get("config_schema"))
    finally:
        server.stop()
