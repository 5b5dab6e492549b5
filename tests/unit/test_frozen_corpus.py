"""The frozen corpus stays as it was written: it measures the verifier and is never tuned on."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FROZEN = ROOT / "tests" / "data" / "frozen_corpus"


def test_files_match_their_pinned_hashes() -> None:
    pinned = {}
    for line in (FROZEN / "sha256sums").read_text().splitlines():
        digest, name = line.split(maxsplit=1)
        pinned[name.strip()] = digest
    present = {"docs/" + p.name for p in (FROZEN / "docs").iterdir()} | {"questions.jsonl"}
    assert present == set(pinned), "a file was added to or removed from the frozen corpus"
    for name, digest in pinned.items():
        assert hashlib.sha256((FROZEN / name).read_bytes()).hexdigest() == digest, name


def test_questions_are_well_formed_and_graded() -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from first_corpus import frozen_questions, grade

    items = frozen_questions()
    assert len(items) == 32
    assert {i["outcome"] for i in items} == {"answer", "abstain", "correct-or-abstain"}
    for item in items:
        if item["outcome"] == "answer":
            assert item["expect"], item["q"]
    first = items[0]  # E3: the overheating protection
    assert grade(first, "answered", "E3 means the overheating protection switched off[1].") \
        == "right"
    assert grade(first, "answered", "E3 means the temperature sensor is faulty[1].") == "wrong"
    assert grade(first, "abstained", "") == "refused"
    off_topic = next(i for i in items if i["kind"] == "off-topic")
    assert grade(off_topic, "abstained", "") == "right"
    assert grade(off_topic, "answered", "Jane Austen[1].") == "wrong"
    premise = next(i for i in items if i["outcome"] == "correct-or-abstain")
    assert grade(premise, "abstained", "") == "right"
    assert grade(premise, "answered", "It is dishwasher safe because of its coating[1].") \
        == "wrong"
    assert json.dumps(items, ensure_ascii=False)
