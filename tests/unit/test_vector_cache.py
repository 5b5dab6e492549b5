"""The on-disk embedding cache used by evaluation and benchmarks."""

from __future__ import annotations

from grounded_rag.retrieval.vector_cache import CachedEmbeddings


class Counting:
    """A deterministic embedder that records every text it embeds."""

    model_name = "counting"

    def __init__(self, weights_sha256: str = "aaa") -> None:
        self.weights_sha256 = weights_sha256
        self.seen: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.seen += texts
        return [[float(len(t)), float(sum(map(ord, t)) % 97), 1.0] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        self.seen.append("q:" + text)
        return [float(len(text)), 0.0, 2.0]


def test_passages_are_embedded_once_across_instances(tmp_path):
    path = tmp_path / "vectors.sqlite"
    first = Counting()
    cached = CachedEmbeddings(first, path=path, progress=False)
    vectors = cached.embed_documents(["alpha", "beta", "alpha"])
    assert sorted(first.seen) == ["alpha", "beta"]  # the duplicate is embedded once
    assert vectors[0] == vectors[2] == [5.0, float(sum(map(ord, "alpha")) % 97), 1.0]

    second = Counting()
    again = CachedEmbeddings(second, path=path, progress=False)
    assert again.embed_documents(["beta", "gamma"])[0] == vectors[1]
    assert second.seen == ["gamma"]  # only what the first run did not embed
    assert again.embed_query("q1") == [2.0, 0.0, 2.0] and again.embed_query("q1")
    assert second.seen == ["gamma", "q:q1"]  # the repeated query came from the cache


def test_another_model_never_reads_these_vectors(tmp_path):
    path = tmp_path / "vectors.sqlite"
    CachedEmbeddings(Counting("aaa"), path=path, progress=False).embed_documents(["alpha"])
    other = Counting("bbb")  # same class and name, other weights
    CachedEmbeddings(other, path=path, progress=False).embed_documents(["alpha"])
    assert other.seen == ["alpha"]
    # passages and queries are kept apart even for the same text
    fresh = Counting("aaa")
    CachedEmbeddings(fresh, path=path, progress=False).embed_query("alpha")
    assert fresh.seen == ["q:alpha"]
