"""``run_eval``: load a set, run a task item by item (cached, resumable), compute the report."""

from __future__ import annotations

import os
import sys
import time
import traceback
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from grounded_rag.evaluation import _answer, _verify
from grounded_rag.evaluation._cache import ResultCache
from grounded_rag.evaluation._datasets import (
    ANSWER,
    VERIFY,
    Dataset,
    DatasetError,
    EvalItem,
    load_dataset,
    sample_items,
)

DEFAULT_OUT = "eval-results"
"""Default output folder (git-ignored)."""


def _label(obj: Any) -> str:
    return getattr(obj, "model_label", None) or type(obj).__name__


def run_eval(
    dataset: str | os.PathLike[str] | Dataset,
    *,
    task: str | None = None,
    limit: int | None = None,
    model: str | None = None,
    verifier: Any = None,
    generator: Any = None,
    retriever_factory: _answer.RetrieverFactory | None = None,
    retrieval: str = "hybrid",
    settings: dict[str, Any] | None = None,
    out_dir: str | os.PathLike[str] | None = DEFAULT_OUT,
    resume: bool = True,
    sample: str = "stratified",
    seed: int = 0,
    price: tuple[float, float] | None = None,
    check_batching: bool = False,
    progress: bool = True,
    judge_mode: str | None = None,
    answerability: Any = None,
    on_item: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Evaluate one dataset and return the report (also written to ``out_dir``).

    Args:
        dataset: a path, a folder holding one set, a short name (``jnli``) or a ``Dataset``.
        task: ``verify`` (the verification stages on given response + sources) or ``answer``
            (the whole graph over a corpus built from the set); default: the set's own.
        limit: evaluate a deterministic sample of this many items (see ``sample``).
        model: model spec (``local``, ``openai:gpt-4.1-mini``, ...) for the verifier and, in
            the answer task, the generator; default: the product's default model.
        verifier: an injected ``Verifier`` or chat model (tests, custom judges); wrapped by
            ``resolve_verifier`` exactly as the graph does.
        generator: an injected chat model for the answer task.
        retriever_factory: builds a retriever over ``{id, title, text, url}`` documents;
            default: in-memory retrieval in the ``retrieval`` mode.
        retrieval: in-memory retrieval mode for the answer task: hybrid, bm25 or vector.
        settings: graph settings (``preset``, ``top_k``, ``abstain_threshold``, ...). The
            verify task uses the verification ones: ``verify_mode`` (``sampled`` judges a
            sample), ``verify_sample_rate``, ``verify_execution`` and ``verifier_model``
            (a preset's judge), each resolved through the preset like in the graph.
        out_dir: where reports and the per-item cache go; None writes nothing (no cache).
        resume: reuse cached per-item results; False recomputes and rewrites the cache.
        sample: ``stratified`` (default), ``balanced`` or ``head`` (see ``sample_items``).
        seed: sampling seed.
        price: USD per million (input, output) tokens for the cost per question.
        check_batching: also measure model calls per verifier call as claims grow.
        progress: show a tqdm progress bar on stderr.
        on_item: called with each finished item's result (e.g. for logging).
        judge_mode: ``head``, ``logit`` or ``auto`` for the local judges
            (``$GROUNDED_RAG_JUDGE``).
        answerability: an injected answerability judge for the answer task.
    """
    from tqdm import tqdm

    from grounded_rag.context import default_model_spec
    from grounded_rag.models import is_local_spec, resolve_verifier

    data = dataset if isinstance(dataset, Dataset) else load_dataset(dataset)
    task = task or data.default_task
    if task not in data.tasks:
        raise DatasetError(f"{data.name} supports --task {' / '.join(data.tasks)}, not {task!r}")
    items = sample_items(data.items, limit, strategy=sample, seed=seed)

    spec = model or default_model_spec()
    model_label = spec
    if verifier is not None or generator is not None:
        model_label = "+".join(_label(x) for x in (generator, verifier) if x is not None)
    from grounded_rag.context import apply_preset, validate_settings

    settings = validate_settings(dict(settings or {}))
    resolved = apply_preset({**settings, "generator_model": settings.get("generator_model")
                             or spec})
    variant = ""
    if task == ANSWER:
        variant = f"retrieval={retrieval if retriever_factory is None else 'custom'};" + ";".join(
            f"{k}={v}" for k, v in sorted(settings.items()))
    elif settings:
        variant = _verify_variant(resolved)

    if judge_mode is not None:
        if judge_mode not in ("head", "logit", "auto"):
            raise ValueError(f"judge must be 'head', 'logit' or 'auto', not {judge_mode!r}")
        os.environ["GROUNDED_RAG_JUDGE"] = judge_mode
    # The preset's judge (or an explicit verifier_model) judges both tasks' claims.
    judge_spec = verifier if verifier is not None else (resolved.verifier_model or spec)
    if isinstance(judge_spec, str) and is_local_spec(judge_spec):
        from grounded_rag.local.heads import installed_heads_digest
        from grounded_rag.models import local_judge_mode

        mode = local_judge_mode() or "default"
        variant += f";judge={mode}:{installed_heads_digest()}"
        from grounded_rag.local.verifier import SHARED_MAX_CHARS, SHARED_PREFIX_ENV

        prefix = os.environ.get(SHARED_PREFIX_ENV, "auto")
        variant += f";prefix={prefix}" + (f"<={SHARED_MAX_CHARS}" if prefix == "auto" else "")
        if answerability is not None:
            variant += f";answerability={_label(answerability)}"
    judge = resolve_verifier(judge_spec, "")
    instrumented = _verify.InstrumentedVerifier(judge)

    out_path = Path(out_dir) if out_dir is not None else None
    cache = ResultCache(out_path / "cache" if out_path else Path("."), dataset=data.name,
                        task=task, model=model_label, variant=variant,
                        enabled=resume and out_path is not None)
    if out_path is None:
        cache.path = Path(os.devnull)

    results: list[dict[str, Any]] = []
    errors: list[dict[str, str]] = []
    cached = 0
    run_item = _make_runner(task, data, instrumented, resolved, generator=generator,
                            answerability=answerability,
                            retriever_factory=retriever_factory, retrieval=retrieval,
                            spec=spec if generator is None else "", settings=settings,
                            price=price if price is not None else _answer.PRICES_PER_MTOK.get(spec))
    started = time.perf_counter()
    bar = tqdm(items, desc=f"{data.name} {task}", unit="item", file=sys.stderr,
               disable=not progress, dynamic_ncols=True)
    try:
        for item in bar:
            hit = cache.get(item.id)
            if hit is not None:
                results.append(hit)
                cached += 1
                continue
            try:
                result = run_item(item)
            except KeyboardInterrupt:
                raise
            except Exception as exc:  # one bad item must not lose the run
                errors.append({"id": item.id, "error": f"{type(exc).__name__}: {exc}",
                               "trace": traceback.format_exc(limit=3)})
                continue
            if out_path is not None:
                cache.put(item.id, result)
            results.append(result)
            if on_item:
                on_item(result)
    finally:
        bar.close()
    duration = time.perf_counter() - started

    report = build_report(data, task, model_label, results, items=items, errors=errors,
                          cached=cached, duration=duration, limit=limit, sample=sample,
                          settings=settings, retrieval=retrieval)
    if check_batching:
        lang = items[0].language if items else "en"
        report["batching_check"] = _verify.batching_check(judge, language=lang)
    if out_path is not None:
        from grounded_rag.evaluation._report import write_reports

        report["cache"] = str(cache.path)  # per-item results, one JSON line each
        report["files"] = write_reports(report, results, out_path)
    return report


def _make_runner(
    task: str,
    data: Dataset,
    instrumented: _verify.InstrumentedVerifier,
    resolved: Any,
    *,
    generator: Any,
    answerability: Any = None,
    retriever_factory: _answer.RetrieverFactory | None,
    retrieval: str,
    spec: str,
    settings: dict[str, Any],
    price: tuple[float, float] | None,
) -> Callable[[EvalItem], dict[str, Any]]:
    if task == VERIFY:
        return lambda item: _verify.verify_item(
            item, instrumented, mode=resolved.verify_mode,
            sample_rate=resolved.verify_sample_rate, execution=resolved.verify_execution)

    from grounded_rag.graph import build_graph

    factory = retriever_factory or _answer.memory_retriever_factory(retrieval)
    recorder = _answer.RecordingRetriever()
    graph = build_graph(retriever=recorder, generator=generator,
                        verifier=instrumented.verifier, answerability=answerability)
    configurable = dict(settings)
    if spec:
        configurable.setdefault("generator_model", spec)
    shared: dict[str, Any] = {}

    def run(item: EvalItem) -> dict[str, Any]:
        if item.corpus is not None:
            recorder.base = factory(item.corpus)
        else:
            if "retriever" not in shared:
                if not data.corpus:
                    raise DatasetError(f"{data.name} has no corpus for the answer task")
                shared["retriever"] = factory(data.corpus)
            recorder.base = shared["retriever"]
        recorder.last = []
        return _answer.answer_item(item, graph, recorder, instrumented,
                                   configurable=configurable, price=price)

    return run


def _verify_variant(resolved: Any) -> str:
    """The cache variant of a verify run: only the settings that change its verdicts."""
    mode = "full" if resolved.verify_mode == "deferred" else resolved.verify_mode
    parts = [f"verify_mode={mode}"]
    if mode == "sampled":
        parts.append(f"verify_sample_rate={resolved.verify_sample_rate:g}")
    if resolved.verify_execution != "batch":
        parts.append(f"verify_execution={resolved.verify_execution}")
    if resolved.verifier_model:
        parts.append(f"verifier_model={resolved.verifier_model}")
    variant = ";".join(parts)
    return "" if variant == "verify_mode=full" else variant


def build_report(
    data: Dataset,
    task: str,
    model_label: str,
    results: list[dict[str, Any]],
    *,
    items: list[EvalItem],
    errors: list[dict[str, str]],
    cached: int,
    duration: float,
    limit: int | None,
    sample: str,
    settings: dict[str, Any],
    retrieval: str,
) -> dict[str, Any]:
    """The report dict: metrics overall and per subset, run facts, targets and references."""
    from grounded_rag.evaluation._report import references_for, targets_for

    compute = _verify.verify_metrics if task == VERIFY else _answer.answer_metrics
    subsets = sorted({r["subset"] for r in results})
    metrics = compute(results) if results else {}
    report: dict[str, Any] = {
        "dataset": data.name,
        "format": data.format,
        "path": str(data.path),
        "task": task,
        "model": model_label,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "n_items_in_set": len(data.items),
        "n_items": len(items),
        "n_evaluated": len(results),
        "n_cached": cached,
        "n_errors": len(errors),
        "errors": errors[:20],
        "limit": limit,
        "sample": sample,
        "duration_s": round(duration, 3),
        "settings": settings,
        "retrieval": retrieval if task == ANSWER else None,
        "notes": data.notes,
        "metrics": metrics,
        "by_subset": {s: compute([r for r in results if r["subset"] == s]) for s in subsets}
        if len(subsets) > 1 else {},
    }
    report["targets"] = targets_for(report)
    report["references"] = references_for(data.name)
    return report
