"""Without --debug the CLI prints one line per error and never a cell value of the input.

Sentinel strings are planted in the input; the tests check stdout + stderr of a failing run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from veil.cli.main import INTERNAL_ERROR_STATUS, main

SENTINEL = "SENTINEL-7731"


def _run(capsys, args: list[str]) -> tuple[int, str]:
    rc = main(args)
    cap = capsys.readouterr()
    return rc, cap.out + cap.err


def _table(tmp_path: Path) -> Path:
    p = tmp_path / "t.csv"
    rows = [f"{20 + i},{'F' if i % 2 else 'M'},a{i % 3}" for i in range(20)]
    rows[7] = f"{SENTINEL},F,{SENTINEL}"
    p.write_text("age,sex,g\n" + "\n".join(rows) + "\n")
    return p


@pytest.mark.parametrize(
    "columns",
    [
        # a text cell in a numeric operator's column
        "  age: {role: insensitive, operator: {name: noise, scale: 1.0}}\n  g: insensitive\n",
        # a value missing from an (inline) hierarchy
        "  age: insensitive\n  g: {role: quasi, hierarchy: {a0: ['*'], a1: ['*'], a2: ['*']}}\n",
    ],
)
def test_anonymize_errors_do_not_echo_cells(tmp_path, capsys, columns):
    policy = tmp_path / "policy.yaml"
    policy.write_text("columns:\n  sex: insensitive\n" + columns)
    args = ["anonymize", str(_table(tmp_path)), "--policy", str(policy)]
    rc, text = _run(capsys, [*args, "--out", str(tmp_path / "out")])
    assert rc == 2, text
    lines = text.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("veil: error: "), text
    assert SENTINEL not in text and "Traceback" not in text


def test_internal_error_is_one_line_without_its_text(tmp_path, capsys, monkeypatch):
    import veil.deid

    def boom(*_a, **_k):
        raise ValueError(f"could not convert string to float: '{SENTINEL}'")

    monkeypatch.setattr(veil.deid, "scan", boom)
    table = _table(tmp_path)
    rc, text = _run(capsys, ["scan", str(table)])
    assert rc == INTERNAL_ERROR_STATUS
    lines = text.strip().splitlines()
    assert len(lines) == 1 and "internal error (ValueError) in veil scan" in lines[0], text
    assert SENTINEL not in text and "Traceback" not in text
    # --debug is the one place the exception chain (and its text) is shown
    rc, text = _run(capsys, ["--debug", "scan", str(table)])
    assert rc == INTERNAL_ERROR_STATUS and "Traceback" in text and SENTINEL in text
