"""``grounded-rag ask --server``: the question goes to a running server's ``/ask/stream`` and
comes back as the same result and progress; and the server's start-up warm-up."""

from __future__ import annotations

import io
import logging

import httpx
import pytest
from fastapi.testclient import TestClient
from langgraph.checkpoint.memory import InMemorySaver

from grounded_rag._console import EXIT_NOT_READY, EXIT_USAGE, CommandError
from grounded_rag.ask_cli import _sse_events, ask_server
from grounded_rag.cli import main
from grounded_rag.serving.app import WARM_UP_QUESTIONS, create_app, warm_up_graph
from tests.serving_app import build_test_graph

BATTERY = "How long does the X100 battery last?"


def test_a_server_answers_with_the_result_and_progress_of_a_local_run():
    app = create_app(build_test_graph(), checkpointer="memory")
    progress = io.StringIO()
    with TestClient(app) as client:
        result = ask_server("http://testserver", BATTERY, {"top_k": 3}, progress=progress,
                            client=client)
    local = build_test_graph().invoke({"question": BATTERY}, {"configurable": {"top_k": 3}})
    assert result["status"] == local["status"] == "answered"
    assert result["answer"] == local["answer"]
    assert [c["text"] for c in result["claims"]] == [c["text"] for c in local["claims"]]
    lines = progress.getvalue().splitlines()
    assert lines and all(line.startswith("  [") for line in lines)


def test_a_refused_question_and_an_absent_server_are_one_line_errors():
    app = create_app(build_test_graph(), checkpointer="memory")
    with TestClient(app) as client, pytest.raises(CommandError, match="HTTP 422"):
        ask_server("http://testserver", BATTERY, {"top_k": 0}, progress=None, client=client)

    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    with httpx.Client(transport=httpx.MockTransport(refuse)) as client, \
            pytest.raises(CommandError) as error:
        ask_server("http://127.0.0.1:9", BATTERY, {}, progress=None, client=client)
    assert error.value.code == EXIT_NOT_READY and error.value.kind == "server_unreachable"
    assert "grounded-rag serve" in str(error.value)


def test_options_the_server_owns_are_refused_not_ignored(capsys, monkeypatch):
    monkeypatch.delenv("GROUNDED_RAG_SERVER", raising=False)
    assert main(["ask", BATTERY, "--server", "http://127.0.0.1:9", "--store", "x",
                 "--quiet"]) == EXIT_USAGE
    assert "--store: the server at http://127.0.0.1:9 answers from its own" in (
        capsys.readouterr().err)


def test_sse_parsing_joins_data_lines_and_keeps_the_event_name():
    lines = ["event: progress", 'data: {"message": "a"}', "", ": ping", "",
             "event: result", 'data: {"status":', 'data: "answered"}', ""]
    assert list(_sse_events(lines)) == [("progress", {"message": "a"}),
                                        ("result", {"status": "answered"})]


def test_warm_up_answers_each_language_and_leaves_no_checkpoint(caplog):
    saver = InMemorySaver()
    graph = build_test_graph(checkpointer=saver)
    with caplog.at_level(logging.INFO, logger="grounded_rag.serving.app"):
        took = warm_up_graph(graph, {})
    assert took >= 0 and "warmed up in" in caplog.text
    assert list(saver.list(None)) == []
    assert graph.checkpointer is saver  # the served graph itself is untouched
    assert len(WARM_UP_QUESTIONS) == 2


def test_a_failing_warm_up_is_logged_and_never_raised(caplog):
    class Broken:
        def copy(self, update):
            return self

        def invoke(self, *args, **kwargs):
            raise RuntimeError("no model file")

    with caplog.at_level(logging.INFO, logger="grounded_rag.serving.app"):
        warm_up_graph(Broken(), {})
    assert "warm-up failed" in caplog.text and "no model file" in caplog.text


def test_serve_shows_the_package_log_and_hands_warm_up_to_its_workers():
    from grounded_rag.serving.cli import log_config
    from grounded_rag.serving.factory import ServeOptions

    config = log_config("debug")
    assert config["loggers"]["grounded_rag"] == {"handlers": ["default"], "level": "DEBUG",
                                                 "propagate": False}
    from uvicorn.config import LOGGING_CONFIG

    assert "grounded_rag" not in LOGGING_CONFIG["loggers"]  # uvicorn's own is left as it was
    assert ServeOptions.from_env(ServeOptions(warm_up=False).to_env()).warm_up is False
    assert ServeOptions.from_env(ServeOptions().to_env()).warm_up is True


def test_a_server_with_keys_takes_the_key_from_the_environment(tmp_path, monkeypatch):
    from grounded_rag.serving.auth import KeyStore

    path = tmp_path / "keys.json"
    key = KeyStore(path).create("cli", "asker")
    app = create_app(build_test_graph(), checkpointer="memory", keys=str(path))
    with TestClient(app) as client:
        monkeypatch.delenv("GROUNDED_RAG_API_KEY", raising=False)
        with pytest.raises(CommandError, match="HTTP 401") as error:
            ask_server("http://testserver", BATTERY, {}, progress=None, client=client)
        assert error.value.kind == "unauthorized" and "GROUNDED_RAG_API_KEY" in str(error.value)
        monkeypatch.setenv("GROUNDED_RAG_API_KEY", key)
        result = ask_server("http://testserver", BATTERY, {}, progress=None, client=client)
    assert result["status"] == "answered"
