"""Exact samplers against their exact distributions (chi-square / KS at alpha = 1e-6)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from veil.dp import _samplers as S
from veil.dp._exact import LazyUniform, u_less_exp, u_less_frac
from veil.dp._rng import SecureRandom, uniform_below
from veil.errors import ConfigError, InputError, NoiseScaleError

ALPHA = 1e-6
N = 100_000


def test_uniform_below_is_uniform(seeded, chi2_pvalue):
    x = uniform_below(seeded(1), 7, N).astype(np.int64)
    assert chi2_pvalue(x, np.arange(7), np.ones(7)) > ALPHA
    y = uniform_below(seeded(2), 2**40, 1000)
    assert y.max() < 2**40


def test_uniform_below_with_one_bound_per_draw(seeded, chi2_pvalue):
    """An array of bounds: each draw uniform below its own bound (chi-square per bound; a
    bound of 1 always gives 0, 2^63 stays below it)."""
    bounds = np.array([3, 6, 1, 5, 2**63], dtype=np.uint64)
    m = np.tile(bounds, N // 5)
    x = uniform_below(seeded(5), m, m.size)
    assert np.all(x < m)
    for b in (3, 6, 5):
        got = x[m == b].astype(np.int64)
        assert chi2_pvalue(got, np.arange(b), np.ones(b)) > ALPHA
    assert not x[m == 1].any()


@pytest.mark.parametrize("p", [0.3, 1e-3, 0.999])
def test_bernoulli(seeded, p):
    x = S.bernoulli(p, N, seeded(3))
    assert stats.binomtest(int(x.sum()), N, p).pvalue > ALPHA


def test_bernoulli_edges_and_errors(seeded):
    rng = seeded(4)
    assert not S.bernoulli(0.0, 1000, rng).any()
    assert S.bernoulli(1.0, 1000, rng).all()
    with pytest.raises(ConfigError):
        S.bernoulli(1.5, 3, rng)


@pytest.mark.parametrize("gamma", [0.0, 0.4, 1.0, 3.7])
def test_bernoulli_exp(seeded, gamma):
    x = S.bernoulli_exp(gamma, N, seeded(5))
    assert stats.binomtest(int(x.sum()), N, math.exp(-gamma)).pvalue > ALPHA


@pytest.mark.parametrize("scale", [0.5, 3.0, 40.0])
def test_geometric(seeded, chi2_pvalue, scale):
    x = S.geometric(scale, N, seeded(6))
    support = np.arange(0, int(60 * scale) + 10)
    pmf = np.exp(-support / scale)
    assert chi2_pvalue(x, support, pmf) > ALPHA


@pytest.mark.parametrize("scale", [0.7, 2.5])
def test_discrete_laplace(seeded, chi2_pvalue, scale):
    x = S.discrete_laplace(scale, N, seeded(7))
    support = np.arange(-int(60 * scale) - 10, int(60 * scale) + 10)
    assert chi2_pvalue(x, support, np.exp(-np.abs(support) / scale)) > ALPHA


@pytest.mark.parametrize("sigma", [0.8, 1.5, 6.0])
def test_discrete_gaussian(seeded, chi2_pvalue, sigma):
    x = S.discrete_gaussian(sigma, N, seeded(8))
    support = np.arange(-int(12 * sigma) - 5, int(12 * sigma) + 5)
    assert chi2_pvalue(x, support, np.exp(-(support**2) / (2 * sigma**2))) > ALPHA


def test_exact_fallback_path_keeps_distribution(seeded, chi2_pvalue, monkeypatch):
    """Force the float comparison to be 'ambiguous' often: the exact path must take over."""
    monkeypatch.setattr(S, "_REL", 0.05)
    x = S.discrete_laplace(1.5, 20_000, seeded(9))
    support = np.arange(-60, 61)
    assert chi2_pvalue(x, support, np.exp(-np.abs(support) / 1.5)) > ALPHA
    g = S.discrete_gaussian(2.0, 20_000, seeded(10))
    support = np.arange(-40, 41)
    assert chi2_pvalue(g, support, np.exp(-(support**2) / 8.0)) > ALPHA


def test_exact_comparisons_decide_close_calls(seeded):
    rng = seeded(11)
    import decimal

    with decimal.localcontext() as ctx:
        ctx.prec = 60
        num = int(decimal.Decimal(-1).exp() * (1 << 64))  # floor(e^-1 2^64), exactly
    below = LazyUniform(num - 10, 64, rng)
    above = LazyUniform(num + 10, 64, rng)
    from fractions import Fraction

    assert u_less_exp(below, Fraction(1)) is True
    assert u_less_exp(above, Fraction(1)) is False
    assert u_less_frac(LazyUniform(3, 2, rng), Fraction(1, 2)) is False
    assert u_less_frac(LazyUniform(1, 2, rng), Fraction(1, 2)) is True


def test_laplace_fp_distribution_and_grid(seeded):
    rng = seeded(12)
    out = S.laplace_fp(np.full(N, 10.0), 2.0, rng, sensitivity=1.0)
    assert stats.kstest(out - 10.0, stats.laplace(scale=2.0).cdf).pvalue > ALPHA
    g = S.grid_for(2.0)
    assert np.all(np.mod(out / g, 1.0) == 0.0)  # every output lies on the grid


def test_fp_safe_outputs_share_the_grid_for_neighbours(seeded):
    """Mironov's attack needs outputs reachable from x but not from x': on the grid both
    inputs reach exactly the same set of values."""
    rng = seeded(13)
    g = S.grid_for(1.0)
    a = S.laplace_fp(np.full(1000, 0.1), 1.0, rng, sensitivity=1.0)
    b = S.laplace_fp(np.full(1000, 0.1 + 1e-9), 1.0, rng, sensitivity=1.0)
    assert np.all(np.mod(a / g, 1) == 0) and np.all(np.mod(b / g, 1) == 0)


def test_gaussian_fp_distribution_and_grid(seeded):
    rng = seeded(14)
    out = S.gaussian_fp(np.zeros(N), 3.0, rng, sensitivity=1.0)
    assert stats.kstest(out, stats.norm(scale=3.0).cdf).pvalue > ALPHA
    assert np.all(np.mod(out / S.grid_for(3.0), 1.0) == 0.0)


def test_large_values_stay_exact_functions_of_the_grid_integer(seeded):
    rng = seeded(15)
    out = S.laplace_fp(np.array([1e12, -3e15]), 0.5, rng, sensitivity=1.0)
    assert np.all(np.isfinite(out)) and abs(out[0] - 1e12) < 100


def test_fp_noise_rejects_nan_and_bad_scale(seeded):
    with pytest.raises(InputError):
        S.laplace_fp([np.nan], 1.0, seeded(1), sensitivity=1.0)
    with pytest.raises(ConfigError):
        S.laplace_fp([1.0], -1.0, seeded(1), sensitivity=1.0)
    with pytest.raises(ConfigError):
        S.discrete_gaussian(0.0, 3, seeded(1))
    for bad in (math.nan, math.inf, 2.0**41):  # a bare ValueError from Fraction(nan) before
        with pytest.raises(NoiseScaleError):
            S.discrete_gaussian(bad, 3, seeded(1))


def test_discrete_laplace_variance_matches_samples(seeded):
    x = S.discrete_laplace(4.0, N, seeded(16))
    v = S.discrete_laplace_variance(4.0)
    # sample variance standard error ~ sqrt((m4 - v^2)/N); use a 6-sigma band
    assert abs(x.var() - v) < 6 * math.sqrt(5 * v * v / N) + 0.0


def test_secure_random_properties():
    a, b = SecureRandom(), SecureRandom()
    assert not np.array_equal(a.raw(4), b.raw(4))
    assert np.array_equal(SecureRandom(5).raw(8), SecureRandom(5).raw(8))
    assert "key" not in repr(a).lower() or "secure" in repr(a)
    p = SecureRandom(6).permutation(10)
    assert sorted(p.tolist()) == list(range(10))


def test_permutation_uniform(seeded, chi2_pvalue):
    rng = seeded(17)
    codes = np.array([int("".join(map(str, rng.permutation(3)))) for _ in range(6000)])
    perms = np.array([12, 21, 102, 120, 201, 210])
    assert chi2_pvalue(codes, perms, np.ones(6)) > ALPHA


def test_noise_beyond_the_exact_samplers_is_a_typed_config_error():
    """A scale above 2^52 (epsilon far too small for the sensitivity) is a NoiseScaleError, a
    ConfigError subclass the CLI turns into an --epsilon message; a sane scale still draws."""
    from veil.dp._rng import resolve_rng
    from veil.dp._samplers import discrete_laplace
    from veil.errors import ConfigError, NoiseScaleError

    rng = resolve_rng(None)
    for bad in (1e300, 2.0**53, 0.0, -1.0, float("nan")):
        with pytest.raises(NoiseScaleError, match="epsilon is too small"):
            discrete_laplace(bad, 3, rng)
    assert issubclass(NoiseScaleError, ConfigError)
    assert discrete_laplace(2.0**52, 3, rng).shape == (3,)
