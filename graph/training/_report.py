"""The training report in Markdown: the trained heads next to the plain P(Yes) scorer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from grounded_rag.evaluation._report import fmt_cell


def _f(value: Any) -> str:
    return fmt_cell(value, "-")


def _row(lead: list[Any], before: dict[str, Any], after: dict[str, Any],
         keys: list[str]) -> str:
    """A table row: the ``lead`` cells, then "before → after" for each of ``keys``."""
    cells = [str(c) for c in lead] + [_pair(before, after, k) for k in keys]
    return "| " + " | ".join(cells) + " |"


def _pair(before: dict[str, Any], after: dict[str, Any], key: str) -> str:
    b, a = before.get(key), after.get(key)
    if a is None and b is None:
        return "-"
    return f"{_f(b)} → **{_f(a)}**"


def write_report(summary: dict[str, Any], path: Path) -> None:
    """Write ``summary`` (from ``fit_heads``) as Markdown."""
    lines = ["# Judge heads: cross-validated report", ""]
    lines += [
        "Every number for a training set comes from grouped k-fold cross-validation: each "
        "example is scored by a head fitted on the other folds, and no source text is shared "
        "between folds. Held-out sets were never fitted on (their heads are fitted on all "
        "training folds). Thresholds and the head shape were chosen on the same folds, so "
        "treat training-set numbers as slightly optimistic; held-out sets show how far it "
        "carries. \"before\" is the plain P(Yes) scorer with the shipped cascade rules "
        "(support threshold 0.45; answerability ja 0.97, en unchecked) on the same examples.",
        "",
    ]
    claim = summary.get("claim")
    if claim:
        t_sup, t_con = claim["thresholds"]
        lines += [
            "## Claim head (supported / contradicted / neutral)", "",
            f"Head: `{claim['best']}`; thresholds: support {t_sup:.2f}, contradiction "
            f"{t_con:.2f}; files {claim['head_bytes'] / 1024:.0f} KiB.", "",
            "| set | n | held out | AUROC (supported) | balanced accuracy | 3-way accuracy | "
            "contradiction vs neutral AUROC |",
            "|---|---|---|---|---|---|---|",
        ]
        for name, after in claim["report"].items():
            before = claim["baseline"].get(name, {})
            lines.append(_row([name, after["n"], "yes" if after.get("held_out") else ""],
                              before, after, ["auroc", "balanced_accuracy", "accuracy_3way",
                                              "contradiction_vs_neutral_auroc"]))
        bags = [(n, e) for n, e in claim["report"].items() if e.get("response_level")]
        if bags:
            lines += ["", "Response level (a response is hallucinated when any claim is not "
                      "supported; the set's own mix):", "",
                      "| set | responses | hallucinated | F1 | precision | recall | balanced "
                      "accuracy | AUROC |", "|---|---|---|---|---|---|---|---|"]
            for name, after in bags:
                r = after["response_level"]
                b = claim["baseline"].get(name, {}).get("response_level", {})
                lines.append(_row([name, r["n"], r["hallucinated"]], b, r,
                                  ["f1", "precision", "recall", "balanced_accuracy", "auroc"]))
        lines += ["", "Confusion (rows gold, columns predicted: supported / contradicted / "
                  "neutral), trained head:", ""]
        for name, after in claim["report"].items():
            conf = after.get("confusion_3way")
            if not conf:
                continue
            cells = "; ".join(
                f"{g}: " + "/".join(str(conf[g].get(p, 0))
                                    for p in ("supported", "contradicted", "neutral"))
                for g in ("supported", "contradicted", "neutral") if g in conf)
            lines.append(f"- {name}: {cells}")
        lines += ["", "Head shapes compared (score = mean balanced accuracy + mean 3-way "
                  "accuracy over training sets, out of fold):", ""]
        lines += [f"- `{s['config']}`: {s['score']}" for s in claim["search"]]
        lines.append("")
    ans = summary.get("answerable")
    if ans:
        lines += [
            "## Answerability head (does this passage hold the answer?)", "",
            f"Head: `{ans['best']}`; thresholds: "
            + ", ".join(f"{k} {v:.2f}" for k, v in sorted(ans["thresholds"].items()))
            + f"; files {ans['head_bytes'] / 1024:.0f} KiB.", "",
            "| set | n | AUROC | balanced accuracy | answers answerable | abstains "
            "unanswerable |", "|---|---|---|---|---|---|",
        ]
        for name, after in ans["report"].items():
            before = ans["baseline"].get(name, {})
            lines.append(_row([name, after["n"]], before, after,
                              ["auroc", "balanced_accuracy", "answers_answerable",
                               "abstains_unanswerable"]))
        lines += ["", "NoMIRACL rows are per query: the best of the top 3 passages our "
                  "retriever ranks for the query, before any answer is written (the retrieval "
                  "gate and the later claim checks are not included).", "",
                  "Head shapes compared (score = mean query AUROC + mean passage AUROC):", ""]
        lines += [f"- `{s['config']}`: {s['score']}" for s in ans["search"]]
        lines.append("")
    path.write_text("\n".join(lines), encoding="utf-8")
