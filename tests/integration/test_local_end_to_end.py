"""The whole loop on the real local model, the embedded store and the sample corpus."""

from __future__ import annotations

import time

import pytest

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    pytest.importorskip("llama_cpp", reason="needs the 'local' extra")
    from grounded_rag import sample_corpus_dir
    from grounded_rag.retrieval import ingest_paths

    path = tmp_path_factory.mktemp("e2e") / "store"
    ingest_paths([sample_corpus_dir()], str(path), progress=False)
    return str(path)


def _ask(question: str, store: str) -> dict:
    from grounded_rag import graph

    start = time.perf_counter()
    out = graph.invoke({"question": question},
                       config={"configurable": {"store_dir": store, "max_retries": 1}})
    total = time.perf_counter() - start
    stages = ", ".join(f"{k}={v / 1000:.1f}s" for k, v in out["timings_ms"].items())
    print(f"\n{question} -> {out['status']} in {total:.1f}s ({stages}): {out['answer']}")
    return out


@pytest.mark.parametrize(("question", "expected"), [
    ("本契約の有効期間はいつからいつまでですか？", "2025年4月1日"),
    ("How long does the Aozora A1 battery last?", "10 hours"),
])
def test_answerable_question_is_answered_with_verbatim_citations(store, question, expected):
    from grounded_rag.retrieval import open_retriever

    out = _ask(question, store)
    assert out["status"] == "answered", out["findings"]
    assert expected in out["answer"]
    chunks = {e["source_id"]: e["text"]
              for e in open_retriever(store).retrieve(question, 20)}
    assert out["claims"]
    for claim in out["claims"]:
        assert claim["verdict"] == "supported"
        located = [c for c in claim["citations"] if c["start"] >= 0]
        assert located, claim
        for cite in located:
            assert cite["source_id"] in chunks  # an existing chunk, not a phantom id
            span = chunks[cite["source_id"]][cite["start"]:cite["end"]]
            assert span
            if cite["match"] == 1.0:  # verbatim: the offsets point at the quoted text itself
                assert span in cite["quote"]
    if not question.isascii():
        assert out["language"] == "ja" and out["answer"].endswith("。")


def test_unanswerable_question_abstains(store):
    out = _ask("What is the capital of Australia?", store)
    assert out["status"] == "abstained"
    assert out["answer"] == "The sources do not say."
    assert out["findings"]
