"""The verifier's rule table with what each rule did on recorded runs (no model, seconds).

Usage::

    .venv/bin/python benchmarks/rule_inventory.py RESULTS.jsonl [...]
    .venv/bin/python benchmarks/rule_inventory.py --base B.jsonl --without NAME[,NAME]=A.jsonl ...

``RESULTS.jsonl`` are the per-question lines of ``benchmarks/first_corpus.py --out`` or of
``grounded-rag eval ... --out DIR`` (``DIR/results.jsonl``); each records the rules that
changed an outcome on that question (``rules_fired``). The first form prints every rule of
:data:`grounded_rag.verification.rules.RULES` with its mechanism, the case it was written
from, and on the given runs the questions it fired on and how those questions ended:
right, wrong, refused (a rule that never fires earns nothing on those sets; one that fires
mostly on wrong outcomes is not holding its class).

The second form is the leave-one-out comparison: ``B.jsonl`` is a run with every rule on,
each ``A.jsonl`` the same questions asked with the named rules switched off
(``first_corpus.py --without NAME`` or ``GROUNDED_RAG_ABLATE=NAME``). It prints, per
switched-off group, right / wrong / wrong-as-verified / refused against the base and the
questions whose outcome changed. The model is not deterministic across processes to the
last token, so a change on a question none of the group's rules fired on is noise; those
are counted apart.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def load(path: Path) -> list[dict[str, Any]]:
    """The result lines of one run (a results.jsonl, or a directory holding one)."""
    if path.is_dir():
        path = path / "results.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    return [r for r in rows if "status" in r]


def key(row: dict[str, Any]) -> str:
    """What identifies a question across runs: its id, else its text."""
    return str(row.get("id") or row.get("question") or row.get("q") or "")


def outcome(row: dict[str, Any]) -> str:
    """right / wrong / refused, from a first-corpus grade or an eval line."""
    if "grade" in row:
        return str(row["grade"])
    answered = row["status"] == "answered"
    if not row.get("answerable", True):
        return "wrong" if answered else "right"
    if not answered:
        return "refused"
    return "right" if row.get("answer_match") else "wrong"


def verified(row: dict[str, Any]) -> bool:
    """Answered with every claim supported."""
    if "verified" in row:
        return bool(row["verified"])
    verdicts = row.get("verdicts") or []
    return row["status"] == "answered" and bool(verdicts) and all(
        v == "supported" for v in verdicts)


def summary(rows: list[dict[str, Any]]) -> Counter[str]:
    """Outcome counts, with the wrong ones delivered as verified apart."""
    c: Counter[str] = Counter(outcome(r) for r in rows)
    c["wrong as verified"] = sum(outcome(r) == "wrong" and verified(r) for r in rows)
    return c


def inventory(runs: list[list[dict[str, Any]]]) -> None:
    """The rule table with firings and outcomes over ``runs``."""
    from grounded_rag.verification.rules import RULES

    rows = [r for run in runs for r in run]
    missing = sum("rules_fired" not in r for r in rows)
    print(f"{len(rows)} questions in {len(runs)} run(s)"
          + (f"; {missing} recorded no firings (run before the rules table)" if missing else ""))
    print(f"{'rule':<18} {'mechanism':<23} {'fired on':>8} {'right':>5} {'wrong':>5} "
          f"{'refused':>7}  written from")

    def line(name: str, mechanism: str, origin: str) -> None:
        hit = [r for r in rows if (r.get("rules_fired") or {}).get(name)]
        c = Counter(outcome(r) for r in hit)
        print(f"{name:<18} {mechanism:<23} {len(hit):>8} {c['right']:>5} {c['wrong']:>5} "
              f"{c['refused']:>7}  {origin}")

    for name, rule in RULES.items():
        line(name, rule.mechanism, rule.written_from)
    # a rule since retired is still read from the records that counted it
    for name in sorted({n for r in rows for n in (r.get("rules_fired") or {})} - set(RULES)):
        line(name, "(retired)", "no longer in the table")
    never = [n for n in RULES if not any((r.get("rules_fired") or {}).get(n) for r in rows)]
    print(f"never fired on these runs: {', '.join(never) or '-'}")


def leave_out(base: list[dict[str, Any]], groups: list[tuple[list[str], list[dict[str, Any]]]]
              ) -> None:
    """Each switched-off group's outcomes against the base run's, question by question."""
    by_key = {key(r): r for r in base}
    b = summary(base)
    print(f"base: right {b['right']} wrong {b['wrong']} (as verified {b['wrong as verified']})"
          f" refused {b['refused']} of {len(base)}")
    for names, rows in groups:
        a = summary(rows)
        fired_in_base = {key(r) for r in base
                         if any((r.get("rules_fired") or {}).get(n) for n in names)}
        changed = [(k, by_key[k], r) for r in rows if (k := key(r)) in by_key
                   and outcome(by_key[k]) != outcome(r)]
        explained = [c for c in changed if c[0] in fired_in_base]
        print(f"\nwithout {','.join(names)}: right {a['right']} ({a['right'] - b['right']:+d}) "
              f"wrong {a['wrong']} ({a['wrong'] - b['wrong']:+d}; as verified "
              f"{a['wrong as verified']}, {a['wrong as verified'] - b['wrong as verified']:+d}) "
              f"refused {a['refused']} ({a['refused'] - b['refused']:+d}); fired in base on "
              f"{len(fired_in_base)} question(s); outcome changed on {len(changed)}, "
              f"{len(explained)} of them where the group fired")
        for k, was, now in changed:
            mark = "" if k in fired_in_base else "  (group did not fire: noise)"
            print(f"  {outcome(was)} -> {outcome(now)}: {k[:90]}{mark}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="*", type=Path, help="result files (or eval --out dirs)")
    ap.add_argument("--base", type=Path, help="a run with every rule on")
    ap.add_argument("--without", action="append", default=[], metavar="NAMES=FILE",
                    help="a run with the comma-separated rules NAMES switched off")
    args = ap.parse_args()
    if args.without and not args.base:
        ap.error("--without needs --base")
    if not args.results and not args.base:
        ap.error("give result files, or --base with --without")
    if args.results or args.base:
        inventory([load(p) for p in [*args.results, *([args.base] if args.base else [])]])
    if args.base and args.without:
        groups = []
        for spec in args.without:
            names, sep, file = spec.partition("=")
            if not sep:
                ap.error(f"--without {spec!r}: expected NAMES=FILE")
            # names only label the run: a rule since retired is still read from the records
            groups.append(([n for n in names.split(",") if n], load(Path(file))))
        print()
        leave_out(load(args.base), groups)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
