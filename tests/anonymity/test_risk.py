"""Re-identification risk measures against direct pandas computations."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.anonymity import check, risk
from veil.anonymity._risk import class_size_histogram, risk_summary, zayatz_uniqueness
from veil.errors import ConfigError


def _table(seed, n=500):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {"a": rng.integers(0, 6, n), "b": rng.choice(list("xyz"), n), "c": rng.integers(0, 4, n)},
        index=rng.permutation(n) * 2,
    )


@pytest.mark.parametrize("seed", range(3))
def test_prosecutor_and_uniqueness(seed):
    df = _table(seed)
    r = risk(df, ["a", "b", "c"], threshold=0.1)
    size = df.groupby(["a", "b", "c"])["a"].transform("size")
    assert r["prosecutor"]["highest"] == pytest.approx(float((1 / size).max()))
    assert r["prosecutor"]["average"] == pytest.approx(float((1 / size).mean()))
    assert r["prosecutor"]["records_at_risk"] == pytest.approx(float((1 / size > 0.1).mean()))
    assert r["sample_uniqueness"] == pytest.approx(float((size == 1).mean()))
    assert r["marketer"] == pytest.approx(float((1 / size).mean()))
    assert r["journalist"] is None and r["population_uniqueness"] is None
    assert sum(b["records"] for b in r["class_sizes"]) == len(df)


def test_journalist_with_population():
    df = _table(1, 200)
    pop = pd.concat([df, _table(9, 3000)], ignore_index=True)
    r = risk(df, ["a", "b"], population=pop, threshold=0.05)
    key = ["a", "b"]
    psize = df[key].merge(pop.groupby(key).size().rename("F").reset_index(), on=key)["F"]
    assert r["journalist"]["highest"] == pytest.approx(float((1 / psize).max()))
    assert r["journalist"]["average"] == pytest.approx(float((1 / psize).mean()))
    assert r["journalist"]["records_at_risk"] == pytest.approx(float((1 / psize > 0.05).mean()))
    assert r["marketer"] == pytest.approx(float((1 / psize).mean()))
    assert r["population_uniqueness"] is not None


def test_zayatz_formula():
    sizes = np.array([1, 1, 1, 2, 2, 3, 7])
    pi = 0.1
    fi = {1: 3, 2: 2, 3: 1, 7: 1}
    denom = sum(i * f * (1 - pi) ** (i - 1) for i, f in fi.items())
    expect = 3 * (3 / denom) / sizes.sum()
    assert zayatz_uniqueness(sizes, pi) == pytest.approx(expect)
    # sampling everything: every sample unique is a population unique
    assert zayatz_uniqueness(sizes, 1.0) == pytest.approx(3 / sizes.sum())
    with pytest.raises(ConfigError):
        zayatz_uniqueness(sizes, 0.0)


def test_histogram_and_summary_edges():
    h = class_size_histogram(np.array([1, 2, 3, 4, 5, 150]))
    got = {b["size"]: (b["classes"], b["records"]) for b in h}
    assert got["1"] == (1, 1) and got["3-4"] == (2, 7) and got["100+"] == (1, 150)
    assert risk_summary(np.array([], dtype=np.int64))["prosecutor"] is None
    with pytest.raises(ConfigError):
        risk_summary(np.array([1]), threshold=0)


def test_risk_groups_as_check_does():
    # mixed objects, missing values of several kinds, a categorical and an Arrow-backed column:
    # risk() and check() share one grouping, and both match pandas' groupby (NaN as a value)
    rng = np.random.default_rng(5)
    n = 400
    df = pd.DataFrame(
        {
            "a": rng.choice(np.array([1, "1", None, np.nan, 2.5, "x"], dtype=object), n),
            "b": pd.Categorical(rng.choice(["u", "v", None], n)),
            "c": pd.array(rng.choice(["p", "q", None], n), dtype="string[pyarrow]"),
        }
    )
    qi = ["a", "b", "c"]
    r = risk(df, qi)
    keyed = df.astype(object).map(lambda v: ("na",) if pd.isna(v) else (type(v).__name__, v))
    size = keyed.groupby(qi, dropna=False)["a"].transform("size")
    assert r["classes"] == keyed.groupby(qi, dropna=False).ngroups
    assert r["prosecutor"]["average"] == pytest.approx(float((1 / size).mean()))
    assert r["sample_uniqueness"] == pytest.approx(float((size == 1).mean()))
    assert r == check(df, qi, k=2).risk
