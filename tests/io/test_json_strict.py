"""Machine-readable outputs are strict JSON: a non-finite number is written ``null``.

Python's ``json`` writes ``NaN`` / ``Infinity``, which parsers outside Python (JavaScript's
``JSON.parse``, ``jq``, Java) reject: ``veil scan --json`` on a column holding ``inf`` printed
``"maximum": Infinity``, and report.json / ``veil check --json`` could hold NaN metrics.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from veil.cli.main import main
from veil.io import json_text, write_json


def _strict(text: str) -> Any:
    def refuse(name: str) -> None:
        raise ValueError(f"not JSON: {name}")

    return json.loads(text, parse_constant=refuse)


def test_json_text_writes_non_finite_numbers_as_null() -> None:
    obj = {
        "nan": float("nan"),
        "inf": np.float64("inf"),
        "f32": np.float32("-inf"),
        "array": np.array([1.5, np.nan]),
        "nested": [{"x": (2.0, float("inf"))}, {1.0, float("nan")}],
        "finite": np.float32(0.25),
        "int": np.int64(3),
    }
    got = _strict(json_text(obj))
    assert got["nan"] is None and got["inf"] is None and got["f32"] is None
    assert got["array"] == [1.5, None]
    assert got["nested"][0] == {"x": [2.0, None]}
    assert sorted(got["nested"][1], key=lambda v: v is None) == [1.0, None]
    assert got["finite"] == 0.25 and got["int"] == 3


def test_non_finite_dict_keys_are_texts() -> None:
    """A value counted under its own key (NaN, inf) must not fail the write (allow_nan=False
    refused the float key NaN, which json would otherwise write as the non-JSON-looking key
    'NaN'); it is its text."""
    got = _strict(json_text({float("nan"): 2, np.float64("-inf"): 1, 1.5: 3}))
    assert got == {"nan": 2, "-inf": 1, "1.5": 3}


def test_write_json_is_strict(tmp_path: Path) -> None:
    path = write_json({"risk": float("nan"), "name": "Ünïcode"}, tmp_path / "r.json")
    assert _strict(path.read_text(encoding="utf-8")) == {"risk": None, "name": "Ünïcode"}


def test_scan_json_with_infinite_value_is_strict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "t.csv"
    data.write_text("a,b\n,1\n,2\n,inf\n", encoding="utf-8")
    assert main(["scan", str(data), "--json"]) == 0
    cols = {c["column"]: c for c in _strict(capsys.readouterr().out)["columns"]}
    assert cols["b"]["minimum"] == 1.0 and cols["b"]["maximum"] is None
