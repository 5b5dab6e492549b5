"""The operating presets side by side on the same dev items, in one run and one table.

Each preset (``high_precision``, ``balanced``, ``fast``, ``cost_optimized``) runs through the
evaluation harness (``grounded_rag.evaluation.run_eval``, the engine of ``grounded-rag
eval``) on

- NoMIRACL ja + en, answer task (the whole graph): 40 queries, balanced over language and
  answerable / unanswerable;
- HaluEval-QA, verify task (the verification stages alone): 100 items, 50 hallucinated.

and prints, per preset: answered-on-answerable, abstained-on-unanswerable, the wrong-claim
rate of delivered answers, model calls and seconds per answer (answered questions; the
time until the answer shows differs for ``fast``, which verifies after), HaluEval's hallucinations
let through and false alarms, and the projected cost per 1,000 questions with API models.

Every item's result is cached under ``OUT/cache`` (one JSON line per item, per preset
variant), and so is every audit verdict (``OUT/presets-audit.jsonl``): a stopped run resumes
where it left off, and presets whose verify settings coincide share the HaluEval items.

Wrong-claim rate: every claim of every delivered answer is judged by one reference judge
(``--audit-model``, default the run's model, in full verification), whatever the preset
did; claims the preset left unchecked are judged here. With the local default the
reference is the same 1.5B judge the full presets already used, so their own claims pass
by construction: the number separates sampled / deferred presets from full ones, it is not
an independent accuracy (HaluEval's gold labels are that, in the other columns).

Cost: tokens the generator and extractor used are measured (callbacks; the local model's
tokenizer); the judge's tokens are estimated from the text it judged (claim and evidence at
``CHARS_PER_TOKEN`` plus ``JUDGE_PROMPT_TOKENS`` per claim read, ``JUDGE_OUTPUT_TOKENS`` per
verdict). Prices come from the serving price table (``--prices`` overlays a JSON or TOML
file); they are assumptions recorded on ``PRICES_AS_OF``, to be checked against the
providers' current lists. An API model would not need exactly the local model's attempts.

Usage (long on the local model: run it under the shared lock, one thread)::

    GROUNDED_RAG_THREADS=1 flock /tmp/grag-model.lock \\
        .venv/bin/python benchmarks/presets_bench.py --out eval-results/presets

    # every preset at the smallest size (what CI runs), figures also as JSON
    .venv/bin/python benchmarks/presets_bench.py --quick --json /tmp/presets.json

Data is read from ../shared/eval (never copied into the repository); a missing set is
skipped with a message.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import add_result_args, write_result  # noqa: E402

from grounded_rag.context import apply_preset, default_model_spec  # noqa: E402
from grounded_rag.evaluation import DatasetError, load_dataset, run_eval, sample_items  # noqa: E402
from grounded_rag.evaluation._metrics import mean, rate  # noqa: E402
from grounded_rag.models import resolve_verifier  # noqa: E402
from grounded_rag.presets import PRESETS  # noqa: E402
from grounded_rag.serving.metrics import PriceTable  # noqa: E402
from grounded_rag.types import Evidence  # noqa: E402
from grounded_rag.verification.base import ClaimToCheck  # noqa: E402

PRICES_AS_OF = "2025-06 (list prices, USD per million tokens)"
"""When the default price table's numbers were taken; override them with --prices."""

PROVIDERS = {"OpenAI": "openai:gpt-4.1-mini", "Gemini": "google_genai:gemini-2.5-flash"}
"""The generator each cost column assumes; the preset picks the judge of that provider."""

CHARS_PER_TOKEN = {"ja": 1.0, "en": 4.0}
"""Characters per token for the judge's estimated input (Japanese is near one per token)."""

JUDGE_PROMPT_TOKENS = 200
"""Instructions and framing a judge call spends per claim read (an assumption)."""

JUDGE_OUTPUT_TOKENS = 60
"""A structured verdict with reason and evidence quote (an assumption)."""

WRONG = ("contradicted", "neutral")


def load_results(report: dict[str, Any], ids: Iterable[str]) -> list[dict[str, Any]]:
    """The per-item results of a run, read back from its cache file, in item order."""
    wanted = list(ids)
    found: dict[str, dict[str, Any]] = {}
    path = Path(report.get("cache") or "")
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line torn by an interrupted write
            result = record.get("result") or {}
            if result.get("id") in wanted:
                found[result["id"]] = result
    return [found[i] for i in wanted if i in found]


class Audit:
    """One reference judge for every delivered claim; verdicts cached on disk by content."""

    def __init__(self, spec: str, path: Path) -> None:
        self.spec = spec
        self.path = path
        self.done: dict[str, str] = {}
        self._judge: Any = None
        if path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue
                self.done[record["key"]] = record["verdict"]

    def key(self, claim: dict[str, Any]) -> str:
        """Content key: judge, claim text and the evidence it is judged against."""
        body = json.dumps([self.spec, claim["text"], [e["text"] for e in claim["evidence"]]],
                          ensure_ascii=False)
        return hashlib.sha256(body.encode()).hexdigest()

    def verdicts(self, claims: list[dict[str, Any]], language: str) -> list[str]:
        """The reference verdict of each claim (judged in one call for the uncached ones)."""
        keys = [self.key(c) for c in claims]
        todo = [i for i, k in enumerate(keys) if k not in self.done]
        if todo:
            if self._judge is None:
                self._judge = resolve_verifier(self.spec, "")
            items = [ClaimToCheck(text=claims[i]["text"], evidence=[
                Evidence(source_id=e["source_id"], doc_id=e["doc_id"], title=e["title"],
                         url="", text=e["text"], score=1.0, relevance=1.0)
                for e in claims[i]["evidence"]]) for i in todo]
            judged = self._judge.verify(items, language=language)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as handle:
                for i, verdict in zip(todo, judged, strict=True):
                    self.done[keys[i]] = verdict["verdict"]
                    handle.write(json.dumps({"key": keys[i],
                                             "verdict": verdict["verdict"]}) + "\n")
        return [self.done[k] for k in keys]


def judge_spec(preset: str, generator: str) -> str:
    """The verifier model the preset uses with this generator."""
    resolved = apply_preset({"preset": preset, "generator_model": generator})
    return resolved.verifier_model or generator


def model_calls(result: dict[str, Any], chat_judge: bool) -> int:
    """Model calls of one question: chat calls, the local judge's calls, the probe's pass."""
    calls = int(result.get("chat_calls") or 0)
    if not chat_judge:  # an API judge's calls are chat calls already
        calls += int(result.get("model_calls") or 0)
    if "answerability" in (result.get("timings_ms") or {}):
        calls += 1
    return calls


def judge_tokens_per_claim(texts: list[tuple[str, str]]) -> float:
    """Estimated judge input tokens per claim read, from (language, text) samples."""
    read = mean([len(text) / CHARS_PER_TOKEN.get(lang, 4.0) for lang, text in texts])
    return JUDGE_PROMPT_TOKENS + (read or 0.0)


def cost_per_1k(prices: PriceTable, preset: str, rows: list[dict[str, Any]],
                claim_tokens: float, *, with_generator: bool) -> dict[str, float | None]:
    """USD per 1,000 questions (or verify items) per provider column."""
    out: dict[str, float | None] = {}
    for label, generator in PROVIDERS.items():
        gen = prices.lookup(generator)
        judge = prices.lookup(judge_spec(preset, generator))
        if gen is None or judge is None or not rows:
            out[label] = None
            continue
        total = 0.0
        for r in rows:
            claims = int(r.get("model_claims") or 0)
            total += claims * (claim_tokens * judge.input + JUDGE_OUTPUT_TOKENS * judge.output)
            if with_generator:
                tokens = r.get("tokens") or {}
                total += tokens.get("input", 0) * gen.input + tokens.get("output", 0) * gen.output
        out[label] = round(total / 1e6 / len(rows) * 1000, 4)
    return out


def answer_block(args: argparse.Namespace, preset: str, audit: Audit | None,
                 prices: PriceTable) -> dict[str, Any]:
    """Run (or resume) the answer task for one preset and summarise it."""
    report = run_eval(args.answer_set, task="answer", limit=args.answer_limit, sample="balanced",
                      seed=args.seed, model=args.model, settings={"preset": preset},
                      out_dir=args.out, progress=not args.quiet)
    data = load_dataset(args.answer_set)
    ids = [i.id for i in sample_items(data.items, args.answer_limit, strategy="balanced",
                                      seed=args.seed)]
    rows = load_results(report, ids)
    answered = [r for r in rows if r["status"] == "answered"]
    delivered = wrong = unchecked = 0
    samples: list[tuple[str, str]] = []
    judge = judge_spec(preset, args.model)
    for r in answered:
        claims = r.get("final_claims") or []
        samples += [(r["language"], c["text"] + "".join(e["text"] for e in c["evidence"]))
                    for c in claims]
        unchecked += sum(1 for c in claims if c["verdict"] == "unchecked")
        if audit is None:
            verdicts = [c["verdict"] for c in claims]
        else:
            # Reuse a verdict the same judge already gave; judge the rest here.
            verdicts = [c["verdict"] for c in claims]
            todo = [i for i, c in enumerate(claims)
                    if c["verdict"] == "unchecked" or judge != audit.spec]
            if todo:
                fresh = audit.verdicts([claims[i] for i in todo], r["language"])
                for i, verdict in zip(todo, fresh, strict=True):
                    verdicts[i] = verdict
        delivered += len(claims)
        wrong += sum(1 for v in verdicts if v in WRONG)
    metrics = report["metrics"]
    chat_judge = not judge.startswith("local")
    to_answer = [(r["latency_ms"] - (r.get("timings_ms") or {}).get("verify_after_answer", 0.0))
                 / 1000 for r in answered]
    return {
        "n": len(rows), "errors": report["n_errors"],
        "answered_on_answerable": metrics.get("answer_rate_answerable"),
        "abstained_on_unanswerable": metrics.get("abstention_rate_unanswerable"),
        "delivered_claims": delivered,
        "wrong_claim_rate": rate(wrong, delivered),
        "unchecked_claim_rate": rate(unchecked, delivered),
        "model_calls_per_answer": mean([model_calls(r, chat_judge) for r in answered]),
        "model_calls_per_question": mean([model_calls(r, chat_judge) for r in rows]),
        "seconds_per_answer": mean([r["latency_ms"] / 1000 for r in answered]),
        "seconds_to_answer": mean(to_answer),
        "cost_per_1k_questions_usd": cost_per_1k(prices, preset, rows,
                                                 judge_tokens_per_claim(samples),
                                                 with_generator=True),
    }


def verify_block(args: argparse.Namespace, preset: str, prices: PriceTable) -> dict[str, Any]:
    """Run (or resume) the verify task for one preset and summarise it."""
    report = run_eval(args.verify_set, task="verify", limit=args.verify_limit,
                      sample="stratified", seed=args.seed, model=args.model,
                      settings={"preset": preset}, out_dir=args.out, progress=not args.quiet)
    data = load_dataset(args.verify_set)
    items = sample_items(data.items, args.verify_limit, strategy="stratified", seed=args.seed)
    rows = load_results(report, [i.id for i in items])
    samples = [(i.language, c + "".join(s["text"] for s in i.sources) + (i.claim_question or ""))
               for i in items for c in i.claims]
    metrics = report["metrics"]
    recall, tnr = metrics.get("recall"), metrics.get("true_negative_rate")
    chat_judge = not judge_spec(preset, args.model).startswith("local")
    return {
        "n": len(rows), "errors": report["n_errors"],
        "balanced_accuracy": metrics.get("balanced_accuracy"),
        "hallucinations_let_through": None if recall is None else round(1 - recall, 4),
        "false_alarms": None if tnr is None else round(1 - tnr, 4),
        "checked_claim_share": (metrics.get("cost") or {}).get("checked_claim_share"),
        "model_calls_per_item": mean([r["model_calls"] for r in rows]) if not chat_judge
        else mean([r["verifier_calls"] for r in rows]),
        "seconds_per_item": mean([r["seconds"] for r in rows]),
        "cost_per_1k_items_usd": cost_per_1k(prices, preset, rows,
                                             judge_tokens_per_claim(samples),
                                             with_generator=False),
    }


def _fmt(value: Any, pct: bool = False) -> str:
    if value is None:
        return "-"
    if pct:
        return f"{value * 100:.0f}%"
    return f"{value:.3g}" if isinstance(value, float) else str(value)


def _cost(costs: dict[str, float | None]) -> str:
    return " / ".join(f"${v:.2f}" if v is not None else "-" for v in costs.values())


def markdown(table: dict[str, dict[str, Any]], header: dict[str, Any]) -> str:
    """The side-by-side tables as Markdown."""
    providers = " / ".join(PROVIDERS)
    lines = [f"Presets on {header['answer_set']} (answer, n={header['answer_limit']}) and "
             f"{header['verify_set']} (verify, n={header['verify_limit']}), model "
             f"{header['model']}, reference judge {header['audit_model']}; load "
             f"{header['load_before']} -> {header['load_after']}.", ""]
    lines += ["| preset | answered on answerable | abstained on unanswerable | wrong-claim "
              "rate | unchecked claims | model calls / answer | s / answer | s until the "
              f"answer shows | USD / 1k questions ({providers}) |",
              "|---|---|---|---|---|---|---|---|---|"]
    for name, row in table.items():
        a = row.get("answer")
        if not a:
            continue
        lines.append(
            f"| `{name}` | {_fmt(a['answered_on_answerable'], True)} | "
            f"{_fmt(a['abstained_on_unanswerable'], True)} | {_fmt(a['wrong_claim_rate'], True)}"
            f" ({a['delivered_claims']} claims) | {_fmt(a['unchecked_claim_rate'], True)} | "
            f"{_fmt(a['model_calls_per_answer'])} | {_fmt(a['seconds_per_answer'])} | "
            f"{_fmt(a['seconds_to_answer'])} | {_cost(a['cost_per_1k_questions_usd'])} |")
    lines += ["", "| preset | balanced accuracy | hallucinations let through | false alarms | "
              f"claims checked | model calls / item | s / item | USD / 1k items ({providers}) |",
              "|---|---|---|---|---|---|---|---|"]
    for name, row in table.items():
        v = row.get("verify")
        if not v:
            continue
        lines.append(
            f"| `{name}` | {_fmt(v['balanced_accuracy'])} | "
            f"{_fmt(v['hallucinations_let_through'], True)} | {_fmt(v['false_alarms'], True)} | "
            f"{_fmt(v['checked_claim_share'], True)} | {_fmt(v['model_calls_per_item'])} | "
            f"{_fmt(v['seconds_per_item'])} | {_cost(v['cost_per_1k_items_usd'])} |")
    lines += ["", f"Prices as of {PRICES_AS_OF}: " + ", ".join(
        f"{m}: {p['input']:g} / {p['output']:g}" for m, p in header["prices"].items()
        if m != "local") + ". Judge tokens estimated (see benchmarks/presets_bench.py)."]
    return "\n".join(lines)


def _load() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True,
                              check=False).stdout.strip().split("load average:")[-1].strip()
    except OSError:
        return "?"


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print the tables, write JSON and Markdown next to the cache."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--presets", default=",".join(PRESETS),
                        help="comma-separated presets (default: all four)")
    parser.add_argument("--model", default=None, help="model spec (default: product default)")
    parser.add_argument("--audit-model", default=None,
                        help="reference judge for the wrong-claim rate (default: --model)")
    parser.add_argument("--no-audit", action="store_true",
                        help="wrong-claim rate from the presets' own verdicts only")
    parser.add_argument("--answer-set", default="nomiracl")
    parser.add_argument("--answer-limit", type=int, default=40)
    parser.add_argument("--verify-set", default="halueval_qa")
    parser.add_argument("--verify-limit", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--prices", default=None, help="JSON/TOML price table overlay")
    parser.add_argument("--out", default="eval-results/presets", help="results and cache")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    add_result_args(parser)
    args = parser.parse_args(argv)
    if args.quick:  # every preset, one answer and two verify items each, a fresh cache
        args.answer_limit, args.verify_limit = min(args.answer_limit, 1), min(args.verify_limit, 2)
        if args.out == "eval-results/presets":
            args.out = tempfile.mkdtemp(prefix="presets-quick-")
    args.model = args.model or default_model_spec()
    args.out = Path(args.out)
    presets = [p.strip() for p in args.presets.split(",") if p.strip()]
    unknown = [p for p in presets if p not in PRESETS]
    if unknown:
        parser.error(f"unknown preset(s) {', '.join(unknown)}; allowed: {', '.join(PRESETS)}")
    prices = PriceTable.load(args.prices)
    audit_spec = args.audit_model or args.model
    audit = None if args.no_audit else Audit(audit_spec, args.out / "presets-audit.jsonl")
    header = {"answer_set": args.answer_set, "answer_limit": args.answer_limit,
              "verify_set": args.verify_set, "verify_limit": args.verify_limit,
              "model": args.model, "audit_model": "none" if audit is None else audit_spec,
              "load_before": _load(), "prices": prices.as_dict(), "prices_as_of": PRICES_AS_OF}
    print(f"presets {', '.join(presets)}; model {args.model}; load {header['load_before']}",
          file=sys.stderr)
    started = time.perf_counter()
    table: dict[str, dict[str, Any]] = {}
    for preset in presets:
        table[preset] = {}
        for task, run in (("answer", lambda p=preset: answer_block(args, p, audit, prices)),
                          ("verify", lambda p=preset: verify_block(args, p, prices))):
            try:
                table[preset][task] = run()
            except DatasetError as exc:
                print(f"skip {task} for {preset}: {exc}", file=sys.stderr)
    header["load_after"] = _load()
    header["wall_s"] = round(time.perf_counter() - started, 1)
    text = markdown(table, header)
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "presets-bench.md").write_text(text + "\n", encoding="utf-8")
    (args.out / "presets-bench.json").write_text(
        json.dumps({"header": header, "presets": table}, ensure_ascii=False, indent=2),
        encoding="utf-8")
    print(f"\nwrote {args.out / 'presets-bench.md'} and .json in {header['wall_s']} s",
          file=sys.stderr)
    write_result(args.json, "presets", {"header": header, "presets": table}, quick=args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
