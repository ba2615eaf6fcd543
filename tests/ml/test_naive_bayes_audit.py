"""Privacy-loss audit of GaussianNB (the one counts-and-sums estimator without one).

Neighbouring tables: 100 rows of class 0 and 100 of class 1, all at the middle of the bounds
(-1, 1), and the same plus one class-1 row at the upper bound: it moves class 1's count by 1
and its scaled sum and sum of squares by 1 each -- the full sensitivity of every released
statistic.  Two releases are read back from the fitted model and audited at their own
epsilon (a stronger claim than the fit's): the noisy class count ``class_count_[1]``
(``count_share(1) * epsilon``) and the noisy scaled sum ``(theta_ - mid) / half *
class_count_`` (``(1 - count_share) * epsilon / 2``), with the bucketed Clopper-Pearson audit
of ``tests/ml/conftest.py``.  Each has its power check: a third of the noise must fail.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from veil.dp import BudgetAccountant
from veil.ml import GaussianNB, _naive_bayes
from veil.ml._naive_bayes import count_share
from veil.ml._noise import add_laplace

SEED = 20261122
RUNS = 2000
EPS = 1.0
EPS_COUNT = count_share(1) * EPS
EPS_SUM = (1.0 - count_share(1)) * EPS / 2


def _pair() -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    X = np.zeros((200, 1))
    y = np.repeat([0, 1], 100)
    return (X, y), (np.vstack([X, [[1.0]]]), np.append(y, 1))


def _release(stat: str) -> Callable[[tuple[np.ndarray, np.ndarray], int], float]:
    acc = BudgetAccountant(epsilon=float("inf"))

    def release(data: tuple[np.ndarray, np.ndarray], seed: int) -> float:
        X, y = data
        m = GaussianNB(
            epsilon=EPS, bounds=(-1, 1), classes=[0, 1], random_state=seed, accountant=acc
        ).fit(X, y)
        count = float(m.class_count_[1])
        # mid 0, half 1: theta_ is the noisy scaled sum over the noisy count (not clipped here)
        return count if stat == "count" else float(m.theta_[1, 0]) * count

    return release


def _samples(stat: str) -> tuple[np.ndarray, np.ndarray]:
    D, Dn = _pair()
    seeds = np.random.default_rng(SEED).integers(0, 2**31 - 1, size=2 * RUNS)
    rel = _release(stat)
    a = np.array([rel(D, int(s)) for s in seeds[:RUNS]])
    b = np.array([rel(Dn, int(s)) for s in seeds[RUNS:]])
    return a, b


def _less_noise(monkeypatch: pytest.MonkeyPatch, factor: float) -> None:
    def scaled(values, scale, rng, **kw):  # type: ignore[no-untyped-def]
        return add_laplace(values, scale / factor, rng, **kw)

    monkeypatch.setattr(_naive_bayes, "add_laplace", scaled)


@pytest.mark.parametrize(("stat", "eps"), [("count", EPS_COUNT), ("sum", EPS_SUM)])
def test_gaussian_nb_audit(assert_ratio_within_eps, stat, eps):
    assert_ratio_within_eps(*_samples(stat), eps)


@pytest.mark.parametrize(("stat", "eps"), [("count", EPS_COUNT), ("sum", EPS_SUM)])
def test_gaussian_nb_audit_has_power(assert_ratio_within_eps, monkeypatch, stat, eps):
    _less_noise(monkeypatch, 3.0)
    with pytest.raises(AssertionError):
        assert_ratio_within_eps(*_samples(stat), eps)
