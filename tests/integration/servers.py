"""Start real servers (uvicorn, ``langgraph dev``) in subprocesses on free ports, and stop them."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """A child process serving HTTP on ``url``; its output goes to ``log``."""

    def __init__(self, argv: Sequence[str], *, port: int, log: Path, env: dict[str, str],
                 cwd: Path, ready_path: str) -> None:
        self.url = f"http://127.0.0.1:{port}"
        self.log = log
        self._out = open(log, "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(list(argv), cwd=cwd, env=env, stdout=self._out,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        self.ready_path = ready_path

    def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}:\n{self.output()}")
            try:
                if httpx.get(self.url + self.ready_path, timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"server not ready after {timeout}s:\n{self.output()}")

    def output(self) -> str:
        self._out.flush()
        return self.log.read_text(errors="replace")[-6000:]

    def stop(self) -> None:
        if self.proc.poll() is None:
            # The child leads its own session: stop it and whatever it started.
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)
        self._out.close()


def base_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "GOOGLE_", "GEMINI_", "LANGCHAIN_", "LANGSMITH_"))}
    env.update(PYTHONPATH=str(ROOT), ORT_DISABLE_TELEMETRY="1", ANONYMIZED_TELEMETRY="False",
               LANGGRAPH_CLI_NO_ANALYTICS="1", LANGGRAPH_NO_VERSION_CHECK="true",
               PYTHONUNBUFFERED="1")
    env.update(extra)
    return env


@contextlib.contextmanager
def serving_app(tmp: Path, *, checkpointer: str, name: str = "server",
                **env: str) -> Iterator[Server]:
    """The serving app over the scripted fakes (tests/serving_app.py) under real uvicorn."""
    port = free_port()
    argv = [sys.executable, "-m", "uvicorn", "--factory", "tests.serving_app:create_test_app",
            "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
    server = Server(argv, port=port, log=tmp / f"{name}-{port}.log", cwd=ROOT,
                    env=base_env(GR_TEST_CHECKPOINTER=checkpointer, **env),
                    ready_path="/healthz")
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


def read_sse(response: httpx.Response) -> list[tuple[str, object]]:
    """(event name, decoded data) of every Server-Sent Event in a finished response."""
    events = []
    for block in response.text.replace("\r\n", "\n").split("\n\n"):
        name, data = "message", []
        for line in block.split("\n"):
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].strip())
        if data:
            events.append((name, json.loads("\n".join(data))))
    return events


def kill(server: Server) -> None:
    """Kill the server at once (SIGKILL: no shutdown, like a crash or a lost machine)."""
    os.killpg(server.proc.pid, signal.SIGKILL)
    server.proc.wait(timeout=15)
