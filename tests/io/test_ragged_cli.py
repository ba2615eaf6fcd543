"""The commands that read a table refuse a ragged row in one line, exit 2, quoting no cell."""

from __future__ import annotations

from pathlib import Path

import pytest

from veil.cli.main import main

SENTINEL = "SENTINEL-7731"


def _table(tmp_path: Path, bad: str) -> Path:
    p = tmp_path / "t.csv"
    rows = [f"{20 + i},{'F' if i % 2 else 'M'},a{i % 3}" for i in range(20)]
    rows[7] = bad  # line 9
    p.write_text("age,sex,g\n" + "\n".join(rows) + "\n")
    return p


def _commands(tmp_path: Path, table: Path) -> dict[str, list[str]]:
    policy = tmp_path / "policy.yaml"
    policy.write_text("columns:\n  sex: insensitive\n  age: insensitive\n  g: insensitive\n")
    return {
        "anonymize": [
            "anonymize",
            str(table),
            "--policy",
            str(policy),
            "--out",
            str(tmp_path / "out"),
        ],
        "check": ["check", str(table), "--qi", "age,sex", "--k", "2"],
        "scan": ["scan", str(table)],
        "query": ["query", str(table), "SELECT COUNT(*) FROM data", "--epsilon", "1"],
    }


@pytest.mark.parametrize("command", ["anonymize", "check", "scan", "query"])
@pytest.mark.parametrize(("bad", "found"), [(f"27,{SENTINEL}", 2), (f"27,F,{SENTINEL},x", 4)])
def test_ragged_row_one_line_exit_2(tmp_path, capsys, monkeypatch, command, bad, found):
    import veil.dp.frame

    def no_frame(*_a, **_k):  # veil query must refuse the file before any budget is set up
        raise AssertionError("PrivateFrame built from a ragged table")

    monkeypatch.setattr(veil.dp.frame, "PrivateFrame", no_frame)
    table = _table(tmp_path, bad)
    rc = main(_commands(tmp_path, table)[command])
    cap = capsys.readouterr()
    text = cap.out + cap.err
    assert rc == 2, text
    lines = text.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("veil: error: "), text
    assert "t.csv" in text and "line 9" in text and f"found {found}" in text, text
    assert SENTINEL not in text and "Traceback" not in text
