"""The benchmark scripts still run (a small, fast configuration of each).

Benchmarks are not run by CI at full size (they need the peers and quiet cores), so a script
can rot unseen: ``benchmarks/deid.py`` failed for a session after placeholder keys were
refused, and ``benchmarks/scan_accuracy.py`` when a peer installed a top-level ``tests``
package.  Each script that can run without the peers (it skips a peer that is not installed)
runs here in its smallest configuration; the ones that take more than a few seconds are slow
tests.  The ML scripts (``ml.py``, ``ml_pca.py``, ``kmeans_datasets.py``, ``ml_lr_share.py``,
``ml_nb_diagnose.py``) compare with diffprivlib on every line and need it, and
``dp_quantile_sweep.py`` compares with OpenDP on every line: they are not here.
Timings are not checked: they belong to the benchmarks themselves.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_TORCH = importlib.util.find_spec("torch") is not None

FAST = [
    ["deid.py", "--quick", "--rows", "5000", "--no-trace"],
    ["scan_accuracy.py"],
    ["io_read.py", "--rows", "20000", "--repeat", "1"],
    ["_mondrian_bench.py", "--quick"],
    ["dp.py", "--quick"],
    ["dp_mechanisms.py", "--quick"],
    ["dp_tools_accuracy.py", "--quick"],
    ["crypto.py", "--quick"],
]
SLOW = [
    ["anonymity.py", "--quick"],
    ["accountants.py", "--quick"],
    ["dpsgd.py", "--quick"],
]


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / args[0]), *args[1:]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.mark.parametrize("args", FAST, ids=lambda a: a[0])
def test_benchmark_runs(args: list[str]) -> None:
    done = _run(args)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip(), "the script printed nothing"


@pytest.mark.slow
@pytest.mark.parametrize("args", SLOW, ids=lambda a: a[0])
def test_slow_benchmark_runs(args: list[str]) -> None:
    if args[0] == "dpsgd.py" and not _TORCH:
        pytest.skip("needs the optional torch extra")
    done = _run(args)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip(), "the script printed nothing"
