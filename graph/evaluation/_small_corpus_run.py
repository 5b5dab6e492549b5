"""``run_small_corpus``: build the small collections, run gate or loop mode, write the report."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from grounded_rag.evaluation._small_corpus import (
    DEV,
    HELDOUT,
    SmallCorpusItem,
    SmallCorpusSet,
    Sources,
    build_small_corpus,
    sample_questions,
)

SPLITS = (DEV, HELDOUT, "both")


def run_small_corpus(
    *,
    mode: str = "gate",
    split: str = "both",
    limit: int | None = None,
    seed: int = 0,
    settings: dict[str, Any] | None = None,
    model: str | None = None,
    out_dir: str | os.PathLike[str] | None = "eval-results",
    resume: bool = True,
    progress: bool = True,
    data: SmallCorpusSet | None = None,
    factory: Any = None,
    only: str | None = None,
) -> dict[str, Any]:
    """Evaluate on small collections; the report (also written under ``out_dir``).

    Gate mode always measures the dev part, because the thresholds it reports are fitted
    there; ``split`` chooses which parts are shown (the held-out part only ever has the
    dev-fitted threshold applied to it). ``limit`` samples that many questions per part;
    ``only`` (``answerable`` / ``unanswerable``) keeps only those questions before sampling.
    """
    from grounded_rag.context import apply_preset, validate_settings

    if mode not in ("gate", "loop"):
        raise ValueError(f"mode must be 'gate' or 'loop', not {mode!r}")
    if only not in (None, "answerable", "unanswerable"):
        raise ValueError(f"only must be 'answerable' or 'unanswerable', not {only!r}")
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}, not {split!r}")
    settings = validate_settings(dict(settings or {}))
    resolved = apply_preset(dict(settings))  # the preset's values, as the graph sees them
    top_k, threshold = resolved.top_k, resolved.abstain_threshold
    started = time.perf_counter()
    data = data or build_small_corpus(load_sources(), seed=seed)
    shown = [DEV, HELDOUT] if split == "both" else [split]

    def part(name: str) -> list[SmallCorpusItem]:
        items = data.part(name)
        if only is None:
            return items
        return [i for i in items if i.answerable == (only == "answerable")]

    parts = {s: sample_questions(part(s), limit, seed=seed) for s in shown}
    report: dict[str, Any]
    if mode == "gate":
        from grounded_rag.evaluation._small_corpus_gate import (
            default_retriever_factory,
            gate_markdown,
            gate_report,
            run_gate,
        )

        factory = factory or default_retriever_factory()
        if DEV not in parts:
            parts = {DEV: sample_questions(part(DEV), limit, seed=seed), **parts}
        records, timings = {}, {}
        for s, items in parts.items():
            records[s], timings[s] = run_gate(items, data.collections, top_k=top_k,
                                              threshold=threshold, factory=factory,
                                              progress=progress)
        report = gate_report({s: records[s] for s in shown}, threshold=threshold, top_k=top_k,
                             dev_records=records[DEV])
        report["timings_s"] = timings
        markdown = gate_markdown(report)
        per_item = [r for s in shown for r in records[s]]
    else:
        from grounded_rag.evaluation._cache import ResultCache
        from grounded_rag.evaluation._small_corpus_loop import loop_markdown, run_loop

        out_path = Path(out_dir) if out_dir is not None else None
        from grounded_rag.context import default_model_spec
        from grounded_rag.models import is_local_spec

        variant = ";".join(f"{k}={v}" for k, v in sorted(settings.items()))
        if is_local_spec(model or default_model_spec()):
            # retrained judge heads change verdicts: never reuse results across them
            from grounded_rag.local.heads import installed_heads_digest

            variant += f";heads={installed_heads_digest()}"

        cache = ResultCache(out_path / "cache", dataset="small-corpus", task="loop",
                            model=model or default_model_spec(), variant=variant,
                            enabled=resume) if out_path is not None else None
        loops = {s: run_loop(items, data.collections, model=model, settings=settings,
                             cache=cache, factory=factory, progress=progress)
                 for s, items in parts.items()}
        per_item = [r for s in shown for r in loops[s].pop("records")]
        report = {"mode": "loop", "splits": loops}
        markdown = "\n".join(f"**{s}**\n\n{loop_markdown(r)}" for s, r in loops.items())
    report.update({
        "dataset": "small-corpus", "seed": seed, "limit": limit, "only": only,
        "settings": settings,
        "collections": {s: len({i.collection for i in parts.get(s, [])}) for s in shown},
        "notes": data.notes, "duration_s": round(time.perf_counter() - started, 2),
        "markdown": markdown,
    })
    if out_dir is not None:
        folder = Path(out_dir) / "small-corpus"
        folder.mkdir(parents=True, exist_ok=True)
        stem = f"{mode}-{split}" + (f"-{only}" if only else "") + (f"-n{limit}" if limit else "")
        (folder / f"{stem}.json").write_text(
            json.dumps({k: v for k, v in report.items() if k != "markdown"},
                       ensure_ascii=False, indent=1), encoding="utf-8")
        (folder / f"{stem}.md").write_text(markdown, encoding="utf-8")
        with (folder / f"{stem}.items.jsonl").open("w", encoding="utf-8") as handle:
            for r in per_item:
                handle.write(json.dumps(r, ensure_ascii=False) + "\n")
        report["files"] = {"json": str(folder / f"{stem}.json"),
                           "markdown": str(folder / f"{stem}.md"),
                           "items": str(folder / f"{stem}.items.jsonl")}
    return report


def load_sources(eval_dir: Path | None = None, benchmarks_dir: Path | None = None) -> Sources:
    """Read the dev sets the collections come from; a missing one is noted and skipped."""
    from grounded_rag.evaluation._datasets import default_eval_dir, read_jsonl

    eval_dir = eval_dir or default_eval_dir()
    benchmarks_dir = benchmarks_dir or Path(__file__).resolve().parents[2] / "benchmarks"
    sources = Sources()
    for name in ("jsquad", "jaquad"):
        folder = eval_dir / f"{name}_ja"
        q_path, p_path = folder / "questions.dev.jsonl", folder / "passages.jsonl"
        if q_path.exists() and p_path.exists():
            sources.ja_sets[name] = (list(read_jsonl(p_path)), list(read_jsonl(q_path)))
        else:
            sources.notes.append(f"skipped {name}: {folder} not found")
    halueval = eval_dir / "halueval_qa" / "pairs.dev.jsonl"
    if halueval.exists():
        sources.en_pairs = list(read_jsonl(halueval))
    else:
        sources.notes.append(f"skipped English collections: {halueval} not found")
    nomiracl = eval_dir / "nomiracl_ja_en" / "nomiracl.dev.jsonl"
    if nomiracl.exists():
        sources.no_answer = list(read_jsonl(nomiracl))
    else:
        sources.notes.append(f"skipped off-topic questions: {nomiracl} not found")
    for path in sorted(benchmarks_dir.glob("xlang_en_ja*.jsonl")):
        label = path.name.removesuffix(".jsonl")
        sources.xlang += [{**r, "file": label} for r in read_jsonl(path)]
    if not sources.xlang:
        sources.notes.append(f"skipped cross-language questions: no xlang files in "
                             f"{benchmarks_dir}")
    if not (sources.ja_sets or sources.en_pairs):
        from grounded_rag.evaluation._datasets import DatasetError

        raise DatasetError(
            f"no small-corpus source data in {eval_dir}: the dev sets live in ../shared/eval "
            "next to the repository; set GROUNDED_RAG_EVAL_DIR to their folder.")
    return sources
