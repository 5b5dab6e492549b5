import json
import subprocess
import sys
from pathlib import Path

import pytest

import grounded_rag
from grounded_rag.cli import main

SAMPLES = Path(grounded_rag.__file__).parent / "samples" / "corpus"


@pytest.fixture(scope="module")
def sample_store(tmp_path_factory):
    store = tmp_path_factory.mktemp("samples") / "store"
    assert main(["ingest", str(SAMPLES), "--store", str(store), "--no-progress"]) == 0
    return store


def test_importing_the_package_is_cheap():
    code = (
        "import sys, grounded_rag.retrieval as r; "
        "mods = ('chromadb', 'onnxruntime', 'sudachipy', 'bm25s'); "
        "heavy = [m for m in mods if m in sys.modules]; "
        "assert not heavy, heavy; assert callable(r.__getattr__('open_retriever'))"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_public_names():
    import grounded_rag.retrieval as r

    for name in (
        "open_retriever",
        "ingest_paths",
        "HybridRetriever",
        "LangChainRetriever",
        "InMemoryRetriever",
        "RetrievalError",
        "StoreNotFoundError",
        "EmptyStoreError",
    ):
        assert name in r.__all__ and getattr(r, name) is not None
    assert issubclass(r.StoreNotFoundError, r.RetrievalError)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("How long does the battery last?", "products/aozora-a1-spec#sec3"),
        ("What is the weight of the Aozora A1?", "products/aozora-a1-spec#sec4"),
        ("Can I fly business class?", "policies/travel-expense-policy#sec4"),
        ("委託料はいくらで、いつまでに支払いますか", "contracts/service-agreement#sec5"),
        ("契約の有効期間はいつからいつまでですか", "contracts/service-agreement#sec3"),
        ("在宅勤務手当はいくら支給されますか", "policies/remote-work-rules-ja#sec5"),
    ],
)
def test_retrieve_on_samples_returns_the_right_section(sample_store, capsys, query, expected):
    capsys.readouterr()
    assert main(["retrieve", query, "--store", str(sample_store), "--k", "3", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert hits[0]["source_id"] == expected
    assert {"source_id", "doc_id", "title", "url", "text", "score", "relevance"} <= hits[0].keys()


def test_unrelated_question_scores_low(sample_store):
    from grounded_rag.retrieval import open_retriever
    from grounded_rag.retrieval.calibration import gate_thresholds

    gate, _ = gate_thresholds("en", None)
    r = open_retriever(sample_store)
    best_on = r.retrieve("How long does the battery last?", 1)[0]["relevance"]
    best_off = r.retrieve("Who won the football world cup in 1998?", 1)[0]["relevance"]
    assert best_off < gate <= best_on


def test_cli_reingest_is_a_no_op_and_reports_json(sample_store, capsys):
    capsys.readouterr()
    assert (
        main(["ingest", str(SAMPLES), "--store", str(sample_store), "--no-progress", "--json"]) == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert report["chunks_written"] == 0 and len(report["unchanged"]) == 6 and report["ok"]


def test_cli_errors(tmp_path, capsys):
    assert main(["retrieve", "x", "--store", str(tmp_path / "none")]) == 3  # not ready
    assert "grounded-rag ingest" in capsys.readouterr().err
    bad = tmp_path / "bad.xyz"
    bad.write_text("x")
    assert main(["ingest", str(bad), "--store", str(tmp_path / "s"), "--no-progress"]) == 1
    assert "unsupported type '.xyz'" in capsys.readouterr().err


def test_in_memory_hybrid_and_langchain_adapter():
    from langchain_core.documents import Document
    from langchain_core.vectorstores import InMemoryVectorStore

    from grounded_rag.retrieval import InMemoryRetriever, LangChainRetriever, Retriever
    from grounded_rag.retrieval.embeddings import MiniLMEmbeddings

    docs = [
        {"id": "bat", "title": "Battery", "text": "The battery lasts 10 hours."},
        {"id": "fee", "title": "委託料", "text": "委託料は月額48万円とする。"},
    ]
    mem = InMemoryRetriever(docs)
    assert isinstance(mem, Retriever)
    assert mem.retrieve("battery life", 1)[0]["source_id"] == "bat#sec0"
    assert mem.retrieve("委託料の金額", 1)[0]["source_id"] == "fee#sec0"

    vs = InMemoryVectorStore(MiniLMEmbeddings())
    vs.add_documents(
        [
            Document(d["text"], metadata={"source_id": d["id"] + "#sec1", "title": d["title"]})
            for d in docs
        ]
    )
    lc = LangChainRetriever(vs)
    hit = lc.retrieve("battery life", 1)[0]
    assert hit["source_id"] == "bat#sec1" and 0 <= hit["relevance"] <= 1
    assert (
        LangChainRetriever(vs.as_retriever()).retrieve("battery life", 1)[0]["source_id"]
        == "bat#sec1"
    )
    with pytest.raises(TypeError):
        LangChainRetriever(object())
