"""Statistical helpers for the DP-core tests (alpha = 1e-6, fixed seeds and sizes)."""

from __future__ import annotations

import warnings
import zlib
from collections.abc import Callable, Iterator

import numpy as np
import pytest
from scipy import stats

from veil.dp import _rng
from veil.dp._rng import SecureRandom
from veil.errors import InsecureRandomWarning

ALPHA = 1e-6


def _chi2_pvalue(samples: np.ndarray, support: np.ndarray, pmf: np.ndarray) -> float:
    """Chi-square goodness of fit of integer samples against ``pmf`` on ``support``;
    bins with expected count < 5 are merged into the two tails."""
    n = samples.size
    pmf = pmf / pmf.sum()
    exp = pmf * n
    keep = exp >= 5
    lo, hi = support[keep].min(), support[keep].max()
    inner = support[(support >= lo) & (support <= hi)]
    obs_inner = np.array([(samples == v).sum() for v in inner], dtype=float)
    exp_inner = exp[(support >= lo) & (support <= hi)]
    obs = np.concatenate([[(samples < lo).sum()], obs_inner, [(samples > hi).sum()]])
    ex = np.concatenate([[exp[support < lo].sum()], exp_inner, [exp[support > hi].sum()]])
    mask = ex > 0
    if (obs[~mask] > 0).any():
        return 0.0
    return float(stats.chisquare(obs[mask], ex[mask] * obs[mask].sum() / ex[mask].sum()).pvalue)


@pytest.fixture
def chi2_pvalue() -> Callable[[np.ndarray, np.ndarray, np.ndarray], float]:
    return _chi2_pvalue


@pytest.fixture
def seeded() -> Callable[[int], SecureRandom]:
    """A reproducible (insecure) generator: tests only."""

    def make(seed: int) -> SecureRandom:
        return SecureRandom(seed)

    return make


@pytest.fixture(autouse=True)
def _quiet_insecure() -> Iterator[None]:
    """Seeded generators are expected in these tests: silence their warning (scoped)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InsecureRandomWarning)
        yield


@pytest.fixture
def seeded_default(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Calls without ``random_state`` draw from the process's secure generator, so a
    statistical test that makes them passes or fails at random (a 0.2 rel. tolerance on the
    std of 400 Laplace draws fails about 5 runs in 10,000).  This fixture swaps that generator
    for one seeded from the test's name for the test's duration: its draws, and its verdict,
    are the same on every run, in any order and on any xdist worker."""
    seed = zlib.crc32(request.node.name.encode())
    monkeypatch.setattr(_rng, "_DEFAULT", SecureRandom(seed))
