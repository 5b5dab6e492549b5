"""The store as a LangChain retriever: same ranking as ``grounded-rag retrieve``, filters that
restrict the search (never fewer than k when k chunks match), async, LCEL composition."""

import json
from pathlib import Path

import pytest
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import ConfigurableField, RunnableLambda, RunnablePassthrough

from grounded_rag.cli import main
from grounded_rag.retrieval import (
    GroundedRetriever,
    StoreNotFoundError,
    as_retriever,
    ingest_paths,
    make_filter,
    open_retriever,
)
from tests.unit.test_retrieval_store import HashEmbeddings, write

SMALL_CORPUS = Path(__file__).parents[1] / "data" / "small_corpus"


@pytest.fixture(scope="module")
def small_store(tmp_path_factory):
    """tests/data/small_corpus ingested with the default (offline) embedder."""
    store = tmp_path_factory.mktemp("lc") / "store"
    assert main(["ingest", str(SMALL_CORPUS), "--store", str(store), "--no-progress"]) == 0
    return store


@pytest.fixture(scope="module")
def small(small_store):
    return as_retriever(small_store)


def cli_ids(capsys, store, query, *args):
    capsys.readouterr()
    assert main(["retrieve", query, "--store", str(store), "--json", *args]) == 0
    return [hit["source_id"] for hit in json.loads(capsys.readouterr().out)]


def doc_ids(docs):
    return [d.metadata["source_id"] for d in docs]


CASES = [
    # (query, CLI flags, search kwargs)
    ("How long does a full charge power a laptop?", ["--k", "3"], {"k": 3}),
    ("宿泊費の上限はいくらですか", ["--k", "5"], {"k": 5}),
    ("What is the warranty?", ["--k", "4", "--language", "ja"], {"k": 4, "language": "ja"}),
    ("委託料はいくらですか", ["--k", "3", "--doc", "travel-policy-ja"],
     {"k": 3, "doc_id": "travel-policy-ja"}),
    ("契約期間", ["--k", "6", "--path-prefix", "service-", "--path-prefix", "aurora"],
     {"k": 6, "path_prefix": ["service-", "aurora"]}),
    ("charging", ["--k", "2", "--where", "section=出張旅費規程 > 第2条 宿泊費",
                  "--where", "section=Aurora LX-3 Portable Power Bank > Warranty"],
     {"k": 2, "filter": {"section": ["出張旅費規程 > 第2条 宿泊費",
                                     "Aurora LX-3 Portable Power Bank > Warranty"]}}),
    ("refund", ["--k", "3", "--mode", "bm25", "--language", "en"],
     {"k": 3, "language": "en", "mode": "bm25"}),
]


@pytest.mark.parametrize(("query", "flags", "kwargs"), CASES)
def test_same_top_chunks_as_the_cli(small_store, capsys, query, flags, kwargs):
    kwargs = dict(kwargs)
    mode = kwargs.pop("mode", "hybrid")
    expected = cli_ids(capsys, small_store, query, *flags)
    retriever = as_retriever(small_store, mode=mode, **kwargs)
    docs = retriever.invoke(query)
    assert doc_ids(docs) == expected
    assert len(docs) == min(kwargs["k"], len(expected))


def test_documents_carry_the_chunk_and_its_metadata(small, capsys, small_store):
    capsys.readouterr()
    query = "How long does a full charge power a laptop?"
    assert main(["retrieve", query, "--store", str(small_store), "--json", "--k", "2"]) == 0
    hits = json.loads(capsys.readouterr().out)
    docs = small.invoke(query, k=2)
    for doc, hit in zip(docs, hits, strict=True):
        assert isinstance(doc, Document)
        assert doc.page_content == hit["text"]
        assert doc.id == hit["source_id"]
        meta = doc.metadata
        for key in ("source_id", "doc_id", "title", "section", "url", "start", "end",
                    "relevance", "score"):
            assert meta[key] == hit[key], key
        assert meta["language"] == "en"
    assert docs[0].metadata["source_id"] == "aurora-lx3-en#sec3"
    assert docs[0].metadata["url"] == "aurora-lx3-en.md"
    ja = small.invoke("宿泊費の上限", k=1)[0]
    assert ja.metadata["language"] == "ja" and ja.metadata["doc_id"] == "travel-policy-ja"


def test_filters_exclude_what_they_should(small):
    q = "宿泊費の上限はいくらですか"
    everything = small.invoke(q, k=11)
    assert len(everything) == 11  # the whole small corpus
    by_doc = small.invoke(q, k=11, doc_id="service-contract-ja")
    assert {d.metadata["doc_id"] for d in by_doc} == {"service-contract-ja"}
    assert len(by_doc) == 4  # all of its chunks, none of the others'
    en = small.invoke(q, k=11, language="en")
    assert [d.metadata["doc_id"] for d in en] == ["aurora-lx3-en"] * 3
    both = small.invoke(q, k=11, language="ja", path_prefix="travel")
    assert {d.metadata["doc_id"] for d in both} == {"travel-policy-ja"} and len(both) == 4
    assert small.invoke(q, k=3, doc_id="no-such-doc") == []
    neq = small.invoke(q, k=11, filter={"doc_id": {"$nin": ["travel-policy-ja",
                                                            "aurora-lx3-en"]}})
    assert {d.metadata["doc_id"] for d in neq} == {"service-contract-ja"}
    one = small.invoke(q, k=5, filter={"source_id": "travel-policy-ja#sec4"})
    assert doc_ids(one) == ["travel-policy-ja#sec4"]
    # filtered results keep the unfiltered order among themselves
    ja_order = [i for i in doc_ids(everything) if i.startswith("travel")]
    assert doc_ids(small.invoke(q, k=11, doc_id="travel-policy-ja")) == ja_order


def test_retriever_filters_and_per_call_filters(small_store, small):
    q = "宿泊費の上限"
    fixed = as_retriever(small_store, k=2, doc_id="aurora-lx3-en")
    assert {d.metadata["doc_id"] for d in fixed.invoke(q)} == {"aurora-lx3-en"}
    # a per-call argument replaces the retriever's own of that name
    assert {d.metadata["doc_id"] for d in fixed.invoke(q, doc_id="travel-policy-ja")} == {
        "travel-policy-ja"}
    assert len(fixed.invoke(q, k=3)) == 3
    via_kwargs = GroundedRetriever(store=small_store, search_kwargs={"k": 1, "language": "en"})
    assert [d.metadata["language"] for d in via_kwargs.invoke(q)] == ["en"]
    # the retriever object of the product, as a LangChain retriever
    hybrid = open_retriever(small_store)
    lc = hybrid.as_retriever(k=2, language="en")
    assert isinstance(lc, BaseRetriever) and lc.retriever is hybrid
    assert doc_ids(lc.invoke(q)) == doc_ids(fixed.invoke(q, k=2, doc_id=None, language="en"))


def test_bad_arguments_fail_early(small_store, small):
    with pytest.raises(ValueError, match="unknown search argument"):
        as_retriever(small_store, score_threshold=0.5)
    with pytest.raises(ValueError, match="cannot filter on 'author'"):
        as_retriever(small_store, filter={"author": "me"})
    with pytest.raises(ValueError, match="language must be"):
        small.invoke("x", language="english")
    with pytest.raises(ValueError, match="unknown operator"):
        small.invoke("x", filter={"doc_id": {"$gt": "a"}})
    with pytest.raises(ValueError, match="k must be"):
        small.invoke("x", k=0)
    with pytest.raises(ValueError, match="Extra inputs"):
        GroundedRetriever(store=small_store, filter={"doc_id": "x"})
    with pytest.raises(StoreNotFoundError):
        as_retriever(small_store.parent / "missing")


async def test_async_matches_sync(small):
    q = "契約の有効期間はいつまでですか"
    assert doc_ids(await small.ainvoke(q)) == doc_ids(small.invoke(q))
    got = await small.ainvoke(q, k=2, path_prefix="travel")
    assert doc_ids(got) == doc_ids(small.invoke(q, k=2, path_prefix="travel"))
    assert len(got) == 2 and all(d.metadata["doc_id"] == "travel-policy-ja" for d in got)
    batch = await small.abatch([q, "charging"])
    assert [doc_ids(b) for b in batch] == [doc_ids(small.invoke(q)),
                                           doc_ids(small.invoke("charging"))]


def test_composes_in_lcel(small, capsys, small_store):
    q = "How long does a full charge power a laptop?"
    chain = small | RunnableLambda(lambda docs: [d.metadata["source_id"] for d in docs])
    assert chain.invoke(q) == cli_ids(capsys, small_store, q)

    def context(docs):
        return "\n\n".join(f"[{d.metadata['source_id']}] {d.page_content}" for d in docs)

    prompt = {"context": small | context, "question": RunnablePassthrough()} | RunnableLambda(
        lambda x: f"{x['context']}\n\nQ: {x['question']}")
    text = prompt.invoke(q)
    assert text.startswith("[aurora-lx3-en#sec3] ## Charging") and text.endswith(q)
    # filters chosen per request through the config (LangServe / LangGraph style)
    configurable = small.configurable_fields(
        search_kwargs=ConfigurableField(id="search_kwargs"))
    docs = configurable.invoke(q, config={"configurable": {"search_kwargs": {
        "k": 2, "language": "ja"}}})
    assert len(docs) == 2 and {d.metadata["language"] for d in docs} == {"ja"}


def many_docs(root):
    """40 documents about apples in fruit/, 6 in notes/ that never say apple."""
    for i in range(40):
        write(root / "fruit" / f"f{i:02d}.md",
              f"# Apple {i}\n\n## Apples\nApple variety {i}: apple trees, apple juice.\n")
    for i in range(6):
        write(root / "notes" / f"n{i}.md", f"# Note {i}\n\n## Misc\nMeeting notes number {i}.\n")
    return root


@pytest.mark.parametrize("mode", ["hybrid", "vector"])
def test_a_filter_finds_k_matches_ranked_below_every_candidate(tmp_path, mode):
    root = many_docs(tmp_path / "docs")
    store = tmp_path / "store"
    assert ingest_paths([root], store, embeddings=HashEmbeddings(), progress=False).ok
    hybrid = open_retriever(store, embeddings=HashEmbeddings(), mode=mode, n_candidates=5)
    lc = hybrid.as_retriever(k=4)
    top = lc.invoke("apple", k=20)
    assert all(d.metadata["doc_id"].startswith("fruit/") for d in top)  # notes rank last
    notes = lc.invoke("apple", path_prefix="notes/")
    assert len(notes) == 4 and all(d.metadata["doc_id"].startswith("notes/") for d in notes)
    assert len(lc.invoke("apple", k=10, path_prefix="notes/")) == 6  # all there are
    # the same through the product's own API and the CLI's filter
    flt = make_filter(path_prefix="notes/")
    assert [e["source_id"] for e in hybrid.retrieve("apple", 4, chunk_filter=flt)] == doc_ids(
        notes)


def test_bm25_mode_filters_to_chunks_that_score(tmp_path):
    root = many_docs(tmp_path / "docs")
    write(root / "notes" / "apple-note.md", "# Apple note\n\n## Misc\nOne apple for lunch.\n")
    store = tmp_path / "store"
    assert ingest_paths([root], store, embeddings=HashEmbeddings(), progress=False).ok
    lc = as_retriever(store, mode="bm25", k=3)
    lc.retriever.n_candidates = 5
    got = lc.invoke("apple", path_prefix="notes/")
    # BM25 ranks only chunks that contain a query word: the one note that does
    assert doc_ids(got) == ["notes/apple-note#sec2"]


def test_networked_store_too(backend, tmp_path):
    root = write(tmp_path / "docs" / "a.md",
                 "# Alpha\n\n## Scope\nAlpha covers apples.\n\n## Price\nApples cost 3.\n").parent
    write(root / "b.md", "# Beta\n\n## Scope\nBeta covers bananas.\n")
    backend.ingest([root], embeddings=HashEmbeddings())
    hybrid = backend.retriever(embeddings=HashEmbeddings())
    lc = hybrid.as_retriever(k=3)
    assert {d.metadata["doc_id"] for d in lc.invoke("scope")} == {"a", "b"}
    assert [d.metadata["doc_id"] for d in lc.invoke("scope", doc_id="b")] == ["b"]


def test_cli_filter_mistakes_are_usage_errors(small_store, capsys):
    for flags in (["--where", "doc_id"], ["--where", "author=me"], ["--where", "start=x"]):
        capsys.readouterr()
        assert main(["retrieve", "x", "--store", str(small_store), *flags]) == 2
        assert "error:" in capsys.readouterr().err
    start = as_retriever(small_store).invoke("charging", filter={
        "source_id": "aurora-lx3-en#sec3"})[0].metadata["start"]
    assert cli_ids(capsys, small_store, "charging", "--where", f"start={start}",
                   "--where", "doc_id=aurora-lx3-en") == ["aurora-lx3-en#sec3"]
