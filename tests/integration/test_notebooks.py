"""Execute the walkthrough notebooks so they cannot rot."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def _run(name: str, tmp_path: Path) -> nbformat.NotebookNode:
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    NotebookClient(nb, timeout=900, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    return nb


def _text(nb: nbformat.NotebookNode) -> str:
    return "\n".join(out.get("text", "") for cell in nb.cells if cell.cell_type == "code"
                     for out in cell.get("outputs", []))


@pytest.mark.integration
def test_providers_notebook(tmp_path):
    nb = _run("03_providers.ipynb", tmp_path)
    assert "answered The X100 battery lasts up to 10 hours[1]." in _text(nb)


@pytest.mark.slow
def test_quickstart_notebook(tmp_path):
    nb = _run("01_quickstart.ipynb", tmp_path)
    assert "abstained" in _text(nb)


@pytest.mark.slow
def test_self_correction_notebook(tmp_path):
    nb = _run("02_self_correction_loop.ipynb", tmp_path)
    assert "paused before: ('verify_claims',)" in _text(nb)
