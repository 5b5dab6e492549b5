"""Thread policy of the local model: one llama.cpp thread per core other processes leave free."""

from __future__ import annotations

import math
import os

THREADS_ENV = "GROUNDED_RAG_THREADS"
"""Environment variable that fixes the llama.cpp thread count (it always wins)."""


def cpu_cores() -> int:
    """Return the number of CPU cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def threads_for(cores: int, load: float) -> int:
    """llama.cpp threads for ``cores`` usable cores when other processes keep ``load`` busy.

    The policy: one thread per core that is free. A core counts as taken by others once
    their load reaches half of it (``load`` rounded half up), so the answer is
    ``cores - round(load)``, never below 1 and never above ``cores``. The same count is used
    for generation and for prompt (batch) processing.

    Why: llama.cpp's threads meet at a barrier after every operation, so one thread that
    shares its core with a busy process holds all the others back; on 2 shared cores,
    1 thread was measured 2x faster than 2. A free core is worth a thread, a taken one
    costs one. ``$GROUNDED_RAG_THREADS`` (or ``n_threads=``) overrides the policy.

    Examples:
        >>> threads_for(2, 0.1), threads_for(2, 0.6), threads_for(2, 1.0), threads_for(2, 7.0)
        (2, 1, 1, 1)
        >>> threads_for(8, 2.4), threads_for(0, 0.0)
        (6, 1)
    """
    cores = max(1, int(cores))
    load = float(load)
    if not math.isfinite(load):  # unknown or absurd: as if every core were taken
        return 1
    taken = int(max(0.0, load) + 0.5)
    return max(1, min(cores, cores - taken))


def explicit_threads() -> int | None:
    """``$GROUNDED_RAG_THREADS`` as a positive int, or None when unset, empty or invalid."""
    try:
        value = int(os.environ.get(THREADS_ENV, "") or 0)
    except ValueError:
        return None
    return value if value > 0 else None
