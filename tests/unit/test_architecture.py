"""docs/architecture.md stays true: every module and node it names exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"


def test_every_module_the_architecture_names_exists():
    text = DOC.read_text(encoding="utf-8")
    paths = set(re.findall(r"`((?:graph|prompts|tests)/[\w/.]+)`", text))
    # Short names in a room's row ("`store.py`") belong to the room named in that row.
    for line in text.splitlines():
        room = re.match(r"\| `(graph/[\w/]+)/`", line)
        if room:
            for name in re.findall(r"`(\w+\.py)`", line):
                paths.add(f"{room.group(1)}/{name}")
    assert len(paths) > 40
    missing = sorted(p for p in paths if not (ROOT / p).exists())
    assert not missing, f"docs/architecture.md names modules that do not exist: {missing}"


def test_every_node_of_the_graph_is_in_the_node_table():
    from grounded_rag.graph import build_builder

    text = DOC.read_text(encoding="utf-8")
    nodes = set(build_builder().nodes)
    listed = set(re.findall(r"^\| `(\w+)`(?:, `(\w+)`)? \| `graph/nodes/", text, flags=re.M))
    named = {n for pair in listed for n in pair if n}
    assert nodes == named
