"""Mondrian and NCP with numeric quasi-identifiers near the float64 / int64 limits.

``max - min`` of a column holding ``-1e308`` and ``1e308`` overflows to ``inf``: the NCP came
out NaN and, the normalized width being NaN, the column was never cut.  ``int64`` extremes
wrapped around (a negative span): one class for the whole table, reported with NCP 0.
The expected values here come from an exact (``fractions.Fraction``) reference formula and
from a plain float formula on the same data divided by a power of two.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.anonymity import mondrian, partition_ncp
from veil.errors import InputError

BIG = np.finfo(np.float64).max

# No overflow / invalid-value warnings may be hidden behind a finite result.
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


def _exact_ncp(df: pd.DataFrame, qi: list[str], labels: np.ndarray) -> Fraction:
    """NCP of Xu et al. (KDD 2006) in exact arithmetic: mean over cells of range / domain."""
    total = Fraction(0)
    for c in qi:
        vals = [
            Fraction(int(v)) if isinstance(v, (int, np.integer)) else Fraction(v)
            for v in df[c].tolist()
        ]
        span = max(vals) - min(vals)
        if span == 0:
            continue
        per_class: dict[int, list[Fraction]] = {}
        for lab, v in zip(labels.tolist(), vals):
            per_class.setdefault(lab, []).append(v)
        for members in per_class.values():
            total += len(members) * (max(members) - min(members)) / span
    return total / (len(df) * len(qi))


def _plain_ncp(df: pd.DataFrame, qi: list[str], labels: np.ndarray) -> float:
    """The same formula in plain float64 with pandas (valid when nothing overflows)."""
    parts = []
    for c in qi:
        g = df[c].groupby(labels)
        width = (g.transform("max") - g.transform("min")) / (df[c].max() - df[c].min())
        parts.append(width.to_numpy(dtype=np.float64))
    return float(np.mean(parts))


def _assert_k_anonymous(release: pd.DataFrame, qi: list[str], k: int) -> None:
    sizes = release.groupby(qi, dropna=False).size()
    assert sizes.min() >= k


def _assert_intervals_contain(original: pd.Series, released: pd.Series) -> None:
    for v, cell in zip(original.tolist(), released.tolist()):
        if cell.startswith("["):
            lo, hi = (float(x) for x in cell.strip("[]").split(","))
        else:
            lo = hi = float(cell)
        assert lo <= v <= hi


def _huge_frame(seed: int, n: int = 60) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    a = rng.choice([-BIG, -1e308, -1.7e308, 1e308, 1.7e308, BIG], n) * rng.uniform(0.5, 1.0, n)
    a[:2] = [-1e308, 1e308]
    return pd.DataFrame({"a": a, "b": rng.integers(0, 50, n).astype(np.float64), "y": np.arange(n)})


@pytest.mark.parametrize("relaxed", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ncp_finite_and_exact_near_float_max(seed: int, relaxed: bool) -> None:
    df = _huge_frame(seed)
    qi, k = ["a", "b"], 4
    res = mondrian(df, qi, k, relaxed=relaxed)
    _assert_k_anonymous(res.data, qi, k)
    _assert_intervals_contain(df["a"], res.data["a"])
    ncp = res.utility["ncp"]
    assert np.isfinite(ncp) and 0.0 <= ncp <= 1.0
    assert all(np.isfinite(v) and 0.0 <= v <= 1.0 for v in res.utility["column_ncp"].values())
    exact = float(_exact_ncp(df, qi, res.partitions))
    assert ncp == pytest.approx(exact, rel=1e-12, abs=1e-15)
    assert partition_ncp(df, qi, res.partitions) == pytest.approx(exact, rel=1e-12, abs=1e-15)


def test_huge_whole_floats_render_in_exponent_form() -> None:
    # whole floats beyond 2**53 used to print as integers: 1e308 as a 309-digit number
    df = pd.DataFrame({"a": [-1e308, -1e300, 1e300, 1e308] * 3, "y": np.arange(12)})
    res = mondrian(df, ["a"], 3)
    _assert_intervals_contain(df["a"], res.data["a"])
    assert max(len(c) for c in res.data["a"]) <= 2 * len(repr(-1.7976931348623157e308)) + 4
    ints = pd.DataFrame({"a": np.array([2**62, 2**62 + 1, 2**62 + 3] * 2, dtype=np.int64)})
    cells = mondrian(ints, ["a"], 2).data["a"].tolist()
    assert any(str(2**62 + 1) in c or str(2**62) in c for c in cells)  # ints stay exact


@pytest.mark.parametrize("shift", [1, 64, 900])
def test_scale_by_power_of_two_changes_nothing(shift: int) -> None:
    # Dividing a column by 2**shift is exact (no subnormals here), keeps the order of the
    # values and the ratios of their distances: same partitions, the same NCP to the bit.
    df = _huge_frame(3)
    small = df.assign(a=df["a"] / 2.0**shift)
    assert (small["a"] * 2.0**shift).equals(df["a"])
    qi, k = ["a", "b"], 3
    res = mondrian(df, qi, k)
    res_small = mondrian(small, qi, k)
    np.testing.assert_array_equal(res.partitions, res_small.partitions)
    assert res.utility["ncp"] == res_small.utility["ncp"]
    # and it is the NCP of the (overflow-free) scaled data by the plain formula
    assert res.utility["ncp"] == pytest.approx(_plain_ncp(small, qi, res.partitions), rel=1e-12)


def test_huge_range_column_is_cut() -> None:
    # The only QI spans -1e308 .. 1e308 with distinct values: strict Mondrian cuts at the
    # median while both halves keep k rows, so every class has k .. 2k - 1 rows (before the
    # fix the width was NaN, the column never cut and the whole table one class).
    rng = np.random.default_rng(5)
    a = np.unique(rng.uniform(-1.0, 1.0, 200)) * 1e308
    df = pd.DataFrame({"a": rng.permutation(a)})
    k = 5
    res = mondrian(df, ["a"], k)
    sizes = np.bincount(res.partitions)
    assert sizes.min() >= k and sizes.max() <= 2 * k - 1
    _assert_k_anonymous(res.data, ["a"], k)
    exact = float(_exact_ncp(df, ["a"], res.partitions))
    assert res.utility["ncp"] == pytest.approx(exact, rel=1e-12)
    assert res.utility["ncp"] < 0.05  # small classes of a dense column: small ranges


def test_widest_normalized_dimension_is_cut_first() -> None:
    # Rows 0-3 have b = 0..3, rows 4-7 b = 100..103; in both halves a takes -1e308, 1e308,
    # -0.9e308, 0.9e308.  Whichever column the root cuts (both have normalized width 1),
    # the next cut is on the other one, which is the widest in each half: cut on b first,
    # a still spans its whole domain (width 1 against b's 3/103); cut on a first (a < 0
    # against a > 0), b spans 102/103 against a's 0.05.  Either way the classes pair rows
    # by the sign of a within each b block.  With a's width NaN, a was never cut and the
    # classes paired neighbouring b values instead.
    a = [-1e308, 1e308, -0.9e308, 0.9e308]
    df = pd.DataFrame({"b": [0.0, 1.0, 2.0, 3.0, 100.0, 101.0, 102.0, 103.0], "a": a + a})
    for qi in (["b", "a"], ["a", "b"]):
        res = mondrian(df, qi, 2)
        classes = {frozenset(np.flatnonzero(res.partitions == c)) for c in set(res.partitions)}
        assert classes == {frozenset(s) for s in ({0, 2}, {1, 3}, {4, 6}, {5, 7})}
        exact = float(_exact_ncp(df, qi, res.partitions))
        assert res.utility["ncp"] == pytest.approx(exact, rel=1e-12)


def test_int64_extremes() -> None:
    i64 = np.iinfo(np.int64)
    vals = np.array([i64.min, i64.min + 1, -5, 0, 3, 7, i64.max - 1, i64.max] * 3, dtype=np.int64)
    df = pd.DataFrame({"x": vals})
    k = 3
    res = mondrian(df, ["x"], k)
    _assert_k_anonymous(res.data, ["x"], k)
    assert len(np.unique(res.partitions)) > 1  # was one class: the span wrapped around
    for v, cell in zip(vals.tolist(), res.data["x"].tolist()):
        lo, hi = (int(t) for t in cell.strip("[]").split(",")) if "," in cell else (int(cell),) * 2
        assert lo <= v <= hi
    exact = float(_exact_ncp(df, ["x"], res.partitions))
    assert np.isfinite(res.utility["ncp"])
    assert res.utility["ncp"] == pytest.approx(exact, rel=1e-12)


@pytest.mark.parametrize(
    ("values", "match"),
    [
        (pd.Series([1.0, np.nan, 2.0, 3.0]), "missing"),
        (pd.Series([1.0, np.inf, 2.0, 3.0]), "infinite"),
        (pd.Series([1.0, -np.inf, 2.0, 3.0]), "infinite"),
        (pd.Series([1.0, None, 2.0, 3.0], dtype="Float64"), "missing"),
        (pd.Series([1.0, 2.0, 3.0, np.inf], dtype=np.float32), "infinite"),
        (pd.Series([1 + 1j, 2, 3, 4]), "complex"),
    ],
)
def test_non_finite_qi_is_a_clear_error(values: pd.Series, match: str) -> None:
    df = pd.DataFrame({"x": values, "y": [1, 2, 3, 4]})
    with pytest.raises(InputError, match=match):
        mondrian(df, ["x"], 2)
    with pytest.raises(InputError, match=match):
        partition_ncp(df, ["x"], [0, 0, 1, 1])


def test_nan_from_masked_arithmetic_is_an_error() -> None:
    # 0/0 in a nullable Float64 column: NA, which must not be cut or rendered as a value
    s = pd.Series([0.0, 1.0, 2.0, 3.0], dtype="Float64") / pd.Series(
        [0.0, 1.0, 1.0, 1.0], dtype="Float64"
    )
    with pytest.raises(InputError, match="missing|NaN"):
        mondrian(pd.DataFrame({"x": s}), ["x"], 2)


@pytest.mark.parametrize("model", ["logistic", "forest"])
def test_classification_utility_near_float_max(model: str) -> None:
    from veil.anonymity import classification_utility

    # Interval midpoints of [1e308, 1.7e308] and training means overflowed to inf (and the
    # forest's float32 cast of the features overflowed); the built-in models must give
    # exactly the results of the same data divided by 2**1000, where nothing overflows.
    rng = np.random.default_rng(11)
    n = 200
    x = rng.uniform(0.5, 1.0, n) * 1.7e308
    z = rng.normal(size=n)
    y = ((x > 1.25e308) ^ (rng.uniform(size=n) < 0.1)).astype(int)
    df = pd.DataFrame({"x": x, "z": z, "y": y})
    small = df.assign(x=df["x"] / 2.0**1000)
    rel = mondrian(df, ["x"], 5).data
    rel_small = mondrian(small, ["x"], 5).data
    out = classification_utility(df, rel, "y", ["x", "z"], model=model)
    ref = classification_utility(small, rel_small, "y", ["x", "z"], model=model)
    assert out == ref
    assert out["original_accuracy"] > out["baseline_accuracy"]  # x was learned, not noise


_finite = st.floats(allow_nan=False, allow_infinity=False, width=64)


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(
        st.lists(_finite, min_size=2, max_size=12, unique=True),
        st.lists(st.integers(-(2**63), 2**63 - 1), min_size=2, max_size=12, unique=True),
        st.lists(st.integers(0, 2**64 - 1), min_size=2, max_size=12, unique=True),
    )
)
def test_normalized_positions_match_exact_arithmetic(values: list) -> None:
    from veil.anonymity._mondrian_encode import numeric_offsets

    if isinstance(values[0], float):
        vals = np.unique(np.array(values, dtype=np.float64))
    elif min(values) < 0 or max(values) < 2**63:
        vals = np.unique(np.array(values, dtype=np.int64))
    else:
        vals = np.unique(np.array(values, dtype=np.uint64))
    off = numeric_offsets(vals)
    assert np.isfinite(off).all() and (np.diff(off) >= 0).all()
    exact = [Fraction(int(v)) if vals.dtype.kind in "iu" else Fraction(v) for v in vals.tolist()]
    span = exact[-1] - exact[0]
    for o, e in zip(off.tolist(), exact):
        # two roundings (the distance, the ratio) and halving a subnormal: a few ulp of 1
        assert o / off[-1] == pytest.approx(float((e - exact[0]) / span), rel=1e-15, abs=1e-300)
