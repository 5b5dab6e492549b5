"""Report files: JSON, Markdown and a PNG chart per run, plus a summary over all runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from grounded_rag.evaluation._cache import slug

TARGETS: dict[str, list[tuple[str, str, float, str]]] = {
    "halueval_qa": [("metrics.balanced_accuracy", ">=", 0.80, "balanced accuracy")],
    "jnli": [("metrics.accuracy_3way", ">=", 0.70, "3-way accuracy")],
    "jhars": [("metrics.f1", ">=", 0.50, "response-level F1 of hallucinated")],
    "nomiracl": [
        ("metrics.abstention_rate_unanswerable", ">=", 0.80, "abstention on non-relevant"),
        ("metrics.answer_rate_answerable", ">=", 0.80, "answer rate on relevant"),
    ],
}
"""Issue 6's targets on the dev sets with the local default."""

REFERENCES: dict[str, list[str]] = {
    "halueval_qa": [
        "HHEM-2.1-Open balanced accuracy 74.3 on RAGTruth-QA (GPT-4 zero-shot 74.1).",
        "MiniCheck-FT5 74.7 average balanced accuracy on LLM-AggreFact (GPT-4 75.3).",
    ],
    "halueval_summarization": [
        "MiniCheck-FT5 74.7 average balanced accuracy on LLM-AggreFact (GPT-4 75.3).",
    ],
    "expertqa": [
        "MiniCheck-FT5 74.7 average balanced accuracy on LLM-AggreFact (GPT-4 75.3).",
    ],
    "jhars": [
        "RAGTruth QA response-level F1: GPT-4-turbo prompted 45.6, fine-tuned Llama-2-13B 68.2 "
        "(English RAGTruth; the closest published response-level figures).",
    ],
    "nomiracl": [
        "NoMIRACL baseline_outputs: published models on the same queries, side by side below.",
    ],
}
"""Published reference points from ../shared/eval/README.md, per dataset."""

HEADLINE = {
    "verify": ["balanced_accuracy", "f1", "auroc", "accuracy_3way"],
    "answer": ["answer_rate_answerable", "abstention_rate_unanswerable", "source_recall",
               "citation_precision", "mean_grounding_score", "hallucination_rate"],
}
"""Metrics shown as bars and in the summary table."""


def _get(report: dict[str, Any], dotted: str) -> Any:
    value: Any = report
    for part in dotted.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def targets_for(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Each target of this dataset with the measured value and whether it is met."""
    out = []
    for path, op, goal, label in TARGETS.get(report["dataset"], []):
        value = _get(report, path)
        met = None if value is None else (value >= goal if op == ">=" else value <= goal)
        out.append({"metric": path.split(".")[-1], "label": label, "goal": f"{op} {goal}",
                    "value": value, "met": met})
    return out


def references_for(dataset: str) -> list[str]:
    """Published reference points for a dataset."""
    return REFERENCES.get(dataset, [])


def fmt_cell(value: Any, missing: str = "–") -> str:
    """A table cell: floats to 3 decimals, ``missing`` for None."""
    if value is None:
        return missing
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(fmt_cell(c) for c in row) + " |" for row in rows]
    return lines


_VERIFY_ROWS = ["n", "positives", "balanced_accuracy", "precision", "recall", "f1", "auroc",
                "accuracy", "accuracy_3way", "macro_f1_3way"]
_ANSWER_ROWS = ["n", "answer_rate", "answer_rate_answerable", "abstention_rate_unanswerable",
                "abstention_precision", "abstention_recall", "source_recall",
                "cited_source_recall", "answer_match_rate", "first_draft_match_rate",
                "off_question_rate", "phantom_citation_rate",
                "quote_not_found_rate", "citation_precision", "mean_grounding_score",
                "mean_confidence", "hallucination_rate", "regenerations_per_question"]


def render_markdown(report: dict[str, Any]) -> str:
    """The human-readable report of one run."""
    task = report["task"]
    lines = [f"# {report['dataset']} — {task} — {report['model']}", ""]
    lines += [
        f"- file: `{report['path']}`",
        f"- items: {report['n_evaluated']} evaluated of {report['n_items']} selected "
        f"({report['n_items_in_set']} in the set; limit {report['limit']}, sample "
        f"{report['sample']}); {report['n_cached']} from cache; {report['n_errors']} errors",
        f"- run time: {report['duration_s']} s; created {report['created']}",
    ]
    if report.get("retrieval"):
        lines.append(f"- retrieval: {report['retrieval']}; settings: {report['settings'] or '{}'}")
    lines += [f"- note: {n}" for n in report.get("notes", [])]
    lines.append("")
    columns = {"all": report["metrics"], **report.get("by_subset", {})}
    keys = _VERIFY_ROWS if task == "verify" else _ANSWER_ROWS
    lines += ["## Metrics", ""]
    lines += _table(["metric", *columns], [[k, *[c.get(k) for c in columns.values()]]
                                           for k in keys if any(k in c for c in columns.values())])
    metrics = report["metrics"]
    if task == "verify" and metrics:
        best = metrics.get("best_threshold_on_this_data")
        if best:
            lines += ["", f"Best threshold on this data (tuned here, an upper bound): score >= "
                      f"{best['threshold']} gives balanced accuracy {best['balanced_accuracy']}."]
        conf = metrics.get("confusion", {})
        lines += ["", "## Confusion (rows gold, columns predicted)", ""]
        lines += _table(["gold \\ pred", "hallucinated", "faithful"],
                        [[g, row.get("hallucinated"), row.get("faithful")]
                         for g, row in conf.items()])
        if "confusion_3way" in metrics:
            labels = list(metrics["confusion_3way"])
            lines += [""]
            lines += _table(["gold \\ pred", *labels],
                            [[g, *[row.get(p) for p in labels]]
                             for g, row in metrics["confusion_3way"].items()])
        if "sentence_level" in metrics:
            s = metrics["sentence_level"]
            lines += ["", "## Sentence level", ""]
            lines += _table(["metric", "value"], [[k, s.get(k)] for k in _VERIFY_ROWS if k in s])
        cost = metrics.get("cost", {})
        lines += ["", "## Cost", ""]
        lines += _table(["metric", "value"], [[k, v] for k, v in cost.items()])
    if task == "answer" and metrics:
        lines += ["", "## Latency per stage (ms)", ""]
        lines += _table(["stage", "p50", "p99", "n"],
                        [[s, v["p50"], v["p99"], v["n"]] for s, v in metrics["latency_ms"].items()])
        lines += ["", "## Cost", ""]
        lines += _table(["metric", "value"], [[k, v] for k, v in metrics["cost"].items()])
        if metrics.get("abstain_reasons"):
            lines += ["", "Abstention reasons: " + ", ".join(
                f"{k} {v}" for k, v in sorted(metrics["abstain_reasons"].items()))]
        if metrics.get("baselines"):
            lines += ["", "## Side by side with NoMIRACL's published outputs (same queries)", ""]
            lines += _table(
                ["system", "abstains on non-relevant", "answers on relevant", "invalid", "n"],
                [[name, b["abstention_rate_unanswerable"], b["answer_rate_answerable"],
                  b["invalid_rate"], b["n"]] for name, b in metrics["baselines"].items()])
    if report.get("batching_check"):
        check = report["batching_check"]
        lines += ["", "## Batching check (model calls per verifier call as claims grow)", ""]
        lines += _table(["claims", "verifier calls", "model calls", "seconds", "claims/s"],
                        [[r["claims"], r["verifier_calls"], r["model_calls"], r["seconds"],
                          r["claims_per_second"]] for r in check["rows"]])
        lines.append(f"\nconstant: {check['constant']}")
    if report.get("targets"):
        lines += ["", "## Targets", ""]
        lines += _table(["target", "goal", "value", "met"],
                        [[t["label"], t["goal"], t["value"], t["met"]] for t in report["targets"]])
    if report.get("references"):
        lines += ["", "## Published reference points", ""]
        lines += [f"- {r}" for r in report["references"]]
    if report.get("errors"):
        lines += ["", "## Errors (first 20)", ""]
        lines += [f"- `{e['id']}`: {e['error']}" for e in report["errors"]]
    return "\n".join(lines) + "\n"


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def render_chart(report: dict[str, Any], results: list[dict[str, Any]], path: Path) -> None:
    """Bars of the headline metrics per subset, and a latency histogram."""
    plt = _plt()
    task = report["task"]
    columns = {"all": report["metrics"], **report.get("by_subset", {})}
    keys = [k for k in HEADLINE[task] if any(c.get(k) is not None for c in columns.values())]
    fig, (ax_bars, ax_hist) = plt.subplots(1, 2, figsize=(12, 4.5))
    width = 0.8 / max(1, len(columns))
    for i, (name, col) in enumerate(columns.items()):
        xs = [k + i * width for k in range(len(keys))]
        ax_bars.bar(xs, [col.get(k) or 0.0 for k in keys], width=width, label=name)
    ax_bars.set_xticks([k + width * (len(columns) - 1) / 2 for k in range(len(keys))])
    ax_bars.set_xticklabels(keys, rotation=25, ha="right", fontsize=8)
    ax_bars.set_ylim(0, 1.05)
    ax_bars.set_title(f"{report['dataset']} ({task}, n={report['n_evaluated']})")
    ax_bars.legend(fontsize=8)
    if task == "verify":
        values = [r["seconds"] * 1000 for r in results]
        ax_hist.set_xlabel("verifier latency per item (ms)")
    else:
        values = [r["latency_ms"] for r in results]
        ax_hist.set_xlabel("end-to-end latency per question (ms)")
    if values:
        ax_hist.hist(values, bins=min(30, max(5, len(values) // 2)))
    ax_hist.set_ylabel("items")
    ax_hist.set_title("latency")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_reports(report: dict[str, Any], results: list[dict[str, Any]],
                  out_dir: Path) -> dict[str, str]:
    """Write ``<dataset>-<task>-<model>.{json,md,png}`` and refresh the summary files."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = f"{slug(report['dataset'])}-{report['task']}-{slug(report['model'])}"
    files = {
        "json": str(out_dir / f"{stem}.json"),
        "markdown": str(out_dir / f"{stem}.md"),
        "chart": str(out_dir / f"{stem}.png"),
    }
    report_with_files = {**report, "files": files}
    Path(files["json"]).write_text(json.dumps(report_with_files, ensure_ascii=False, indent=2),
                                   encoding="utf-8")
    Path(files["markdown"]).write_text(render_markdown(report_with_files), encoding="utf-8")
    render_chart(report, results, Path(files["chart"]))
    files.update(write_summary(out_dir))
    return files


def write_summary(out_dir: Path) -> dict[str, str]:
    """``summary.md`` / ``summary.png``: the headline metrics of every report in ``out_dir``."""
    reports = []
    for path in sorted(out_dir.glob("*.json")):
        if path.name == "summary.json":
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        if isinstance(data, dict) and {"dataset", "task", "metrics"} <= set(data):
            reports.append(data)
    if not reports:
        return {}
    lines = ["# Evaluation summary", ""]
    for task in ("verify", "answer"):
        rows = [r for r in reports if r["task"] == task]
        if not rows:
            continue
        keys = HEADLINE[task]
        lines += [f"## {task}", ""]
        lines += _table(["dataset", "model", "n", *keys],
                        [[r["dataset"], r["model"], r["n_evaluated"],
                          *[r["metrics"].get(k) for k in keys]] for r in rows])
        lines.append("")
    summary_md = out_dir / "summary.md"
    summary_md.write_text("\n".join(lines), encoding="utf-8")
    summary_json = out_dir / "summary.json"
    summary_json.write_text(json.dumps(
        [{k: r.get(k) for k in ("dataset", "task", "model", "n_evaluated", "metrics", "targets")}
         for r in reports], ensure_ascii=False, indent=2), encoding="utf-8")
    plt = _plt()
    tasks = [t for t in ("verify", "answer") if any(r["task"] == t for r in reports)]
    fig, axes = plt.subplots(1, len(tasks), figsize=(7 * len(tasks), 4.5), squeeze=False)
    for ax, task in zip(axes[0], tasks, strict=True):
        rows = [r for r in reports if r["task"] == task]
        keys = [k for k in HEADLINE[task] if any(r["metrics"].get(k) is not None for r in rows)]
        width = 0.8 / max(1, len(keys))
        for i, key in enumerate(keys):
            ax.bar([j + i * width for j in range(len(rows))],
                   [r["metrics"].get(key) or 0.0 for r in rows], width=width, label=key)
        ax.set_xticks([j + width * (len(keys) - 1) / 2 for j in range(len(rows))])
        ax.set_xticklabels([f"{r['dataset']}\n{r['model'][:18]}" for r in rows], fontsize=7)
        ax.set_ylim(0, 1.05)
        ax.set_title(f"{task}: per dataset")
        ax.legend(fontsize=7)
    fig.tight_layout()
    summary_png = out_dir / "summary.png"
    fig.savefig(summary_png, dpi=100)
    plt.close(fig)
    return {"summary_markdown": str(summary_md), "summary_json": str(summary_json),
            "summary_chart": str(summary_png)}
