"""`veil ... | head`: a reader that stops early is not an error.

The read end of the pipe is closed before the command starts, so every write to stdout fails
with ``EPIPE`` (deterministically, unlike a real ``head``).  The command must stop quietly with
status 141 (what a shell reports for a tool killed by ``SIGPIPE``), not print
``veil: error: Broken pipe`` with the user-error status 2, nor fail in the interpreter's final
flush.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from veil.cli.main import BROKEN_PIPE_STATUS


@pytest.mark.parametrize(
    "args",
    [
        ["check", "--qi", "Age,County", "--k", "5"],  # text printed line by line
        ["scan", "--json"],  # one JSON document, flushed at the end
    ],
    ids=["check", "scan-json"],
)
def test_closed_stdout_pipe_stops_quietly(insurance_csv: Path, args: list[str]) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "veil", args[0], str(insurance_csv), *args[1:]],
            stdout=write_end,
            stderr=subprocess.PIPE,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert proc.stderr.decode() == ""
    assert proc.returncode == BROKEN_PIPE_STATUS == 141


def test_closed_stdout_is_not_a_traceback(insurance_csv: Path) -> None:
    """``veil check ... >&-``: Python starts with ``sys.stdout = None``; printing is then a
    no-op, and the final flush must not turn it into an ``AttributeError`` traceback."""
    args = ["check", str(insurance_csv), "--qi", "Age,County", "--k", "5"]
    with_stdout = subprocess.run(
        [sys.executable, "-m", "veil", *args], capture_output=True, timeout=120
    )
    cmd = " ".join(f"'{a}'" for a in [sys.executable, "-m", "veil", *args])
    proc = subprocess.run(["bash", "-c", f"exec {cmd} >&-"], stderr=subprocess.PIPE, timeout=120)
    assert "Traceback" not in proc.stderr.decode()
    assert proc.returncode == with_stdout.returncode  # the check's own status


def test_closed_stdout_json_output_is_not_a_traceback(insurance_csv: Path) -> None:
    """``veil scan --json >&-``: ``json.dump`` to ``sys.stdout = None`` used to raise an
    ``AttributeError`` traceback; the output is discarded like ``print``'s and the scan's
    status kept."""
    cmd = " ".join(f"'{a}'" for a in [sys.executable, "-m", "veil", "scan", str(insurance_csv)])
    proc = subprocess.run(
        ["bash", "-c", f"exec {cmd} --json >&-"], stderr=subprocess.PIPE, timeout=120
    )
    assert proc.stderr.decode() == ""
    assert proc.returncode == 0


def test_closed_stderr_runs_and_keeps_stdout_clean(tmp_path: Path) -> None:
    """``veil anonymize ... 2>&-``: ``sys.stderr`` is None; the progress check's
    ``sys.stderr.isatty()`` raised (exit 1, no release, no message), and ``print(...,
    file=sys.stderr)`` with ``file=None`` writes to stdout, mixing warnings into the output."""
    (tmp_path / "a.csv").write_text("age,inc\n30,1\n40,2\n50,3\n")
    (tmp_path / "p.yaml").write_text(
        "version: 1\ndefault_role: insensitive\ncolumns:\n  inc:\n    role: insensitive\n"
        "    operator: {name: top_bottom_code, top_percentile: 90}\n"  # warns
    )
    args = [sys.executable, "-m", "veil", "anonymize", "--policy", "p.yaml", "--out", "o", "a.csv"]
    cmd = " ".join(f"'{a}'" for a in args)
    open_ = subprocess.run(args, cwd=tmp_path, capture_output=True, timeout=120)
    assert open_.returncode == 0 and b"veil: warning" in open_.stderr  # the warning exists
    proc = subprocess.run(
        ["bash", "-c", f"exec {cmd} 2>&-"], cwd=tmp_path, stdout=subprocess.PIPE, timeout=120
    )
    assert proc.returncode == 0 and (tmp_path / "o" / "a.csv").exists()
    assert b"veil: warning" not in proc.stdout and proc.stdout.startswith(b"release:")
