"""A query whose noise cannot be drawn is refused *before* the accountant is charged.

The samplers refuse noise scales outside what they can draw exactly (a Laplace scale above
2^52, a discrete Gaussian sigma above 2^40, a grid outside (2^-900, 2^900)).  These limits are
known from the plan alone, but ``execute`` used to charge the budget first and fail while
drawing: the accountant lost epsilon for a query that released nothing.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from veil.dp.frame import PrivateFrame
from veil.errors import ConfigError, NoiseScaleError

from .test_accounting import Recorder

pytestmark = pytest.mark.filterwarnings("ignore::veil.errors.InsecureRandomWarning")
DF = pd.DataFrame({"pid": [1, 2, 3], "g": ["a", "b", "a"], "x": [1.0, 2.0, 3.0]})


@pytest.mark.parametrize(
    "kw",
    [
        dict(n="count", epsilon=1e-20),  # discrete Laplace scale 1e20
        dict(s=("x", "sum", (0, 10)), epsilon=1e-20),  # Laplace scale 1e21
        dict(s=("x", "sum", (0, 10)), epsilon=1e300),  # grid below 2^-900
    ],
)
@pytest.mark.parametrize("keys", [["a", "b"], None])
def test_undrawable_noise_is_refused_before_charging(kw: dict, keys) -> None:
    if keys is None:
        kw = {"delta": 1e-6, **kw}
    acc = Recorder()
    pf = PrivateFrame(DF, "pid", accountant=acc, max_groups=2)  # Gaussian counts via zCDP
    plan = pf.groupby("g", keys=keys).plan(**kw)
    with pytest.raises(NoiseScaleError):
        plan.execute()
    assert acc.calls == []


def test_bounds_too_wide_for_a_variance_are_a_config_error() -> None:
    """(hi - lo)^2 overflows: the variance's sensitivity is infinite."""
    acc = Recorder()
    pf = PrivateFrame(DF, "pid", accountant=acc)
    with pytest.raises(ConfigError, match="too wide"):
        pf.agg(v=("x", "var", (-1e200, 1e200)), epsilon=1.0)
    assert acc.calls == []


def test_tiny_epsilon_gaussian_counts_over_several_groups() -> None:
    """``rho = (sqrt(ln(1/delta) + eps) - sqrt(ln(1/delta)))^2`` cancelled to 0 for eps = 1e-20,
    and the sigma ``l2 / sqrt(2 rho)`` was a ZeroDivisionError while planning."""
    from decimal import Decimal, getcontext

    from veil.dp.frame._noise import discrete_gaussian_sigma

    getcontext().prec = 60
    for eps in (1e-20, 1e-9, 0.5):
        log_inv = Decimal(1e6).ln()
        root = (log_inv + Decimal(eps)).sqrt() - log_inv.sqrt()
        exact = float(Decimal(2) / (2 * root * root).sqrt())
        assert discrete_gaussian_sigma(2.0, eps, 1e-6, 2, 1) == pytest.approx(exact, rel=1e-9)
    acc = Recorder()
    pf = PrivateFrame(DF, "pid", accountant=acc, max_groups=2)
    plan = pf.groupby("g", keys=["a", "b"]).plan(
        n="count", epsilon=1e-20, delta=1e-6, mechanism="gaussian"
    )
    with pytest.raises(NoiseScaleError):  # sigma ~ 1e21 > 2^40: refused before the charge
        plan.execute()
    assert acc.calls == []


@pytest.mark.parametrize(("eps", "delta"), [(1e-20, 1e-15), (1000.0, 1e-6), (1e300, 1e-6)])
def test_analytic_gaussian_sigma_at_extreme_budgets(eps: float, delta: float) -> None:
    """The root search was bracketed to sigma in sensitivity * e^(+-20) and computed e^eps
    directly: ValueError for (1e-20, 1e-15) and (1000, 1e-6), OverflowError for eps = 1e300
    (an internal error of ``veil query``).  Now the DP core's search: its sigma meets delta."""
    from veil.dp.frame._noise import analytic_gaussian_sigma
    from veil.dp.mechanisms._gaussian import analytic_gaussian_delta

    sigma = analytic_gaussian_sigma(2.0, eps, delta)
    assert 0 < sigma < math.inf
    assert analytic_gaussian_delta(eps, sigma, 2.0) <= delta
    acc = Recorder()
    pf = PrivateFrame(DF, "pid", accountant=acc)
    p = pf.plan(s=("x", "sum", (0, 10)), epsilon=eps, delta=delta, mechanism="gaussian")
    if 2.0**-900 < p.components[0].scale < 2.0**40:
        p.execute()
        assert acc.calls == [(eps, delta)]
    else:
        with pytest.raises(NoiseScaleError):
            p.execute()
        assert acc.calls == []


def test_discrete_gaussian_counts_at_a_huge_epsilon() -> None:
    """``e^eps`` of the discrete Gaussian's exact delta overflowed above eps 709 (an internal
    error of ``veil query --mechanism gaussian --epsilon 1e300``)."""
    from veil.dp.frame._noise import discrete_gaussian_delta

    assert 0.0 <= discrete_gaussian_delta(0.5, 1, 1e300) <= 1.0
    pf = PrivateFrame(DF, "pid", accountant=False, random_state=1)
    plan = pf.plan(n="count", epsilon=1e300, delta=1e-6, mechanism="gaussian")
    assert plan.execute()["n"].tolist() == [3]  # no noise left to speak of


@pytest.mark.parametrize("eps", [np.float32(0.5), np.int64(1), np.float64(0.25)])
def test_numpy_scalar_budgets_are_accepted(eps) -> None:
    """A budget computed with numpy (``np.float32``, ``np.int64``) was refused with "must be a
    positive finite number, got np.float32(0.5)"; the rest of veil.dp accepts numpy reals."""
    acc = Recorder()
    out = (
        PrivateFrame(DF, "pid", accountant=acc, random_state=1)
        .groupby("g", keys=["a", "b"])
        .count(epsilon=eps)
    )
    assert len(out) == 2 and acc.calls and math.isclose(acc.calls[0][0], float(eps))


@pytest.mark.parametrize("bad", [True, np.bool_(True), "1", None])
def test_bool_or_text_budgets_are_refused_before_charging(bad) -> None:
    """``epsilon=True`` used to run as epsilon 1 (bool is an int); text and None are refused
    too, and nothing is charged."""
    acc = Recorder()
    pf = PrivateFrame(DF, "pid", accountant=acc, random_state=1)
    with pytest.raises(ConfigError, match="epsilon"):
        pf.groupby("g", keys=["a", "b"]).count(epsilon=bad)
    with pytest.raises(ConfigError, match="delta"):
        pf.groupby("g", keys=["a", "b"]).count(epsilon=1.0, delta=True)
    assert acc.calls == []


@pytest.mark.parametrize("keys", [["x", "y"], None])
def test_nested_cells_in_a_group_or_where_column_are_in_no_group(keys) -> None:
    """Lists / dicts in a GROUP BY column (nested JSON, Parquet list columns) failed with a
    bare 'unhashable type' TypeError after the accountant was charged; then with a ConfigError
    before it -- still an error that one person's cell turned a release into.  Such a row is
    now in no group and matches no WHERE comparison: the query runs, charged once, and
    releases what the table without those rows releases (same seed)."""
    nested = pd.DataFrame(
        {"pid": range(6), "g": [["a"], ["b"], ["a"], "x", "y", "x"], "v": [1.0] * 6}
    )
    flat_only = nested.iloc[3:].reset_index(drop=True)
    releases = []
    for df in (nested, flat_only):
        acc = Recorder()
        pf = PrivateFrame(df, "pid", accountant=acc, random_state=1)
        by = pf.groupby("g", keys=keys).count(epsilon=1.0, delta=1e-6)
        where = pf.sql("SELECT COUNT(*) AS n FROM data WHERE g = 'x'", epsilon=1.0)
        assert len(acc.calls) == 2
        releases.append((by, where))
    pd.testing.assert_frame_equal(releases[0][0], releases[1][0])
    pd.testing.assert_frame_equal(releases[0][1], releases[1][1])
    flat = nested.assign(g=nested["g"].map(str))  # as text, the lists are groups of their own
    out = (
        PrivateFrame(flat, "pid", accountant=acc, random_state=1)
        .groupby("g", keys=["x", "y"])
        .count(epsilon=1.0)
    )
    assert list(out["g"]) == ["x", "y"] and len(acc.calls) == 3


@pytest.mark.parametrize(
    "cells",
    [
        [[1], 2, [1], 2, 3, 3],  # numbers and lists: pandas infers 'mixed-integer', not 'mixed'
        [True, (1, [2]), False, True, False, True],  # a tuple holding a list
        [np.array([1, 2]), 2.5, 1.5, 2.5, 1.5, 2.5],
    ],
)
@pytest.mark.parametrize("keys", [[2, 3], None])
def test_nested_cells_among_numbers_are_in_no_group(cells, keys) -> None:
    """The nested-cell check followed pandas' inferred type ('mixed' only), so a list among
    numbers passed it and the query was charged, then failed with a bare TypeError.  The
    query now runs once, charged once, as on the table without the nested rows."""
    df = pd.DataFrame({"pid": range(6), "g": pd.Series(cells, dtype=object), "v": [1.0] * 6})
    flat = [i for i, c in enumerate(cells) if not isinstance(c, (list, tuple, np.ndarray))]
    outs = []
    for table in (df, df.iloc[flat].reset_index(drop=True)):
        acc = Recorder()
        pf = PrivateFrame(table, "pid", accountant=acc, random_state=1)
        outs.append(pf.groupby("g", keys=keys).count(epsilon=1.0, delta=1e-6))
        assert len(acc.calls) == 1
    pd.testing.assert_frame_equal(outs[0], outs[1])


@pytest.mark.parametrize("keys", [[1, "1"], [True, "true"], [30, " 30.0"]])
def test_keys_denoting_one_value_are_refused_before_charging(keys) -> None:
    """Two public keys with one canonical value were refused only while encoding the rows,
    after the accountant was charged."""
    df = pd.DataFrame({"pid": range(6), "g": [1, 30, 1, 30, True, 2], "v": [1.0] * 6})
    acc = Recorder()
    pf = PrivateFrame(df, "pid", accountant=acc, random_state=1)
    with pytest.raises(ConfigError, match="denote the same value"):
        pf.groupby("g", keys=keys).count(epsilon=1.0)
    with pytest.raises(ConfigError, match="denote the same value"):
        pf.sql("SELECT g, COUNT(*) AS n FROM data GROUP BY g", epsilon=1.0, keys={"g": keys})
    assert acc.calls == []
