"""The same store code against a Chroma server (``chroma run``), vectors off the store dir."""

import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import grounded_rag
from grounded_rag.cli import main

pytestmark = pytest.mark.integration
SAMPLES = Path(grounded_rag.__file__).parent / "samples" / "corpus"


@pytest.fixture
def chroma_server(tmp_path):
    exe = shutil.which("chroma") or str(Path(sys.executable).with_name("chroma"))
    if not Path(exe).exists():
        pytest.skip("the chroma CLI is not installed")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [exe, "run", "--path", str(tmp_path / "srv"), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={"ANONYMIZED_TELEMETRY": "False", "PATH": "/usr/bin:/bin"},
    )
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_ingest_and_retrieve_through_a_chroma_server(tmp_path, chroma_server, capsys):
    store = tmp_path / "store"
    args = ["--store", str(store), "--chroma-url", chroma_server]
    assert main(["ingest", str(SAMPLES), "--no-progress", *args]) == 0
    assert not (store / "chroma").exists()  # vectors live on the server
    capsys.readouterr()
    assert (
        main(["retrieve", "How long does the battery last?", "--json", "--mode", "vector", *args])
        == 0
    )
    assert '"products/aozora-a1-spec#sec3"' in capsys.readouterr().out.split("}")[0]
