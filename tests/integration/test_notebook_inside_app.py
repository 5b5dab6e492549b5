"""Execute notebooks/04_inside_your_app.ipynb: the graph as a tool, a subgraph and an LCEL step."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "04_inside_your_app.ipynb"


@pytest.mark.integration
def test_inside_your_app_notebook(tmp_path):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    text = "\n".join(out.get("text", "") for cell in nb.cells if cell.cell_type == "code"
                     for out in cell.get("outputs", []))
    # 1. the agent relays the cited answer, and the abstention without answering itself
    assert "agent  : From your documents: The X100 battery lasts up to 10 hours[1]." in text
    assert "tool   : ABSTAINED: the documents do not answer this question." in text
    assert "agent  : I could not find that in your documents." in text
    # 2. progress from the subgraph, the parent paused, resumed on the same thread
    assert "progress from ask_documents -> verifying 1 claims" in text
    assert "parent paused for review: The X100 battery lasts up to 10 hours[1]." in text
    assert "next: ('ask_documents',)" in text
    assert "'human_approved'" in text
    # 3. batch and astream_events through the chain
    assert text.count('[1] X100 > Battery (x100#sec2): "The X100 battery lasts up to 10 hours') >= 2
    assert "progress: verifying 1 claims" in text
    assert "output  : The X100 battery lasts up to 10 hours[1]." in text
