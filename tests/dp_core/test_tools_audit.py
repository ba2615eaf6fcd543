"""Audit findings on veil.dp.tools: integer sums, weights and misspelt keywords, messages."""

from __future__ import annotations

import numpy as np
import pytest

import veil.dp as dp
from veil.errors import ConfigError, DiffprivlibCompatibilityWarning, InputError

from ._audit import audit

N_DRAWS = 20_000  # draws per neighbour in the privacy-loss audits


def _draws(f, data, seed: int, **kw) -> np.ndarray:
    # an accountant of their own: 40,000 draws would otherwise stay recorded on the
    # process-wide default one (whose spends used to copy every earlier spend: minutes)
    rng, acc = np.random.default_rng(seed), dp.BudgetAccountant()
    return np.array(
        [f(data, random_state=rng, accountant=acc, **kw) for _ in range(N_DRAWS)], dtype=float
    )


def test_integer_sum_of_fractional_values_privacy_audit():
    # round-half-to-even of the total moved by 2 here (round(0.5) = 0, round(1.5) = 2) while
    # the geometric noise was calibrated for hi - lo = 1: log-ratio ~2 at epsilon 1
    a_data, b_data = np.array([0.5, 0.0]), np.array([0.5, 1.0])  # one record replaced
    kw = {"epsilon": 1.0, "bounds": (0, 1), "dtype": int}
    a = _draws(dp.tools.sum, a_data, 1, **kw)
    b = _draws(dp.tools.sum, b_data, 2, **kw)
    assert audit(a, b, np.arange(-0.5, 3.5)) <= 1.0


def test_integer_nansum_of_fractional_values_privacy_audit():
    a_data, b_data = np.array([0.5, np.nan]), np.array([0.5, 1.0])  # a value becomes NaN
    kw = {"epsilon": 1.0, "bounds": (0, 1), "dtype": int}
    a = _draws(dp.tools.nansum, a_data, 3, **kw)
    b = _draws(dp.tools.nansum, b_data, 4, **kw)
    assert audit(a, b, np.arange(-0.5, 3.5)) <= 1.0


def test_integer_sum_casts_each_value_like_numpy():
    # numpy's sum(dtype=int) casts every value (towards zero) before adding; with a huge
    # epsilon the DP sum is that integer sum (noise far below 1/2 with overwhelming probability)
    x = np.array([[0.5, 1.7, 2.9], [3.2, -0.7, 4.99]])
    rng = np.random.default_rng(5)
    for axis in (None, 0, 1):
        got = dp.tools.sum(x, epsilon=1e6, bounds=(-1, 5), dtype=int, axis=axis, random_state=rng)
        want = np.sum(x, dtype=int, axis=axis)
        assert np.array_equal(got, want)
        assert np.asarray(got).dtype.kind == "i"


X = np.array([23.0, 35.0, 47.0, 51.0, 62.0, 29.0, 40.0, 33.0])

# every statistic that has no weights parameter of its own, with its required arguments
UNWEIGHTED = [
    (dp.tools.count, {}),
    (dp.tools.count_nonzero, {}),
    *[
        (getattr(dp.tools, n), {"bounds": (0, 100)})
        for n in ("sum", "mean", "var", "std", "nansum", "nanmean", "nanvar", "nanstd")
    ],
    *[(getattr(dp.tools, n), {"bounds": (0, 100)}) for n in ("median", "nanmedian")],
    *[(getattr(dp.tools, n), {"bounds": (0, 100)}) for n in ("quantile", "nanquantile")],
    *[(getattr(dp.tools, n), {"bounds": (0, 100)}) for n in ("percentile", "nanpercentile")],
]


def _call(f, kw, **extra):
    name = f.__name__
    pos = (0.5,) if "quantile" in name else (50,) if "percentile" in name else ()
    return f(X, *pos, epsilon=0.1, **kw, **extra)


@pytest.mark.parametrize(("f", "kw"), UNWEIGHTED, ids=lambda p: getattr(p, "__name__", ""))
def test_weights_are_refused_not_ignored(f, kw):
    acc = dp.BudgetAccountant()
    with pytest.raises(ConfigError, match=f"weights are not supported by {f.__name__}"):
        _call(f, kw, weights=np.ones(X.size), accountant=acc)
    assert len(acc) == 0  # refused before anything is charged


@pytest.mark.parametrize(
    ("typo", "meant"),
    [("acountant", "accountant"), ("epsilom", "epsilon"), ("random_stat", "random_state")],
)
@pytest.mark.parametrize(("f", "kw"), UNWEIGHTED, ids=lambda p: getattr(p, "__name__", ""))
def test_misspelt_parameter_is_an_error(f, kw, typo, meant):
    with pytest.raises(ConfigError, match=f"did you mean '{meant}'"):
        _call(f, kw, **{typo: 0.5})


def test_misspelt_bounds_and_histogram_parameters():
    with pytest.raises(ConfigError, match="did you mean 'bounds'"):
        dp.tools.mean(X, epsilon=0.1, bounds=(0, 100), bound=(0, 1))
    with pytest.raises(ConfigError, match="did you mean 'weight_bound'"):
        dp.tools.histogram(X, epsilon=0.1, range=(0, 100), weights=np.ones(X.size), weight_bounds=2)
    with pytest.raises(ConfigError, match="did you mean 'accountant'"):
        dp.tools.histogram2d(X, X, epsilon=0.1, range=[(0, 100)] * 2, acountant=None)


def test_numpy_only_arguments_still_warn_and_are_ignored():
    acc = dp.BudgetAccountant()
    with pytest.warns(DiffprivlibCompatibilityWarning, match="'out'"):
        dp.tools.mean(X, epsilon=0.1, bounds=(0, 100), out=None, accountant=acc)
    with pytest.warns(DiffprivlibCompatibilityWarning, match="'overwrite_input'"):
        dp.tools.median(X, epsilon=0.1, bounds=(0, 100), overwrite_input=True, accountant=acc)
    with pytest.warns(DiffprivlibCompatibilityWarning, match="'where'"):
        dp.tools.sum(X, epsilon=0.1, bounds=(0, 100), where=True, accountant=acc)
    with pytest.warns(DiffprivlibCompatibilityWarning) as rec:
        dp.tools.histogram2d(X, X, epsilon=0.1, range=[(0, 100)] * 2, normed=None, accountant=acc)
    assert len(rec) == 1  # histogram2d warns once, not again through histogramdd
    assert rec[0].filename == __file__  # the warning points at the caller's line
    with pytest.warns(DiffprivlibCompatibilityWarning, match="'weights'"):  # None: nothing lost
        dp.tools.mean(X, epsilon=0.1, bounds=(0, 100), weights=None, accountant=acc)
    assert len(acc) == 5


def _nan_data() -> np.ndarray:
    x = X.copy()
    x[2] = np.nan
    return x


def test_count_nonzero_nan_message_names_existing_remedies():
    with pytest.raises(InputError, match="count_nonzero") as err:
        dp.tools.count_nonzero(_nan_data(), epsilon=0.1)
    msg = str(err.value)
    assert "nancount_nonzero" not in msg
    # each remedy it names exists and works on the same data
    for name in ("nan_to_num", "isnan"):
        assert name in msg and hasattr(np, name)
    x = _nan_data()
    dp.tools.count_nonzero(np.nan_to_num(x), epsilon=0.1, accountant=dp.BudgetAccountant())
    dp.tools.count_nonzero(np.isnan(x) | (x != 0), epsilon=0.1, accountant=dp.BudgetAccountant())


@pytest.mark.parametrize("name", ["median", "percentile", "quantile"])
def test_nan_error_names_the_function_called(name):
    f = getattr(dp.tools, name)
    pos = {"median": (), "percentile": (50,), "quantile": (0.5,)}[name]
    with pytest.raises(InputError, match=rf"^{name}: .*use nan{name}\b"):
        f(_nan_data(), *pos, epsilon=0.1, bounds=(0, 100))
    assert hasattr(dp.tools, f"nan{name}")  # the suggested function exists


def test_percentile_range_error_names_the_function():
    with pytest.raises(ConfigError, match="^nanpercentile: percentiles"):
        dp.tools.nanpercentile(X, 150, epsilon=0.1, bounds=(0, 100))


@pytest.mark.parametrize(
    "call",
    [
        lambda acc: dp.tools.histogram(X, epsilon=1, range="estimate", accountant=acc),
        lambda acc: dp.tools.histogramdd(
            np.c_[X, X], epsilon=1, range=[(0, 100), "estimate"], accountant=acc
        ),
        lambda acc: dp.tools.histogram2d(X, X, epsilon=1, range="estimate", accountant=acc),
    ],
)
def test_histogram_string_range_is_a_clear_error(call):
    acc = dp.BudgetAccountant()
    with pytest.raises(ConfigError, match="estimate_bounds") as err:
        call(acc)
    assert "unpack" not in str(err.value)
    assert callable(dp.tools.estimate_bounds)  # the function the message points to
    assert len(acc) == 0


@pytest.mark.parametrize(
    "mech",
    [
        dp.mechanisms.Binary(epsilon=1.0, value0="a", value1="b"),
        dp.mechanisms.RandomizedResponse(epsilon=1.0, categories=["a", "b", "c"]),
    ],
)
def test_randomized_response_interval_message_names_a_real_method(mech):
    with pytest.raises(NotImplementedError, match="estimate_halfwidth") as err:
        mech.confidence_interval(0.05)
    assert "estimate_interval" not in str(err.value)
    assert mech.estimate_halfwidth(1000, 0.05) > 0


def test_integer_sum_is_exact_beyond_int64_products_and_refuses_a_dtype_it_overflows():
    """n * bound >= 2**62 used to wrap in int64 (a sum of 0 for 1,024 values at 2**52)."""
    import warnings

    from veil.errors import InsecureRandomWarning

    x = np.full(1024, 2.0**52)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # numpy's overflow warning
        warnings.simplefilter("ignore", InsecureRandomWarning)  # (a RuntimeWarning too)
        outs = [
            int(dp.tools.sum(x, epsilon=1.0, bounds=(0, 2**52), dtype=int, random_state=s))
            for s in range(20)
        ]
        with pytest.raises(InputError, match="does not fit dtype int32"):
            dp.tools.sum(x, epsilon=1.0, bounds=(0, 2**52), dtype=np.int32, random_state=0)
    # the noise has scale 2**52 and the release is clipped to [0, 2**62]
    assert all(2**62 - 40 * 2**52 <= o <= 2**62 for o in outs)
