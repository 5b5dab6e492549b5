"""Re-embedding: new vectors for the stored chunks with another embedder, switched in atomically."""

from __future__ import annotations

import os
import sys
import uuid
from typing import Any

from grounded_rag.retrieval._identity import EmbedderIdentity
from grounded_rag.retrieval._ingest_embed import EMBED_BATCH, _StopFlag
from grounded_rag.retrieval._ingest_report import ReembedReport
from grounded_rag.retrieval.store import _fail_point, open_store, resolve_store, store_label


def reembed_store(
    store_dir: str | os.PathLike[str] | None = None,
    *,
    embeddings: Any = None,
    embedder: str | None = None,
    chroma_url: str | None = None,
    progress: bool = True,
    batch_size: int = EMBED_BATCH,
) -> ReembedReport:
    """Re-embed every stored chunk with another embedder, without re-reading documents.

    The new vectors go into a fresh Chroma collection while the old one keeps serving;
    one transaction then switches the collection and the recorded embedder together, so
    queries never fail or see a mix. Interrupted (Ctrl-C, crash), the old vectors keep
    serving and running it again resumes where it stopped.
    """
    from tqdm import tqdm

    from grounded_rag.retrieval.embeddings import default_embeddings, embedder_identity

    directory = resolve_store(store_dir)
    store = open_store(directory, chroma_url=chroma_url)
    try:
        store.require_documents()
        embeddings = embeddings or default_embeddings(embedder)
        identity = embedder_identity(embeddings)
        previous = store.embedder()
        report = ReembedReport(
            store_label(directory), identity.describe(),
            previous.describe() if previous else "none",
        )
        with store.write_lock():
            target = store.meta("reembed_collection") or ""
            if target and store.meta("reembed_model") != _identity_key(identity):
                store.drop_collection(target)  # a partial run for another embedder
                target = ""
            if not target:
                target = f"grounded-rag-{uuid.uuid4().hex[:12]}"
                store.set_meta("reembed_model", _identity_key(identity))
                store.set_meta("reembed_collection", target)
            collection = store.open_collection(target)
            rows = store.chunk_texts()
            bar = tqdm(
                total=len(rows),
                unit="chunk",
                desc="re-embed",
                file=sys.stderr,
                disable=not progress,
            )
            try:
                with _StopFlag() as flag:
                    for b in range(0, len(rows), batch_size):
                        if flag.stop:
                            report.interrupted = True
                            return report
                        batch = rows[b : b + batch_size]
                        keys = [k for k, _, _ in batch]
                        done = store.existing_vector_keys(keys, collection)
                        fresh = [r for r in batch if r[0] not in done]
                        if fresh:
                            vectors = embeddings.embed_documents([t for _, _, t in fresh])
                            if identity.dimension is None and len(vectors):
                                identity = EmbedderIdentity(
                                    identity.name, identity.weights_sha256, len(vectors[0])
                                )
                            store.add_vectors(
                                [k for k, _, _ in fresh],
                                vectors,
                                [d for _, d, _ in fresh],
                                collection=collection,
                            )
                        report.chunks_embedded += len(fresh)
                        report.chunks_reused += len(batch) - len(fresh)
                        bar.update(len(batch))
                        _fail_point("reembed_batch")
            finally:
                bar.close()
            store.switch_collection(target, identity)
            report.embedder = identity.describe()
    finally:
        store.close()
    return report


def _identity_key(identity: EmbedderIdentity) -> str:
    return f"{identity.name}|{identity.weights_sha256}"
