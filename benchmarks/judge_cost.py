"""Verification cost per claim: the trained head against the plain P(Yes) scorer, one run.

Today's scorer and the head judge run the same prompt through the same model; the head
judge also copies the last token's hidden states out of 11 layers while the graph runs
(llama.cpp's eval callback, on the last batch only) and applies a small numpy head. This
benchmark evaluates the same claim prompts (JNLI dev pairs and HaluEval-QA answers, seeded)
on two scoring contexts of the one loaded model, one capturing hidden states and one not,
alternating per claim with the KV cache cleared before each (so both pay the full prompt),
then times the head alone.

Usage::

    GROUNDED_RAG_THREADS=2 .venv/bin/python benchmarks/judge_cost.py --claims 40

Prints median seconds per claim with and without the capture, their ratio, the head's
time per claim and the machine's load average. Data is read from ../shared/eval.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time

import numpy as np


def _prompts(n: int, seed: int) -> list[tuple[str, str, str]]:
    """(evidence, claim, language) triples, half JNLI, half HaluEval-QA."""
    from grounded_rag.evaluation._datasets import load_dataset

    out: list[tuple[str, str, str]] = []
    for name in ("jnli", "halueval_qa"):
        try:
            items = list(load_dataset(name).items)
        except Exception as exc:  # noqa: BLE001 - data absent: say so and go on
            print(f"skipped {name}: {exc}", file=sys.stderr)
            continue
        random.Random(seed).shuffle(items)
        for item in items[: n // 2]:
            evidence = "\n".join(s.get("text", "") for s in item.sources)
            out.append((evidence, " ".join(item.claims), item.language))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--claims", type=int, default=40)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    from grounded_rag.local.features import lang_of
    from grounded_rag.local.probe import HiddenStateReader
    from grounded_rag.local.runtime import render_chat
    from grounded_rag.local.scorer import SupportScorer, reader_for
    from grounded_rag.local.verifier import load_default_head
    from grounded_rag.prompts import local_verify

    triples = _prompts(args.claims, args.seed)
    if not triples:
        print("no data: ../shared/eval is absent", file=sys.stderr)
        return 3
    scorer = SupportScorer()
    rt = scorer._rt()
    capture = reader_for(rt)
    plain = HiddenStateReader(rt, layers=())
    prompts = []
    for evidence, claim, lang in triples:
        system, user = local_verify.for_language(lang_of(lang))
        prompts.append(render_chat(rt, [{"role": "system", "content": system},
                                        {"role": "user", "content": user.format(
                                            evidence=evidence[:3000], claim=claim)}]))
    times: dict[str, list[float]] = {"plain": [], "capture": []}
    with rt.lock:
        for reader in (plain, capture):  # warm-up
            reader.reset()
            reader.evaluate(prompts[0])
        for i, tokens in enumerate(prompts):
            order = [("plain", plain), ("capture", capture)]
            if i % 2:
                order.reverse()
            for name, reader in order:
                reader.reset()
                t = time.perf_counter()
                reader.evaluate(tokens, reuse_prefix=False)
                times[name].append(time.perf_counter() - t)
    head = load_default_head("claim")
    row = np.zeros(head.mean.shape[0], dtype=np.float32)
    t = time.perf_counter()
    for _ in range(1000):
        head.proba("support", row)
        if "contradiction" in head.classifiers:
            head.proba("contradiction", row)
    head_ms = time.perf_counter() - t  # 1000 calls: seconds total = ms per call
    load = os.getloadavg()
    tokens = [len(p) for p in prompts]
    med = {k: float(np.median(v)) for k, v in times.items()}
    print(f"{len(prompts)} claim prompts (median {int(np.median(tokens))} tokens), "
          f"{rt.n_threads} threads; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    for name, m in med.items():
        print(f"{name:8s} median {m:.3f} s/claim  mean {np.mean(times[name]):.3f}")
    print(f"ratio capture/plain (median) {med['capture'] / med['plain']:.3f}")
    print(f"head alone (support + contradiction): {head_ms:.3f} ms per claim")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
