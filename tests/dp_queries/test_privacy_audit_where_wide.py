"""Audit: a WHERE comparison of numbers beyond 2^53 must not follow the columns' dtypes.

numpy compares an ``int64`` column with a ``float64`` one (and reads a nullable ``Int64``
column as ``float64``) after rounding the integers to float64, so ``2^53 + 1 = 2^53`` held for
numeric dtypes; once one person's text cell made either column ``object``, the cells were
compared one by one as Python values, exactly, and the same rows gave ``2^53 + 1 <> 2^53``.
``COUNT(*) WHERE a = b`` was then 100 on ``D`` and 0 on ``D' = D + one person`` whose ``b`` is
text: the other persons' rows followed that person's cell, an unbounded privacy loss.  At
epsilon 1e4 the discrete Laplace noise is 0 except with probability about ``2 e^-10000``, so
the releases are the exact counts (as in ``test_privacy_audit_canonical``); the audit at
epsilon 1 certifies the loss with the shared Clopper-Pearson helper.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.dp.frame import PrivateFrame
from veil.dp.sql import evaluate, parse_condition

from ._neighbours import PERSON, certified_excess

BIG = 2**53
N = 100


def _table(extra: dict[str, object] | None = None) -> pd.DataFrame:
    """``N`` persons with ``a = 2^53 + 1`` (int64), ``b = 2^53`` (float64), ``c = 2^53 + 1``
    (nullable Int64); with ``extra`` one more person with those cells."""
    df = pd.DataFrame(
        {
            "pid": np.arange(N),
            "a": np.full(N, BIG + 1, dtype=np.int64),
            "b": np.full(N, float(BIG)),
            "c": pd.array([BIG + 1] * N, dtype="Int64"),
        }
    )
    if extra is None:
        return df
    return pd.concat([df, pd.DataFrame([{"pid": PERSON, **extra}])], ignore_index=True)


def _count(df: pd.DataFrame, cond: str, epsilon: float, seed: int) -> int:
    pf = PrivateFrame(df, privacy_unit="pid", accountant=False, random_state=seed)
    sql = f"SELECT COUNT(*) AS n FROM data WHERE {cond}"
    return int(pf.sql(sql, epsilon=epsilon)["n"].iloc[0])


# exact answers over the N persons (a = c = 2^53 + 1 > b = 2^53); the added person's text
# cells may match among themselves, so D' may count that one row more
CONDS = {
    "a = b": 0,
    "a <> b": N,
    "a > b": N,
    "b >= a": 0,
    "c = b": 0,
    "c > b": N,
    "c = 9007199254740992": 0,
}


@pytest.mark.filterwarnings("ignore::veil.errors.InsecureRandomWarning")
@pytest.mark.parametrize("cond", sorted(CONDS))
def test_other_persons_rows_do_not_follow_one_text_cell(cond: str) -> None:
    d = _table()
    d2 = _table({"a": "z", "b": "x", "c": "y"})  # text in every column: all become object
    assert d["a"].dtype == np.int64 and d["b"].dtype == np.float64  # the premise
    assert d2["a"].dtype == object and d2["b"].dtype == object
    n_d, n_d2 = _count(d, cond, 1e4, 3), _count(d2, cond, 1e4, 3)
    assert n_d == CONDS[cond] and abs(n_d2 - n_d) <= 1, (cond, n_d, n_d2)  # only its own row


@pytest.mark.filterwarnings("ignore::veil.errors.InsecureRandomWarning")
def test_where_audit_certifies_no_excess_at_epsilon_one() -> None:
    d, d2 = _table(), _table({"a": "z", "b": "x", "c": "y"})
    xs = [_count(d, "a = b", 1.0, s) for s in range(150)]
    ys = [_count(d2, "a = b", 1.0, 1000 + s) for s in range(150)]
    assert certified_excess(xs, ys, 1.0) <= 0.0 and certified_excess(ys, xs, 1.0) <= 0.0


@pytest.mark.parametrize("seed", range(5))
def test_numeric_and_object_columns_give_the_same_rows(seed: int) -> None:
    """Random integers and floats around +-2^53 .. 2^62: every comparison row by row as on
    the ``object`` columns (cell by cell, exact) whatever the dtypes."""
    rng = np.random.default_rng(seed)
    n = 400
    scale = rng.choice([BIG, 2**60], n)
    ints = (scale + rng.integers(-3, 4, n)) * rng.choice([-1, 1], n)
    floats = np.where(rng.random(n) < 0.5, ints.astype(np.float64), rng.normal(0, 1e16, n))
    floats[rng.random(n) < 0.1] = np.nan
    num = pd.DataFrame(
        {"i": ints.astype(np.int64), "f": floats, "k": pd.array(ints.tolist(), dtype="Int64")}
    )
    num["t"] = [str(v) for v in (ints + rng.integers(-1, 2, n))]  # text: compared exactly
    obj = num.astype(object)
    for op in ("=", "<>", "<", "<=", ">", ">="):
        for cond in (
            f"i {op} f", f"k {op} f", f"k {op} i", f"f {op} 9007199254740993", f"k {op} t",
            f"t {op} f",
        ):  # fmt: skip
            e = parse_condition(cond)
            assert evaluate(e, num).tolist() == evaluate(e, obj).tolist(), cond
