"""Regenerate docs/cited-answer.png: the cited-answer page in headless Chromium, real local model.

Usage (the local model answers, so hold the shared model lock on a shared machine)::

    GROUNDED_RAG_THREADS=1 flock /tmp/grag-model.lock \
        .venv/bin/python scripts/screenshot.py [--question "..."] [--out docs/cited-answer.png]

Ingests the bundled sample corpus into .grounded-rag-demo (as the demo does), starts
``grounded-rag serve`` on a free local port, asks the question on the page, focuses the
first [n] marker so its quoted span shows, and saves a screenshot. Needs Debian's chromium
(``bash scripts/install-browser.sh``) and the playwright Python package (dev extra).
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("GR_CHROMIUM", "/usr/bin/chromium")


def free_port() -> int:
    """A local port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_ready(url: str, proc: subprocess.Popen, timeout: float = 120) -> None:
    """Wait until the server answers ``/healthz``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited with code {proc.returncode}")
        try:
            with urllib.request.urlopen(url + "healthz", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"the server did not answer at {url} within {timeout:.0f} s")


def main() -> int:
    """Ingest, serve, ask on the page, save the screenshot."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--question", default="How long does the Aozora A1 battery last?")
    parser.add_argument("--store", default=".grounded-rag-demo")
    parser.add_argument("--out", default="docs/cited-answer.png")
    parser.add_argument("--timeout", type=float, default=900, help="seconds for the answer")
    args = parser.parse_args()
    if not Path(CHROMIUM).exists():
        print(f"error: {CHROMIUM} is missing: run `bash scripts/install-browser.sh`",
              file=sys.stderr)
        return 3
    from playwright.sync_api import sync_playwright

    cli = str(Path(sys.executable).with_name("grounded-rag"))
    env = {**os.environ, "ORT_DISABLE_TELEMETRY": "1", "ANONYMIZED_TELEMETRY": "False"}
    subprocess.run([cli, "ingest", str(ROOT / "graph" / "samples" / "corpus"), "--store",
                    args.store, "--no-progress"], check=True, cwd=ROOT, env=env)
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    server = subprocess.Popen([cli, "serve", "--store", args.store, "--port", str(port),
                               "--checkpointer", "memory", "--log-level", "warning"],
                              cwd=ROOT, env=env)
    try:
        wait_ready(url, server)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                         args=["--no-sandbox", "--disable-gpu",
                                               "--disable-background-networking"])
            page = browser.new_page(viewport={"width": 1000, "height": 860})
            page.goto(url)
            page.fill("#question", args.question)
            page.click("#ask-button")
            page.wait_for_selector("#result:not([hidden])", timeout=args.timeout * 1000)
            page.wait_for_function("!document.querySelector('#result').hasAttribute('aria-busy')",
                                   timeout=args.timeout * 1000)
            status = page.get_attribute("#result", "data-status")
            if page.locator("#answer a.cite").count():
                page.locator("#answer a.cite").first.focus()
            out = ROOT / args.out
            out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(out), full_page=True)
            browser.close()
        print(f"saved {out.relative_to(ROOT)} ({status}: {args.question})")
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
