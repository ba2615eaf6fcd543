"""RDP accountant for the sampled Gaussian mechanism: golden values, an independent numerical
oracle, properties and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

from veil.dp._rdp import (
    DEFAULT_ORDERS,
    RDPAccountant,
    compute_rdp,
    noise_multiplier_for,
    privacy_spent,
    rdp_to_epsilon,
)
from veil.errors import BudgetError, ConfigError

# Orders used by TF-Privacy's MNIST tutorial (and by the published values below).
TF_ORDERS = [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))


# --- published values ------------------------------------------------------------------------
# tensorflow/privacy, tutorials/README.md, "Select Parameters" table (MNIST, n=60000, batch 256,
# delta=1e-5, steps = epochs * 60000 // 256, RDP with the classic Mironov conversion):
#   sigma 1.12, 60 epochs -> eps 2.92 ; sigma 0.6, 30 epochs -> 9.74 ; sigma 1.2, 10 epochs -> 1.20
# and its "Expected Output" (same default sigma 1.12): epoch 1 -> 1.00, epoch 2 -> 1.04.
TF_PUBLISHED = [
    (1.12, 60, 2.92),
    (0.6, 30, 9.74),
    (1.2, 10, 1.20),
    (1.12, 1, 1.00),
    (1.12, 2, 1.04),
]


@pytest.mark.parametrize(("sigma", "epochs", "published"), TF_PUBLISHED)
def test_tf_privacy_published_mnist_values(sigma: float, epochs: int, published: float) -> None:
    steps = epochs * 60000 // 256
    rdp = compute_rdp(256 / 60000, sigma, steps, TF_ORDERS)
    eps = rdp_to_epsilon(TF_ORDERS, rdp, 1e-5, method="classic")
    assert eps == pytest.approx(published, rel=0.01)


def test_abadi_2016_moments_accountant_example() -> None:
    # Abadi et al. 2016, "Deep Learning with Differential Privacy", Sec. 3.1: q=0.01, sigma=4,
    # delta=1e-5, T=10000 steps -> eps ~ 1.26 with the moments accountant (integer orders).
    orders = list(range(2, 33))
    eps = rdp_to_epsilon(orders, compute_rdp(0.01, 4.0, 10000, orders), 1e-5, method="classic")
    assert eps == pytest.approx(1.26, rel=0.01)


def test_improved_conversion_is_tighter_than_classic() -> None:
    rdp = compute_rdp(256 / 60000, 1.1, 14062)
    improved = rdp_to_epsilon(DEFAULT_ORDERS, rdp, 1e-5)
    classic = rdp_to_epsilon(DEFAULT_ORDERS, rdp, 1e-5, method="classic")
    assert improved < classic
    # the gap is log((a-1)/a) - log(a)/(a-1) at the best order, i.e. strictly > 0.1 here
    assert classic - improved > 0.1


def test_matches_opacus_when_installed() -> None:
    ordp = pytest.importorskip("opacus.accountants.analysis.rdp")
    orders = list(DEFAULT_ORDERS)
    for q, sigma, steps in [(256 / 60000, 1.1, 14062), (0.01, 1.0, 1000), (0.001, 0.6, 50000)]:
        ours = compute_rdp(q, sigma, steps, orders)
        theirs = ordp.compute_rdp(q=q, noise_multiplier=sigma, steps=steps, orders=orders)
        np.testing.assert_allclose(ours, theirs, rtol=1e-5)
        e1 = rdp_to_epsilon(orders, ours, 1e-5)
        e2 = ordp.get_privacy_spent(orders=orders, rdp=theirs, delta=1e-5)[0]
        assert e1 == pytest.approx(e2, rel=1e-4)


# --- independent oracle: numerical integration of the Renyi divergence ----------------------
def _rdp_by_quadrature(q: float, sigma: float, alpha: float) -> float:
    """D_alpha((1-q) N(0,s^2) + q N(1,s^2) || N(0,s^2)) by direct integration."""

    def integrand(z: float) -> float:
        log_ratio = np.logaddexp(math.log1p(-q), math.log(q) + (2 * z - 1) / (2 * sigma**2))
        return math.exp(stats.norm.logpdf(z, scale=sigma) + alpha * log_ratio)

    val, _ = integrate.quad(integrand, -np.inf, np.inf, limit=400, epsabs=0, epsrel=1e-10)
    return math.log(val) / (alpha - 1)


@pytest.mark.parametrize(
    ("q", "sigma", "alpha"),
    [(0.01, 1.0, 1.5), (0.05, 0.8, 2.5), (0.2, 2.0, 7.3), (0.01, 1.1, 3.0), (0.5, 1.5, 12.0)],
)
def test_rdp_matches_numerical_integration(q: float, sigma: float, alpha: float) -> None:
    ours = compute_rdp(q, sigma, 1, [alpha])[0]
    assert ours == pytest.approx(_rdp_by_quadrature(q, sigma, alpha), rel=1e-6)


def test_full_batch_closed_form() -> None:
    orders = np.array([1.5, 2.0, 10.0, 33.3])
    np.testing.assert_allclose(compute_rdp(1.0, 2.0, 3, orders), 3 * orders / 8.0)


def test_fractional_orders_continuous_at_integers() -> None:
    for a in (2.0, 5.0, 20.0):
        lo, mid, hi = compute_rdp(0.02, 1.0, 1, [a - 1e-7, a, a + 1e-7])
        assert lo == pytest.approx(mid, rel=1e-5)
        assert hi == pytest.approx(mid, rel=1e-5)


def test_degenerate_cases() -> None:
    assert np.all(compute_rdp(0.0, 1.0, 10) == 0)
    assert np.all(np.isinf(compute_rdp(0.1, 0.0, 1)))
    assert rdp_to_epsilon(DEFAULT_ORDERS, compute_rdp(0.1, 0.0, 1), 1e-5) == math.inf
    assert np.all(compute_rdp(0.1, 1.0, 0) == 0)


# --- properties -----------------------------------------------------------------------------
ORD = [1.5, 2.0, 4.0, 8.0, 16.0, 32.0]


@settings(max_examples=30, deadline=None)
@given(
    q=st.floats(1e-4, 0.5),
    sigma=st.floats(0.5, 5.0),
    steps=st.integers(1, 10_000),
)
def test_monotone_properties(q: float, sigma: float, steps: int) -> None:
    base = compute_rdp(q, sigma, steps, ORD)
    assert np.all(base >= 0)
    np.testing.assert_allclose(compute_rdp(q, sigma, 2 * steps, ORD), 2 * base, rtol=1e-12)
    assert np.all(compute_rdp(min(1.0, q * 1.5), sigma, steps, ORD) >= base)
    assert np.all(compute_rdp(q, sigma * 1.2, steps, ORD) <= base)
    # RDP is non-decreasing in the order (Mironov 2017, Prop. 9)
    assert np.all(np.diff(base) >= -1e-12 * np.abs(base[1:]))
    eps = rdp_to_epsilon(ORD, base, 1e-5)
    assert rdp_to_epsilon(ORD, base, 1e-3) <= eps


def test_noise_multiplier_for_hits_target() -> None:
    q, steps = 256 / 60000, 2000
    for target in (1.0, 3.0, 8.0):
        sigma = noise_multiplier_for(target, 1e-5, q, steps)
        eps = rdp_to_epsilon(DEFAULT_ORDERS, compute_rdp(q, sigma, steps), 1e-5)
        assert eps <= target
        assert eps >= target * 0.99  # not wastefully large
        worse = rdp_to_epsilon(DEFAULT_ORDERS, compute_rdp(q, sigma * 0.999, steps), 1e-5)
        assert worse > eps


# --- accountant --------------------------------------------------------------------------
def test_accountant_composes_and_roundtrips() -> None:
    acc = RDPAccountant()
    acc.step(noise_multiplier=1.0, sample_rate=0.01, steps=300)
    acc.step(noise_multiplier=1.0, sample_rate=0.01, steps=200)
    acc.step(noise_multiplier=2.0, sample_rate=0.02)
    assert acc.history == [(1.0, 0.01, 500), (2.0, 0.02, 1)]
    assert len(acc) == 501
    expected = compute_rdp(0.01, 1.0, 500) + compute_rdp(0.02, 2.0, 1)
    eps, order = acc.get_privacy_spent(1e-5)
    assert (eps, order) == privacy_spent(DEFAULT_ORDERS, expected, 1e-5)
    assert acc.get_epsilon(1e-5) == eps
    clone = RDPAccountant.from_json(acc.to_json())
    assert clone.history == acc.history
    assert clone.get_epsilon(1e-5) == eps
    assert "RDPAccountant" in repr(acc)


def test_accountant_budget_check() -> None:
    acc = RDPAccountant()
    step = {"noise_multiplier": 1.0, "sample_rate": 0.05}
    taken = 0
    with pytest.raises(BudgetError, match="budget exhausted"):
        while True:
            acc.check(2.0, 1e-5, **step)
            acc.step(**step)
            taken += 1
    assert acc.get_epsilon(1e-5) <= 2.0
    assert acc.epsilon_after(1e-5, **step) > 2.0
    assert len(acc) == taken > 0


@pytest.mark.parametrize(
    "call",
    [
        lambda: compute_rdp(1.5, 1.0, 1),
        lambda: compute_rdp(0.1, -1.0, 1),
        lambda: compute_rdp(0.1, 1.0, -1),
        lambda: compute_rdp(0.1, 1.0, 1, orders=[0.5]),
        lambda: rdp_to_epsilon([2.0], [0.1], 0.0),
        lambda: rdp_to_epsilon([2.0], [0.1, 0.2], 1e-5),
        lambda: rdp_to_epsilon([2.0], [0.1], 1e-5, method="nope"),
        lambda: noise_multiplier_for(0.0, 1e-5, 0.01, 100),
        lambda: noise_multiplier_for(-1.0, 1e-5, 0.01, 100),
        lambda: RDPAccountant.from_json("{not json"),
        lambda: RDPAccountant.from_state({"type": "pld"}),
        lambda: RDPAccountant().step(noise_multiplier=float("nan"), sample_rate=0.1),
    ],
)
def test_bad_input_raises_config_error(call) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError):
        call()
