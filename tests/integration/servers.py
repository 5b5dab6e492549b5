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
        if not self._out.closed:  # stop() closes it; the log file is still there to read
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


@contextlib.contextmanager
def grounded_rag_serve(tmp: Path, *args: str, name: str = "serve", timeout: float = 180.0,
                       **env: str) -> Iterator[Server]:
    """``grounded-rag serve ARGS...`` (the console script) on a free loopback port."""
    port = free_port()
    argv = [str(BIN / "grounded-rag"), "serve", "--port", str(port), "--log-level", "warning",
            *args]
    server = Server(argv, port=port, log=tmp / f"{name}-{port}.log", cwd=ROOT,
                    env=base_env(**env), ready_path="/healthz")
    try:
        server.wait_ready(timeout)
        yield server
    finally:
        server.stop()


def worker_health(server: Server, want: int, timeout: float = 90.0) -> dict[int, dict]:
    """``/healthz`` of ``want`` distinct workers (by pid), asked on fresh connections."""
    seen: dict[int, dict] = {}
    deadline = time.monotonic() + timeout
    while len(seen) < want:
        if time.monotonic() > deadline:
            raise RuntimeError(f"saw {len(seen)} of {want} workers:\n{server.output()}")
        try:
            with httpx.Client(timeout=5) as client:  # a new connection each time
                body = client.get(server.url + "/healthz").json()
            seen[body["pid"]] = body
        except (httpx.HTTPError, KeyError, ValueError):
            time.sleep(0.1)
    return seen


class PrivatePostgres:
    """A PostgreSQL server of its own on a free loopback port, that a test may restart.

    Built with the installed server binaries (``initdb``) in a fresh directory, so stopping
    it never disturbs the machine's shared database. As root it runs as ``postgres``.
    """

    def __init__(self) -> None:
        import glob
        import shutil
        import tempfile

        found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
        if not found:
            raise FileNotFoundError("no PostgreSQL server binaries under /usr/lib/postgresql")
        self.bin = Path(found[-1]).parent
        self.root = Path(tempfile.mkdtemp(prefix="grag-pg-"))
        self.port = free_port()
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        self._as = []
        if os.geteuid() == 0:
            self._as = [shutil.which("runuser") or "runuser", "-u", "postgres", "--"]
            shutil.chown(self.root, "postgres")
        self._run("initdb", "-D", str(self.root / "data"), "-U", "postgres",
                  "--auth=trust", "-E", "UTF8", "--no-sync")

    def _run(self, tool: str, *args: str) -> None:
        subprocess.run([*self._as, str(self.bin / tool), *args], check=True,
                       capture_output=True, timeout=120)

    def start(self) -> None:
        options = (f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.root} "
                   "-c fsync=off")
        self._run("pg_ctl", "-D", str(self.root / "data"), "-l", str(self.root / "log"),
                  "-o", options, "-w", "-t", "60", "start")

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.root / "data"), "-m", mode, "-w", "-t", "60",
                  "stop")

    def cleanup(self) -> None:
        import shutil

        with contextlib.suppress(subprocess.CalledProcessError, subprocess.TimeoutExpired):
            self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)


@contextlib.contextmanager
def chroma_server(tmp: Path) -> Iterator[str]:
    """``chroma run`` from the installed chromadb package on a free port; yields its URL."""
    import shutil

    exe = shutil.which("chroma") or str(BIN / "chroma")
    if not Path(exe).exists():
        raise FileNotFoundError("the chroma CLI is not installed")
    port = free_port()
    with open(tmp / f"chroma-{port}.log", "wb") as out:
        proc = subprocess.Popen([exe, "run", "--path", str(tmp / "chroma-srv"), "--port",
                                 str(port)], stdout=out, stderr=subprocess.STDOUT,
                                env={"ANONYMIZED_TELEMETRY": "False", "PATH": "/usr/bin:/bin"})
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    break
                except OSError:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError("the Chroma server did not start") from None
                    time.sleep(0.1)
            yield f"http://127.0.0.1:{port}"
        finally:
            proc.terminate()
            proc.wait(timeout=15)
