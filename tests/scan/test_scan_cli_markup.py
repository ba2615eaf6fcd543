"""Column names reach the terminal as text, not as Rich markup (``veil scan``, ``anonymize``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from veil.cli import _anonymize
from veil.cli.main import main

HEADER = "weight [kg],income [/USD],[bold]name\n"


def test_scan_prints_bracketed_headers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "d.csv"
    data.write_text(HEADER + "70,100,Ann\n80,200,Bob\n90,300,Cy\n")
    # "[/USD]" failed the scan with a MarkupError (an internal error); "[kg]" was swallowed
    assert main(["scan", str(data)]) == 0
    out = capsys.readouterr().out
    assert "weight [kg]" in out and "income [/USD]" in out and "[bold]name" in out


def test_anonymize_progress_shows_bracketed_headers(monkeypatch: pytest.MonkeyPatch) -> None:
    """``veil anonymize``'s progress line names each step's column ("round income [/USD]"):
    drawn as markup, such a name failed the run with a MarkupError on a terminal."""
    monkeypatch.setattr(_anonymize, "_use_progress", lambda: True)
    monkeypatch.setenv("TTY_INTERACTIVE", "1")  # Rich draws the live progress bar
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    with _anonymize._progress() as tick:
        assert tick is not None
        tick("round income [/USD]", 0, 2)  # drawn when the bar closes
