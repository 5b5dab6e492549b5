"""The shipped claim head and the plain scorer on claims labelled by construction, and JHARS.

Usage (after ``grounded-rag train-judge --phase extract --sets ja_constructed,jhars`` and
``grounded-rag train-judge --phase fit --task claim --out DIR``)::

    .venv/bin/python benchmarks/constructed_claims_check.py DIR

No model call: it reads the feature cache. For each judge it prints how the constructed
Japanese claims (graph/training/_constructed.py: the gold answer, a neighbouring value of
the same passage, the gold claim against a sibling section) are judged, and how many JHARS
responses (held out of every fit) are flagged. The judges: the plain P(Yes) scorer at 0.45
with the cascade's soft rules, the shipped claim head, and the head fitted in DIR (its
out-of-fold predictions for the constructed set; fitted on all of it for JHARS).
"""

from __future__ import annotations

import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np


def main() -> int:
    from grounded_rag.local.verifier import load_default_head
    from grounded_rag.training._pipeline import BASELINE_SUPPORT, feature_folder
    from grounded_rag.training._train_claim import decide_claims
    from grounded_rag.training._train_table import load_table

    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    table = load_table(feature_folder(), ["ja_constructed", "jhars"], "claim",
                       held_out=["jhars"])
    n = len(table.meta)
    p_yes = np.array([float(r.get("p_yes") or 0.0) for r in table.meta])
    plain = decide_claims(table, p_yes, np.full(n, np.nan), BASELINE_SUPPORT, 1.0,
                          soft_rules=True)
    head = load_default_head("claim")
    p_sup, p_con = np.full(n, np.nan), np.full(n, np.nan)
    for i, row in enumerate(table.meta):
        if row["decided"] is None:
            x = head.inputs(table.hidden[i].astype(np.float32), table.layers,
                            float(table.margin[i]), row.get("extras") or {})
            p_sup[i] = float(head.proba("support", x)[0])
            p_con[i] = float(head.proba("contradiction", x)[0])
    shipped = decide_claims(table, p_sup, p_con, head.thresholds["support"],
                            head.thresholds["contradiction"])
    lines = (Path(sys.argv[1]) / "oof_claim.jsonl").read_text().splitlines()
    oof = {rec["id"]: rec["verdict"] for rec in map(json.loads, lines)}
    fitted = [oof.get(row["id"], "missing") for row in table.meta]
    for name, verdicts in (("plain P(Yes)", plain), ("shipped head", shipped),
                           ("head fitted in DIR", fitted)):
        accepted: Counter[str] = Counter()
        total: Counter[str] = Counter()
        bags: dict[str, list[tuple[str, bool]]] = defaultdict(list)
        for row, verdict in zip(table.meta, verdicts, strict=True):
            if row["set"] == "ja_constructed":
                total[row["label3"]] += 1
                accepted[row["label3"]] += verdict == "supported"
            else:
                bags[row["bag"]].append((verdict, bool(row["bag_positive"])))
        caught = sum(1 for b in bags.values() if not b[0][1]
                     and any(v != "supported" for v, _ in b))
        flagged = sum(1 for b in bags.values() if b[0][1] and any(v != "supported" for v, _ in b))
        bad = sum(1 for b in bags.values() if not b[0][1])
        precision = caught / max(1, caught + flagged)
        recall = caught / max(1, bad)
        f1 = 2 * precision * recall / max(1e-9, precision + recall)
        print(f"{name}: constructed accepted as supported: "
              + ", ".join(f"{k} {accepted[k]}/{total[k]}" for k in sorted(total))
              + f"; JHARS responses: {caught}/{bad} hallucinated caught, {flagged}/"
              f"{len(bags) - bad} faithful flagged, F1 {f1:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
