"""``grounded-rag serve`` options: checked before starting, handed to workers by environment."""

from __future__ import annotations

import argparse

import httpx
import pytest

from grounded_rag._console import CommandError
from grounded_rag.serving.cli import register, serve_options
from grounded_rag.serving.factory import ServeOptions, app_from_env, load_graph
from grounded_rag.serving.limits import Limits


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    return parser.parse_args(["serve", *argv])


def test_flags_become_options_that_survive_the_trip_through_the_environment():
    args = parse("--workers", "4", "--checkpointer", "postgresql://db/x", "--store", "/srv/s",
                 "--chroma-url", "http://chroma:8000", "--graph", "my.mod:graph",
                 "--review-mode", "--max-in-flight", "8", "--max-queue", "16",
                 "--queue-timeout", "2.5", "--per-client", "3", "--client-header", "X-Client-Id",
                 "--max-body-bytes", "2048", "--retry-after", "5", "--durability", "async")
    options = serve_options(args)
    assert options == ServeOptions(
        graph="my.mod:graph", checkpointer="postgresql://db/x", store="/srv/s",
        chroma_url="http://chroma:8000", review_mode=True,
        limits=Limits(max_body_bytes=2048, max_in_flight=8, max_queue=16,
                      queue_timeout_s=2.5, per_client=3, client_header="X-Client-Id",
                      retry_after_s=5), durability="async")
    env = options.to_env()
    assert env["GROUNDED_RAG_SERVE_DURABILITY"] == "async"
    assert env["GROUNDED_RAG_STORE"] == "/srv/s"
    assert env["GROUNDED_RAG_CHROMA_URL"] == "http://chroma:8000"
    assert ServeOptions.from_env(env) == options
    assert ServeOptions.from_env({}) == ServeOptions()


@pytest.mark.parametrize(("argv", "words"), [
    (["--workers", "0"], "--workers"),
    (["--workers", "2", "--checkpointer", "memory"], "postgresql://"),
    (["--max-in-flight", "0"], "max_in_flight"),
    (["--queue-timeout", "0"], "queue_timeout_s"),
])
def test_bad_options_are_usage_errors(argv, words):
    with pytest.raises(CommandError) as error:
        serve_options(parse(*argv))
    assert error.value.code == 2 and words in str(error.value)


def test_load_graph_accepts_graphs_builders_and_functions_and_names_bad_specs():
    from langgraph.graph import StateGraph
    from langgraph.pregel import Pregel

    assert isinstance(load_graph("tests.serving_app:build_test_graph"), Pregel)
    assert isinstance(load_graph("grounded_rag.graph:builder"), StateGraph)
    for spec, words in [("nocolon", "module:attribute"), ("no_such_mod:x", "no_such_mod"),
                        ("tests.serving_app:nothing", "nothing"),
                        ("tests.serving_app:SPEC", "not a graph")]:
        with pytest.raises(ValueError, match=words):
            load_graph(spec)


async def test_a_worker_builds_its_app_and_limits_from_the_environment(monkeypatch):
    options = ServeOptions(graph="tests.serving_app:build_test_graph", checkpointer="memory",
                           limits=Limits(max_body_bytes=64))
    for name, value in options.to_env().items():
        monkeypatch.setenv(name, value)
    app = app_from_env()
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://test") as client:
        too_big = await client.post("/rag/invoke", json={"input": {"question": "x" * 100}})
        assert too_big.status_code == 413
        metrics = (await client.get("/metrics")).text
    assert "rag_http_in_flight 0.0" in metrics
    assert 'rag_http_rejected_total{reason="body_too_large"} 1.0' in metrics


def test_a_bad_durability_from_the_environment_is_refused_by_name():
    from grounded_rag.serving.factory import build_app

    options = ServeOptions.from_env({"GROUNDED_RAG_SERVE_DURABILITY": "never"})
    with pytest.raises(ValueError, match="durability must be one of exit, async, sync"):
        build_app(options)
