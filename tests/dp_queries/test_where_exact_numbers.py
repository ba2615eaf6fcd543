"""WHERE on numeric columns equals the exact comparison of each cell's value, whatever path
numpy's vectorized comparison takes (the exact re-check of rows beyond 2^53 is skipped only
where no operand can be rounded: floats against floats or small integers, int64 against
int64)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from veil.dp._canon import canonical, compare
from veil.dp.sql import evaluate, parse_condition

T = 2**53
VALUES = [0, 1, -1, T - 1, T, T + 1, T + 2, -T - 1, 2**62 + 1, -(2**63)]
LITERALS = ["0", "1.5", str(T), str(T + 1), str(-T - 1), "9007199254740992.0", "4.5e18"]


def _columns() -> dict[str, pd.Series]:
    ints = pd.Series(VALUES, dtype="int64")
    return {
        "i": ints,
        "f": ints.astype("float64"),
        "n": pd.Series([*VALUES, None], dtype="Int64"),
        "u": pd.Series([v for v in VALUES if v >= 0], dtype="uint64"),
        "o": pd.Series([*VALUES, 0.5, None], dtype=object),
        "b": pd.Series([True, False, True]),
    }


def _exact(left: list, op: str, right: list) -> np.ndarray:
    out = [compare(canonical(a), op, canonical(b)) for a, b in zip(left, right)]
    return np.array([v and k for v, k in out], dtype=bool)


@pytest.mark.parametrize("op", ["=", "<", ">=", "<>"])
def test_column_against_literal_is_exact(op: str) -> None:
    for name, s in _columns().items():
        df = pd.DataFrame({"x": s})
        for lit in LITERALS:
            got = evaluate(parse_condition(f"x {op} {lit}"), df)
            want = _exact(s.tolist(), op, [parse_condition(f"x = {lit}").right.value] * len(s))
            assert got.tolist() == want.tolist(), (name, op, lit)


@pytest.mark.parametrize("op", ["=", "<", ">="])
def test_column_against_column_is_exact(op: str) -> None:
    cols = _columns()
    for a, b in itertools.product(["i", "f", "n", "o"], repeat=2):
        m = min(len(cols[a]), len(cols[b]))
        left = cols[a].iloc[:m].reset_index(drop=True)
        right = cols[b].iloc[:m].iloc[::-1].reset_index(drop=True)
        df = pd.DataFrame({"x": left, "y": right})
        got = evaluate(parse_condition(f"x {op} y"), df)
        assert got.tolist() == _exact(left.tolist(), op, right.tolist()).tolist(), (a, b, op)
