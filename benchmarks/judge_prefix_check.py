"""The plain Japanese judge in its own prompt against the judge after the generator's sources.

The local generator's first-draft prompt is: its system message, the numbered sources, the
question. The plain claim judge (P(Yes), the Japanese default) can read a claim right after
that sources block on the generator's context, reusing the evaluated prompt; or in its own
prompt (the judge's system message, the claim's selected evidence, the claim). This check
scores the same claims both ways and compares how well P(Yes) separates right answers from
wrong ones, and what each costs in prompt tokens.

Claims: JSQuAD dev questions (held out of every fit; the 0.45 threshold came from JNLI and
JHARS), each read as "質問「Q」の答えは「A」である。" with its gold answer (supported) and with the
gold answer of another question on the same passage (a real span of the source that does
not answer this question: not supported). Evidence: the gold passage and two others of the
same article, in a seeded order. Both arms see the same claims; they alternate per question.

Usage::

    .venv/bin/python benchmarks/judge_prefix_check.py --questions 60

Prints AUROC, accuracy at the shipped threshold (0.45) per class, and prompt tokens per
claim: for the own prompt the tokens actually evaluated (its evidence prefix reused between
the claims of one question); for the shared layout the tokens beyond the generator's
first-draft prompt (what the product evaluates when the judge follows the draft).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "eval" / "jsquad_ja"


def _items(n: int, seed: int) -> list[dict]:
    """Questions with a supported and a wrong answer, and three passages of evidence."""
    passages = {}
    by_title: dict[str, list[str]] = defaultdict(list)
    for line in open(DATA / "passages.jsonl", encoding="utf-8"):
        p = json.loads(line)
        passages[p["pid"]] = p
        by_title[p["title"]].append(p["pid"])
    by_pid: dict[str, list[dict]] = defaultdict(list)
    for line in open(DATA / "questions.dev.jsonl", encoding="utf-8"):
        q = json.loads(line)
        if not q.get("is_impossible") and q.get("answers"):
            by_pid[q["gold_pid"]].append(q)
    rng = random.Random(seed)
    pids = sorted(p for p, qs in by_pid.items() if len(qs) >= 2 and len(by_title[
        passages[p]["title"]]) >= 3)
    rng.shuffle(pids)
    out = []
    for pid in pids:
        qs = by_pid[pid]
        q = rng.choice(qs)
        gold = q["answers"][0]
        others = [o["answers"][0] for o in qs if o is not q
                  and not any(a in o["answers"][0] or o["answers"][0] in a
                              for a in q["answers"])]
        if not others:
            continue
        siblings = [x for x in by_title[passages[pid]["title"]] if x != pid]
        chosen = [pid, *rng.sample(siblings, 2)]
        rng.shuffle(chosen)
        out.append({"question": q["question"], "gold": gold, "wrong": rng.choice(others),
                    "passages": [passages[x] for x in chosen]})
        if len(out) >= n:
            break
    return out


def _evidence(passages: list[dict]) -> list:
    from grounded_rag.types import Evidence

    return [Evidence(source_id=f"{p['pid']}#sec0", doc_id=p["pid"], title=p["title"], url="",
                     text=p["text"].split("[SEP]", 1)[-1].strip(), score=1.0, relevance=1.0)
            for p in passages]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=60)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--threshold", type=float, default=0.45)
    parser.add_argument("--out", default="", help="write every claim's scores (JSON lines)")
    parser.add_argument("--arms", default="own,shared", help="own, shared or both")
    parser.add_argument("--after", default="",
                        help="another text for the judge's question after the sources "
                             "(with {claim}); default the shipped AFTER_SOURCES_JA")
    args = parser.parse_args()
    if not DATA.exists():
        print(f"skipped: {DATA} is absent", file=sys.stderr)
        return 0

    from grounded_rag.evaluation import _metrics as m
    from grounded_rag.evaluation._verify import sources_block
    from grounded_rag.local.runtime import _common_prefix, render_chat
    from grounded_rag.local.scorer import sigmoid
    from grounded_rag.local.verifier import (
        DEFAULT_THRESHOLDS,
        SHARED_PREFIX_ENV,
        SHARED_THRESHOLDS,
        LocalVerifier,
        _logit,
    )
    from grounded_rag.nodes.write import answer_messages
    from grounded_rag.prompts import generate, local_verify
    from grounded_rag.verification.base import ClaimToCheck, statement_of

    items = _items(args.questions, args.seed)
    arms = [a for a in ("own", "shared") if a in args.arms.split(",")]
    if args.after:
        local_verify.AFTER_SOURCES_JA = args.after.replace("\\n", "\n")
    verifier = LocalVerifier(judge="logit")
    scorer = verifier.scorer
    rt = scorer._rt()
    shift = _logit(SHARED_THRESHOLDS["ja"]) - _logit(DEFAULT_THRESHOLDS["ja"])
    rows: dict[str, list[tuple[bool, float]]] = {"own": [], "shared": []}
    tokens: dict[str, list[int]] = {"own": [], "shared": []}
    seconds: dict[str, float] = {"own": 0.0, "shared": 0.0}
    start = time.perf_counter()
    for k, item in enumerate(items):
        evidence = _evidence(item["passages"])
        sources = sources_block(item["question"], evidence)
        draft = render_chat(rt, [
            {"role": "system" if i == 0 else "user", "content": msg.content}
            for i, msg in enumerate(answer_messages(item["question"], sources, "ja"))])
        for arm in (arms if k % 2 == 0 else arms[::-1]):
            os.environ[SHARED_PREFIX_ENV] = "off" if arm == "own" else "auto"
            checks = []
            for answer in (item["gold"], item["wrong"]):
                check = ClaimToCheck(text=answer, evidence=evidence, question=item["question"])
                if arm == "shared":
                    check["sources"] = sources
                checks.append(check)
            before = (scorer.stats.prompt_tokens, scorer.stats.seconds)
            verdicts = verifier.verify(checks, language="ja")
            seconds[arm] += scorer.stats.seconds - before[1]
            if arm == "own":
                tokens[arm].append(scorer.stats.prompt_tokens - before[0])
            else:
                for check in checks:
                    user = (generate.SOURCES_BLOCK["ja"].format(sources=sources)
                            + local_verify.AFTER_SOURCES_JA.format(
                                claim=statement_of(check, "ja")))
                    judge = render_chat(rt, [{"role": "system",
                                              "content": generate.SYSTEM["ja"]},
                                             {"role": "user", "content": user}])
                    tokens[arm].append(len(judge) - _common_prefix(judge, draft))
            for truth, verdict in zip((True, False), verdicts, strict=True):
                support = float(verdict["support"])
                if arm == "shared":  # back to raw P(Yes): the verifier reports it shifted
                    support = sigmoid(_logit(support) + shift)
                rows[arm].append((truth, support))
        if (k + 1) % 10 == 0:
            print(f"  {k + 1}/{len(items)} questions, {time.perf_counter() - start:.0f} s",
                  file=sys.stderr)
    print(f"{len(items)} JSQuAD dev questions, 2 claims each (gold answer / another "
          f"question's answer on the same passage); load {os.getloadavg()[0]:.2f}")
    t = f"{args.threshold:.2f}"
    print(f"| layout | AUROC | supported kept @{t} | wrong refused @{t} | mean P(Yes) right / "
          "wrong | prompt tokens per question | scoring s per question |")
    print("|---|---|---|---|---|---|---|")
    for arm in arms:
        data = rows[arm]
        right = [s for t, s in data if t]
        wrong = [s for t, s in data if not t]
        auroc = m.auroc([t for t, _ in data], [s for _, s in data])
        kept = sum(s >= args.threshold for s in right)
        refused = sum(s < args.threshold for s in wrong)
        per_question = (sum(tokens[arm]) / len(items)) if items else 0.0
        print(f"| {arm} | {auroc:.3f} | {kept}/{len(right)} | {refused}/{len(wrong)} | "
              f"{sum(right) / len(right):.2f} / {sum(wrong) / len(wrong):.2f} | "
              f"{per_question:.0f} | {seconds[arm] / len(items):.2f} |")
    for arm in arms:
        sweep = []
        for cut in [0.4 + 0.02 * i for i in range(16)]:
            kept = sum(s >= cut for t, s in rows[arm] if t)
            refused = sum(s < cut for t, s in rows[arm] if not t)
            sweep.append(f"{cut:.2f}: {kept}/{refused}")
        print(f"{arm}, supported kept / wrong refused by threshold: " + ", ".join(sweep))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            for arm in arms:
                for truth, score in rows[arm]:
                    fh.write(json.dumps({"arm": arm, "supported": truth, "p_yes": score}) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
