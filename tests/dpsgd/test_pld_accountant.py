"""PLD accountant: exact Gaussian-mechanism values, tighter than RDP, pessimistic, vs Opacus PRV."""

from __future__ import annotations

import math

import pytest
from scipy.optimize import brentq
from scipy.stats import norm

from veil.dp._pld import PLDAccountant, pld_epsilon
from veil.dp._rdp import DEFAULT_ORDERS, compute_rdp, rdp_to_epsilon
from veil.errors import ConfigError


def _gaussian_exact(mu: float, delta: float) -> float:
    """Exact (eps, delta) curve of the Gaussian mechanism with sensitivity/sigma = mu
    (Balle & Wang 2018, Thm. 8): delta = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu)."""

    def f(e: float) -> float:
        return norm.cdf(-e / mu + mu / 2) - math.exp(e) * norm.cdf(-e / mu - mu / 2) - delta

    return brentq(f, 0.0, 100.0)


@pytest.mark.parametrize(("sigma", "steps"), [(1.0, 1), (2.0, 10), (0.7, 3)])
def test_full_batch_gaussian_matches_exact_curve(sigma: float, steps: int) -> None:
    exact = _gaussian_exact(math.sqrt(steps) / sigma, 1e-5)
    ours = pld_epsilon([(sigma, 1.0, steps)], 1e-5)
    assert exact - 1e-9 <= ours <= exact + 0.01  # a valid, tight upper bound


@pytest.mark.parametrize(("sigma", "q", "steps"), [(2.0, 0.05, 100), (1.0, 0.02, 300)])
def test_pld_is_tighter_than_rdp_and_pessimistic_in_h(sigma: float, q: float, steps: int) -> None:
    rdp = rdp_to_epsilon(DEFAULT_ORDERS, compute_rdp(q, sigma, steps), 1e-5)
    fine = pld_epsilon([(sigma, q, steps)], 1e-5, value_discretization=1e-4)
    coarse = pld_epsilon([(sigma, q, steps)], 1e-5, value_discretization=4e-3)
    assert fine < rdp
    assert fine <= coarse  # coarser pessimistic rounding can only increase epsilon
    assert coarse - fine <= steps * 4e-3


def test_matches_opacus_prv_when_installed() -> None:
    acc_mod = pytest.importorskip("opacus.accountants")
    prv = acc_mod.PRVAccountant()
    prv.history = [(2.0, 0.05, 100)]
    theirs = prv.get_epsilon(1e-5)
    ours = pld_epsilon([(2.0, 0.05, 100)], 1e-5, value_discretization=5e-5)
    assert ours == pytest.approx(theirs, rel=0.01)


def test_accountant_composition_and_bad_input() -> None:
    acc = PLDAccountant()
    acc.step(noise_multiplier=2.0, sample_rate=0.05, steps=40)
    acc.step(noise_multiplier=2.0, sample_rate=0.05, steps=60)
    assert acc.history == [(2.0, 0.05, 100)]
    assert acc.get_epsilon(1e-5) == pld_epsilon([(2.0, 0.05, 100)], 1e-5)
    mixed = PLDAccountant()
    mixed.step(noise_multiplier=2.0, sample_rate=0.05, steps=50)
    mixed.step(noise_multiplier=1.5, sample_rate=0.05, steps=50)
    assert mixed.get_epsilon(1e-5) > acc.get_epsilon(1e-5)
    assert PLDAccountant().get_epsilon(1e-5) == 0.0
    with pytest.raises(ConfigError):
        acc.get_epsilon(0.0)
    with pytest.raises(ConfigError):
        acc.step(noise_multiplier=-1.0, sample_rate=0.1)
    with pytest.raises(ConfigError):
        PLDAccountant(value_discretization=0.0)
