"""resample and distribution: statistical tests at alpha = 1e-6."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _helpers import ctx
from scipy import stats

from veil.deid.operators import get_operator
from veil.errors import ConfigError, InputError

ALPHA = 1e-6


def test_resample_matches_empirical_distribution_chi_square() -> None:
    n = 100_000
    values = np.array(
        ["a"] * 50_000 + ["b"] * 30_000 + ["c"] * 15_000 + [None] * 5_000, dtype=object
    )
    df = pd.DataFrame({"cat": values, "other": np.arange(n)}, index=np.arange(n) * 3)
    out = get_operator("resample").apply(df, "cat", ctx(seed=11))
    assert out.index.equals(df.index)
    counts = out["cat"].fillna("<NA>").value_counts().reindex(["a", "b", "c", "<NA>"]).to_numpy()
    expected = np.array([0.5, 0.3, 0.15, 0.05]) * n
    assert stats.chisquare(counts, expected).pvalue > ALPHA
    # the link to other columns is broken: about half of the 'a' rows stay 'a'
    same = (out["cat"] == df["cat"]).sum()
    assert 0.3 * n < same < 0.45 * n


def test_resample_without_missing_and_dtype() -> None:
    df = pd.DataFrame({"k": pd.array([1, 2, 2, None] * 250, dtype="Int64")})
    out = get_operator("resample", {"include_missing": False}).apply(df, "k", ctx(seed=2))
    assert out["k"].dtype == df["k"].dtype
    assert out["k"].isna().equals(df["k"].isna())
    assert set(out["k"].dropna()) <= {1, 2}


def _data() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    return pd.DataFrame({"g": rng.gamma(2.0, 3.0, 20_000), "n": rng.normal(50, 4, 20_000)})


def test_distribution_samples_follow_the_chosen_fit() -> None:
    op = get_operator("distribution")
    out = op.apply(_data(), "g", ctx(seed=6))
    st = op.stats()
    assert st["distribution"] in {"gamma", "weibull_min"}  # right-skewed, positive
    assert st["criterion"] == "aic" and st["fitted_on"] == 2000
    assert min(st["scores"], key=st["scores"].get) == st["distribution"]
    dist = getattr(stats, st["distribution"])(**st["params"])
    assert stats.kstest(out["g"], dist.cdf).pvalue > ALPHA
    # and the chosen fit describes the original data
    assert stats.kstest(_data()["g"].sample(2000, random_state=1), dist.cdf).pvalue > ALPHA
    assert st["distribution"] in op.describe()


def test_distribution_ks_criterion_on_normal_data() -> None:
    op = get_operator(
        "distribution", {"criterion": "ks", "candidates": ["norm", "expon", "uniform"]}
    )
    out = op.apply(_data(), "n", ctx(seed=7))
    assert op.stats()["distribution"] == "norm"
    p = op.stats()["params"]
    assert p["loc"] == pytest.approx(50, abs=0.5) and p["scale"] == pytest.approx(4, abs=0.3)
    assert stats.kstest(out["n"], stats.norm(p["loc"], p["scale"]).cdf).pvalue > ALPHA


def test_distribution_integers_missing_and_errors() -> None:
    df = pd.DataFrame({"age": np.r_[np.random.default_rng(0).integers(18, 90, 999), 40]})
    df.loc[3, "age"] = 40
    out = get_operator("distribution", {"candidates": ["uniform"], "clip_to_range": True}).apply(
        df, "age", ctx()
    )
    assert out["age"].dtype == np.int64 and out["age"].between(18, 89).all()
    with pytest.raises(InputError, match="varying"):
        get_operator("distribution").apply(pd.DataFrame({"x": [1.0] * 10}), "x", ctx())
    with pytest.raises(ConfigError):
        get_operator("distribution", {"candidates": ["nope"]})
    with pytest.raises(ConfigError):
        get_operator("distribution", {"criterion": "bic"})


def test_distribution_that_publishes_a_records_extreme_is_reported() -> None:
    # the attack: read the report.  A uniform fit's loc is the column's minimum and loc + scale
    # its maximum (a CEO's exact income); expon's loc is the minimum
    rng = np.random.default_rng(1)
    income = np.r_[rng.lognormal(10, 0.5, 999), 2_345_678.0]
    df = pd.DataFrame({"inc": income})
    for cands in (["uniform"], ["expon"]):
        c = ctx()
        op = get_operator("distribution", {"candidates": cands})
        op.apply(df, "inc", c)
        p = op.stats()["params"]
        published = {p["loc"], p["loc"] + p["scale"]}
        assert any(np.isclose(v, [income.min(), income.max()], rtol=1e-9).any() for v in published)
        assert len(c.warnings) == 1 and "exact minimum or maximum" in c.warnings[0]
        assert "2345678" not in c.warnings[0]
    c = ctx()
    get_operator("distribution", {"candidates": ["norm"]}).apply(df, "inc", c)
    assert not c.warnings  # norm's loc / scale are a mean and a deviation
    c = ctx()
    out = get_operator("distribution", {"candidates": ["norm"], "clip_to_range": True}).apply(
        df, "inc", c
    )
    hits = int(np.count_nonzero(np.isin(out["inc"], [income.min(), income.max()])))
    assert hits > 0 and len(c.warnings) == 1 and f"into {hits} released" in c.warnings[0]
