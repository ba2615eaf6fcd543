"""``veil query`` prints its title and caption as whole lines, not wrapped to the table width."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from veil.cli.main import main

pytestmark = pytest.mark.filterwarnings("ignore::veil.errors.InsecureRandomWarning")


@pytest.fixture()
def narrow(tmp_path: Path) -> Path:
    rows = [(i, "big") for i in range(300)] + [(1000, "rare")]
    path = tmp_path / "t.csv"
    pd.DataFrame(rows, columns=["pid", "city"]).to_csv(path, index=False)
    return path


def _line_with(out: str, start: str) -> str:
    lines = [ln.rstrip() for ln in out.splitlines() if ln.startswith(start)]
    assert len(lines) == 1, out
    return lines[0]


def test_caption_is_one_unwrapped_line(narrow: Path, capsys) -> None:
    rc = main(
        ["query", str(narrow), "SELECT city, COUNT(*) FROM data GROUP BY city", "--epsilon", "2",
         "--delta", "1e-6", "--privacy-unit", "pid", "--seed", "3"]
    )  # fmt: skip
    assert rc == 0
    out = capsys.readouterr().out
    caption = _line_with(out, "privacy unit: pid")
    assert "± = 95% CI half-width" in caption and "groups kept if noisy persons >=" in caption
    assert len(caption) > max(len(ln) for ln in out.splitlines() if "│" in ln)  # wider than table
    assert _line_with(out, "veil query:").endswith("spent")


def test_dry_run_caption_is_one_line(narrow: Path, capsys) -> None:
    rc = main(
        ["query", str(narrow), "SELECT COUNT(*) FROM data", "--epsilon", "1", "--dry-run"]
    )  # fmt: skip
    assert rc == 0
    out = capsys.readouterr().out
    assert _line_with(out, "privacy unit: row").endswith("nothing released")
