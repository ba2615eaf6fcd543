"""``veil query`` prints group labels and column names as text, not as Rich markup."""

from __future__ import annotations

from pathlib import Path

import pytest

from veil.cli.main import main


def test_group_labels_with_brackets_are_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "d.csv"
    rows = [f"{g},{i}" for i in range(200) for g in ("[/USD]", "[bold]b")]
    data.write_text("grp [x],v\n" + "\n".join(rows) + "\n")
    sql = "SELECT `grp [x]`, COUNT(*) FROM data GROUP BY `grp [x]`"
    keys = "grp [x]=[/USD],[bold]b"
    # the released group "[/USD]" failed the output (MarkupError) after the budget was spent
    assert main(["query", str(data), sql, "--epsilon", "1", "--keys", keys]) == 0
    out = capsys.readouterr().out
    assert "[/USD]" in out and "[bold]b" in out and "grp [x]" in out


def test_backslashes_in_labels_are_printed_as_they_are(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # markup's escape() showed a trailing backslash twice ("a\" as "a\\") and dropped the
    # one before a bracket ("x\[" as "x[")
    data = tmp_path / "d.csv"
    rows = [f"{g},{i}" for i in range(200) for g in ("a\\", "x\\[")]
    data.write_text("grp,v\n" + "\n".join(rows) + "\n")
    sql = "SELECT grp, COUNT(*) FROM data GROUP BY grp"
    assert main(["query", str(data), sql, "--epsilon", "1", "--keys", "grp=a\\,x\\["]) == 0
    cells = [c.strip() for line in capsys.readouterr().out.splitlines() for c in line.split("│")]
    assert "a\\" in cells and "x\\[" in cells
    assert "a\\\\" not in cells and "x[" not in cells
