"""`veil anonymize` replaces a previous run's files in --out as one set."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from veil.cli.main import main


def test_interrupted_swap_keeps_the_previous_run_whole(tmp_path: Path, monkeypatch) -> None:
    src = tmp_path / "t.csv"
    pd.DataFrame({"age": [30, 40, 50, 60], "city": list("abab")}).to_csv(src, index=False)
    pol = tmp_path / "p.yaml"
    pol.write_text("version: 1\ncolumns:\n  age: insensitive\n  city: insensitive\n")
    out = tmp_path / "out"
    assert main(["anonymize", str(src), "--policy", str(pol), "--out", str(out)]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert set(before) == {"t.csv", "report.json", "report.html"}

    # second run with other data; the second move of a new file into --out is interrupted
    pd.DataFrame({"age": [1, 2], "city": list("zz")}).to_csv(src, index=False)
    real = os.replace
    calls = {"new": 0}

    def flaky(a, b):
        staged = Path(a).parent.name
        if Path(b).parent == out and staged.startswith(".veil-") and "-old-" not in staged:
            calls["new"] += 1
            if calls["new"] == 2:
                raise KeyboardInterrupt
        return real(a, b)

    monkeypatch.setattr(os, "replace", flaky)
    rc = main(["anonymize", str(src), "--policy", str(pol), "--out", str(out)])
    monkeypatch.undo()
    assert rc != 0 and calls["new"] == 2  # interrupted (the CLI turns ^C into an exit code)
    after = {p.name: p.read_bytes() for p in out.iterdir()}
    assert after == before  # the old release with its own report, nothing new, no temp folder


def test_a_previous_runs_artifacts_do_not_outlive_their_release(tmp_path: Path) -> None:
    """A column mapping (or a PCA basis) written by an earlier run must not sit next to a new
    release made without it."""
    src = tmp_path / "t.csv"
    pd.DataFrame({"age": [30, 40, 50, 60], "city": list("abab")}).to_csv(src, index=False)
    pol = tmp_path / "p.yaml"
    pol.write_text(
        "version: 1\ncolumns:\n  age: insensitive\n"
        "  city: {role: insensitive, operator: {name: rename_columns, prefix: v}}\n"
    )
    out = tmp_path / "out"
    assert main(["anonymize", str(src), "--policy", str(pol), "--out", str(out)]) == 0
    assert (out / "column_mapping.csv").is_file()
    pol.write_text("version: 1\ncolumns:\n  age: insensitive\n  city: insensitive\n")
    (out / "notes.txt").write_text("mine")  # a file Veil did not write is left alone
    assert main(["anonymize", str(src), "--policy", str(pol), "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "notes.txt", "report.html", "report.json", "t.csv"
    ]  # fmt: skip
