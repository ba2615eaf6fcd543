"""Timing helpers shared by the benchmark scripts (best-of-N wall time and the load average)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any


def best_of(fn: Callable[[], Any], repeat: int) -> tuple[float, float, Any]:
    """Run ``fn`` ``repeat`` times and keep the fastest run.

    Parameters
    ----------
    fn : callable
        The work to time (no arguments).
    repeat : int
        Number of calls (at least 1).

    Returns
    -------
    tuple of (float, float, object)
        Best wall time in seconds (``time.perf_counter``), the CPU time (``time.process_time``)
        of that same run, and the result of the last call.  Wall and CPU come from one run, so
        they form a consistent pair.
    """
    if repeat < 1:
        raise ValueError("repeat must be at least 1")
    best, cpu, out = float("inf"), 0.0, None
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        out = fn()
        wall, c = time.perf_counter() - t0, time.process_time() - c0
        if wall < best:
            best, cpu = wall, c
    return best, cpu, out


def load_line() -> str:
    """The 1, 5 and 15 minute load averages as ``uptime`` prints them (``"0.52 0.61 0.70"``)."""
    a = os.getloadavg()
    return f"{a[0]:.2f} {a[1]:.2f} {a[2]:.2f}"
