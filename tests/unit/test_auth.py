"""API keys and roles on the served app: 401 without a live key, 403 without the role, the
reviewer's name kept with the decision; the key file and the ``keys`` command."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from grounded_rag._console import EXIT_USAGE
from grounded_rag.cli import main
from grounded_rag.serving.app import create_app
from grounded_rag.serving.auth import KeyStore, KeyStoreError, is_loopback, needed_role
from tests.serving_app import build_test_graph

BATTERY = "How long does the X100 battery last?"


@pytest.fixture
def keys(tmp_path: Path) -> tuple[KeyStore, dict[str, str]]:
    store = KeyStore(tmp_path / "keys.json")
    made = {role: store.create(f"{role}-1", role) for role in ("asker", "reviewer", "admin")}
    return store, made


@pytest.fixture
async def client(keys) -> AsyncIterator[httpx.AsyncClient]:
    store, _ = keys
    app = create_app(build_test_graph(), checkpointer="memory", keys=str(store.path),
                     settings={"review_mode": True, "review_threshold": 1.0})
    async with app.router.lifespan_context(app), httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://test") as http:
        yield http


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_the_file_keeps_digests_only_and_is_private(keys):
    store, made = keys
    text = store.path.read_text(encoding="utf-8")
    assert all(key not in text for key in made.values())
    assert os.stat(store.path).st_mode & 0o077 == 0
    assert [k["name"] for k in store.list()] == ["asker-1", "reviewer-1", "admin-1"]
    assert all("sha256" not in k for k in store.list())
    assert store.identify(made["reviewer"]).role == "reviewer"
    assert store.identify(made["reviewer"] + "x") is None
    with pytest.raises(KeyStoreError, match="exists"):
        store.create("asker-1", "asker")
    with pytest.raises(KeyStoreError, match="role must be"):
        store.create("x", "root")


async def test_no_key_or_a_wrong_key_is_401_everywhere_but_health_and_metrics(client, keys):
    for method, path, body in [("POST", "/ask/stream", {"question": BATTERY}),
                               ("POST", "/rag/invoke", {"input": {"question": BATTERY}}),
                               ("GET", "/answers/t1", None), ("GET", "/reviews", None),
                               ("POST", "/reviews/t1", {"action": "approve"}),
                               ("GET", "/openapi.json", None)]:
        for headers in ({}, bearer("grag_not-a-key"), {"X-API-Key": ""}):
            response = await client.request(method, path, json=body, headers=headers)
            assert response.status_code == 401, (path, headers, response.text)
            assert response.headers["www-authenticate"] == "Bearer"
    assert (await client.get("/healthz")).status_code == 200
    assert (await client.get("/metrics")).status_code == 200


async def test_an_asker_asks_but_may_not_review_and_a_revoked_key_stops(client, keys):
    store, made = keys
    response = await client.post("/rag/invoke", json={"input": {"question": BATTERY}},
                                 headers={"X-API-Key": made["asker"]})
    assert response.status_code == 200, response.text
    for path in ("/reviews", "/reviews/any"):
        refused = await client.get(path, headers=bearer(made["asker"]))
        assert refused.status_code == 403 and "needs a reviewer key" in refused.json()["detail"]
    assert (await client.get("/reviews", headers=bearer(made["admin"]))).status_code == 200
    assert store.revoke("asker-1") == 1
    again = await client.post("/rag/invoke", json={"input": {"question": BATTERY}},
                              headers=bearer(made["asker"]))
    assert again.status_code == 401 and "revoked" in again.json()["detail"]


async def test_a_review_decision_records_who_decided_and_when(client, keys):
    _, made = keys
    response = await client.post("/rag/invoke", json={"input": {"question": BATTERY}},
                                 headers=bearer(made["asker"]))
    assert response.status_code == 200, response.text
    thread_id = response.headers["x-thread-id"]
    pending = await client.get(f"/reviews/{thread_id}", headers=bearer(made["reviewer"]))
    assert pending.status_code == 200, pending.text
    decided = await client.post(f"/reviews/{thread_id}", headers=bearer(made["reviewer"]),
                                json={"action": "approve", "note": "checked", "by": "forged"})
    assert decided.status_code == 200, decided.text
    review = decided.json()["review"]
    assert review["by"] == "reviewer-1" and review["action"] == "approve"
    assert review["at"].startswith("20")


async def test_a_thread_belongs_to_the_key_that_started_it(client, keys):
    store, made = keys
    other = store.create("asker-2", "asker")
    owner = bearer(made["asker"])

    async def run_on(thread_id: str, key: str, route: str) -> int:
        if route == "rag":
            body = {"input": {"question": BATTERY},
                    "config": {"configurable": {"thread_id": thread_id}}}
            response = await client.post("/rag/invoke", json=body, headers=bearer(key))
        else:
            response = await client.post("/ask/stream", headers=bearer(key),
                                         json={"question": BATTERY, "thread_id": thread_id})
        return response.status_code

    started = await client.post("/rag/invoke", json={"input": {"question": BATTERY}},
                                headers=owner)
    thread_id = started.headers["x-thread-id"]
    readers = {made["asker"]: 200, other: 404, made["reviewer"]: 200, made["admin"]: 200}
    for key, code in readers.items():
        assert (await client.get(f"/answers/{thread_id}", headers=bearer(key))).status_code \
            == code, key
    # Another asker cannot run on it through either route, nor can a reviewer.
    for key in (other, made["reviewer"]):
        assert await run_on(thread_id, key, "rag") == 404
        assert await run_on(thread_id, key, "stream") == 404
    # A review resumes the thread; it stays the asker's.
    decided = await client.post(f"/reviews/{thread_id}", headers=bearer(made["reviewer"]),
                                json={"action": "approve"})
    assert decided.status_code == 200, decided.text
    assert (await client.get(f"/answers/{thread_id}", headers=bearer(other))).status_code == 404
    assert (await client.get(f"/answers/{thread_id}", headers=owner)).status_code == 200
    assert await run_on(thread_id, made["asker"], "stream") == 200
    assert await run_on(thread_id, made["admin"], "rag") == 200
    # A thread id the client chose is its key's from its first run; so is a deferred one's
    # thread after its background verification wrote the answer again.
    assert await run_on("picked-by-2", other, "stream") == 200
    assert await run_on("picked-by-2", made["asker"], "rag") == 404
    deferred = await client.post("/rag/invoke", headers=owner, json={
        "input": {"question": BATTERY},
        "config": {"configurable": {"verify_mode": "deferred", "review_mode": False}}})
    late = deferred.headers["x-thread-id"]
    answer = await client.get(f"/answers/{late}", params={"wait": 30}, headers=owner)
    assert answer.json()["verification"] == "complete", answer.text
    assert (await client.get(f"/answers/{late}", headers=owner)).status_code == 200
    assert (await client.get(f"/answers/{late}", headers=bearer(other))).status_code == 404


def test_roles_and_hosts():
    assert needed_role("GET", "/healthz") is None
    assert needed_role("GET", "/web/app.js") is None and needed_role("POST", "/web/x") == "asker"
    assert needed_role("POST", "/reviews/abc") == "reviewer"
    assert needed_role("POST", "/ask/stream") == "asker"
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("10.0.0.5")


def test_keys_command_and_serve_refusals(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("GROUNDED_RAG_KEYS", raising=False)
    path = str(tmp_path / "team" / "keys.json")
    assert main(["keys", "create", "alice", "--role", "reviewer", "--keys", path,
                 "--json"]) == 0
    made = json.loads(capsys.readouterr().out)
    assert made["role"] == "reviewer" and made["key"].startswith("grag_")
    assert KeyStore(path).identify(made["key"]).name == "alice"
    assert main(["keys", "list", "--keys", path]) == 0
    assert "alice" in capsys.readouterr().out
    assert main(["keys", "revoke", "alice", "--keys", path]) == 0
    capsys.readouterr()
    # Beyond loopback without keys, and with a file of no live key: refused before starting.
    assert main(["serve", "--host", "0.0.0.0"]) == EXIT_USAGE
    assert "--insecure-no-auth" in capsys.readouterr().err
    assert main(["serve", "--keys", path]) == EXIT_USAGE
    assert "holds no live API key" in capsys.readouterr().err
