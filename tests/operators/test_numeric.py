"""top_bottom_code, noise, round."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _helpers import ctx, people
from scipy import stats

from veil.deid.operators import get_operator
from veil.errors import ConfigError, InputError

ALPHA = 1e-6


def test_top_bottom_fixed_keeps_integers() -> None:
    op = get_operator("top_bottom_code", {"top": 50, "bottom": 25})
    out = op.apply(people(), "age", ctx())["age"]
    assert out.tolist() == [25, 37, 50, 25, 50] and out.dtype == np.int64
    assert op.stats()["top_coded"] == 2 and op.stats()["bottom_coded"] == 2


def test_top_bottom_percentiles_and_missing() -> None:
    df = pd.DataFrame({"x": np.r_[np.arange(100.0), np.nan]})
    out = get_operator("top_bottom_code", {"top_percentile": 90, "bottom_percentile": 10}).apply(
        df, "x", ctx()
    )["x"]
    lo, hi = np.percentile(np.arange(100.0), [10, 90])
    assert out.min() == lo and out.max() == hi and np.isnan(out.iloc[-1])
    assert (out.iloc[20:80] == df["x"].iloc[20:80]).all()


@pytest.mark.parametrize(
    "params",
    [{}, {"top": 1, "top_percentile": 2}, {"top": 1, "bottom": 2}, {"top_percentile": 101}],
)
def test_top_bottom_bad_params(params: dict) -> None:
    with pytest.raises(ConfigError):
        get_operator("top_bottom_code", params)


@pytest.mark.parametrize(
    "dist, scipy_dist, scale",
    [
        ("gaussian", stats.norm(0, 2.0), 2.0),
        ("laplace", stats.laplace(0, 2.0), 2.0),
        ("uniform", stats.uniform(-2.0, 4.0), 2.0),
    ],
)
def test_noise_distribution_ks(dist: str, scipy_dist: object, scale: float) -> None:
    n = 100_000
    df = pd.DataFrame({"x": np.full(n, 10.0)})
    out = get_operator("noise", {"scale": scale, "distribution": dist}).apply(df, "x", ctx(seed=3))
    noise = out["x"].to_numpy() - 10.0
    assert stats.kstest(noise, scipy_dist.cdf).pvalue > ALPHA  # type: ignore[attr-defined]


def test_relative_noise_scale_and_integer_columns() -> None:
    n = 100_000
    base = np.random.default_rng(1).normal(0, 5.0, n)
    df = pd.DataFrame({"x": base, "i": np.arange(n)})
    op = get_operator("noise", {"scale": 0.5, "relative": True})
    out = op.apply(df, "x", ctx(seed=4))
    expected_scale = 0.5 * np.std(base)
    assert op.stats()["absolute_scale"] == pytest.approx(expected_scale)
    assert stats.kstest(out["x"] - base, stats.norm(0, expected_scale).cdf).pvalue > ALPHA
    out = get_operator("noise", {"scale": 3, "clip": [0, 50]}).apply(df.head(1000), "i", ctx())
    assert out["i"].dtype == np.int64 and out["i"].between(0, 50).all()


def test_noise_keeps_missing() -> None:
    out = get_operator("noise", {"scale": 1.0}).apply(people(), "income", ctx())
    assert out["income"].isna().tolist() == [False] * 4 + [True]


@pytest.mark.parametrize(
    "params",
    [{"scale": 0}, {"scale": -1}, {"scale": 1, "distribution": "t"}, {"scale": 1, "clip": [3, 1]}],
)
def test_noise_bad_params(params: dict) -> None:
    with pytest.raises(ConfigError):
        get_operator("noise", params)


def test_round_base_and_significant() -> None:
    out = get_operator("round", {"base": 5}).apply(people(), "age", ctx())["age"]
    assert out.tolist() == [25, 35, 65, 25, 50] and out.dtype == np.int64
    out = get_operator("round", {"base": 10, "mode": "floor"}).apply(people(), "age", ctx())["age"]
    assert out.tolist() == [20, 30, 60, 20, 50]
    out = get_operator("round", {"significant": 2}).apply(people(), "income", ctx())["income"]
    assert out.iloc[:4].tolist() == [1200.0, 5400.0, 98000.0, 1200.0] and np.isnan(out.iloc[4])
    df = pd.DataFrame({"x": [0.123456, -0.0789, 0.0]})
    assert get_operator("round", {"significant": 2}).apply(df, "x", ctx())["x"].tolist() == [
        0.12,
        -0.079,
        0.0,
    ]
    out = get_operator("round", {"base": 0.5, "mode": "ceil"}).apply(
        pd.DataFrame({"x": [1, 2]}), "x", ctx()
    )
    assert out["x"].tolist() == [1.0, 2.0]


def test_round_errors() -> None:
    with pytest.raises(ConfigError):
        get_operator("round", {})
    with pytest.raises(ConfigError):
        get_operator("round", {"base": 5, "significant": 2})
    with pytest.raises(InputError, match="not numeric"):
        get_operator("round", {"base": 5}).apply(people(), "sex", ctx())
