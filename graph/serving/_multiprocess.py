"""Metrics shared by several worker processes: the directory they write to and its reading.

See :mod:`grounded_rag.serving.metrics` for how prometheus-client's multiprocess mode adds
the workers' values up.
"""

from __future__ import annotations

import glob
import os
import shutil
import tempfile

from prometheus_client import CollectorRegistry, generate_latest

MULTIPROCESS_ENV = "PROMETHEUS_MULTIPROC_DIR"
"""prometheus-client's variable: the directory a server's processes share their metrics in."""


def multiprocess_dir() -> str | None:
    """The directory this process shares its metrics through, or None (a process of its own).

    prometheus-client picks its value store when it is first imported: only a process that
    had ``$PROMETHEUS_MULTIPROC_DIR`` set by then writes its values to that directory.
    """
    from prometheus_client import values

    path = os.environ.get(MULTIPROCESS_ENV) or os.environ.get(MULTIPROCESS_ENV.lower())
    if not path or values.ValueClass is values.MutexValue:
        return None
    return path


def _pid_of(path: str) -> int | None:
    """The process id in a metrics file name (``gauge_livesum_123.db`` -> 123)."""
    stem = os.path.basename(path).removesuffix(".db")
    try:
        return int(stem.rsplit("_", 1)[1])
    except (IndexError, ValueError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive
    return True


def sweep_dead_processes(path: str) -> list[int]:
    """Remove the live gauges of processes that are gone (a killed worker); their ids."""
    from prometheus_client import multiprocess

    dead = sorted({pid for f in glob.glob(os.path.join(path, "gauge_live*_*.db"))
                   if (pid := _pid_of(f)) is not None and not _alive(pid)})
    for pid in dead:
        multiprocess.mark_process_dead(pid, path)
    return dead


def render_multiprocess(path: str) -> bytes:
    """The exposition of every process's values in ``path`` (dead workers' gauges swept)."""
    from prometheus_client.multiprocess import MultiProcessCollector

    sweep_dead_processes(path)
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=path)
    return generate_latest(registry)


def clean_multiprocess_dir(path: str | None = None) -> tuple[str, bool]:
    """An empty metrics directory for one server, before any of its processes writes there.

    ``path`` (else a new temporary directory) is created if needed and emptied of metric
    files (``*.db``) a previous server left. Returns the directory and whether it was made
    here (then the caller removes it when the server stops).
    """
    if path is None:
        return tempfile.mkdtemp(prefix="grounded-rag-metrics-"), True
    os.makedirs(path, exist_ok=True)
    for f in glob.glob(os.path.join(path, "*.db")):
        os.remove(f)
    return path, False


def remove_multiprocess_dir(path: str) -> None:
    """Remove a metrics directory made by :func:`clean_multiprocess_dir`."""
    shutil.rmtree(path, ignore_errors=True)
