"""Regressions from the Mondrian/MDAV edge-case audit: values near the float64 limit (MDAV)
and unsigned integers of 2**63 and above (Mondrian)."""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
import pytest

from veil.anonymity import mdav, mondrian


def _run_with_deadline(fn, seconds: float = 60.0):
    """Run ``fn`` in a daemon thread; fail instead of hanging (the MDAV bug was an endless loop)."""
    out: dict = {}
    t = threading.Thread(target=lambda: out.setdefault("r", fn()), daemon=True)
    t.start()
    t.join(seconds)
    assert "r" in out, "did not finish"
    return out["r"]


def test_mdav_values_near_float_limit() -> None:
    # |x| ~ 1e308: the column mean overflowed to inf, distances became NaN and no group was
    # ever formed (endless loop)
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.choice([-1e308, 1e308, 0.0, 1.7e308], 40), "y": np.arange(40)})
    res = _run_with_deadline(lambda: mdav(df, ["a"], 3))
    rel = res.data
    assert np.isfinite(rel["a"]).all()
    assert rel.groupby("a").size().min() >= 3
    pd.testing.assert_series_equal(rel["y"], df["y"])
    # group means lie within the group's values; the column mean is preserved (relatively)
    for g in np.unique(res.partitions):
        m = res.partitions == g
        lo, hi, v = df["a"][m].min(), df["a"][m].max(), rel["a"][m].iloc[0]
        tol = 1e-12 * max(abs(lo), abs(hi))  # rounding of the mean
        assert lo - tol <= v <= hi + tol
    assert np.isclose((rel["a"] / 1e300).mean(), (df["a"] / 1e300).mean(), rtol=1e-9, atol=1e-6)


def test_mdav_small_values_unchanged_by_scaling() -> None:
    df = pd.DataFrame({"age": [20, 22, 40, 41, 60, 64], "w": [1.5, 2.5, 3.0, 9.0, 1.0, 2.0]})
    res = mdav(df, ["age", "w"], 2)
    for g in np.unique(res.partitions):
        m = res.partitions == g
        assert np.allclose(res.data.loc[m, ["age", "w"]], df.loc[m, ["age", "w"]].mean())


def test_mondrian_uint64_above_int64_range() -> None:
    # uint64 values >= 2**63 were cast to int64 (negative), so intervals did not contain the
    # values they generalize
    vals = np.uint64(2**63) + np.arange(30, dtype=np.uint64) * np.uint64(2**50)
    df = pd.DataFrame({"u": vals, "y": np.arange(30)})
    rel = mondrian(df, ["u"], 3).data
    assert rel.groupby("u").size().min() >= 3
    for v, iv in zip(df["u"], rel["u"]):
        lo, hi = (int(x) for x in iv.strip("[]").split(","))
        assert 2**63 <= lo <= int(v) <= hi
    assert rel["u"].nunique() > 1  # split, not one class for everything


def test_non_text_column_names_get_a_clear_hint() -> None:
    from veil.errors import InputError

    df = pd.DataFrame({0: [1, 2, 3, 4], "b": [1, 1, 2, 2]})
    with pytest.raises(InputError, match=r"rename them, e.g. df.rename\(columns=str\)"):
        mondrian(df, [0, "b"], 2)
    assert mondrian(df.rename(columns=str), ["0", "b"], 2).data.shape == (4, 2)
