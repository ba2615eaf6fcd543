"""Exact output laws of the classic Gaussian, report-noisy-max and the sparse vector.

Each mechanism is sampled at a fixed size with a fixed seed and compared (KS or chi-square,
alpha = 1e-6) with its law as the papers state it, computed here independently of the code
(numerical integration over the noise); a second comparison against a nearby wrong law must
reject, so each test can fail.  The FP-safe noise lives on a power-of-two grid ``2^-30``
times the scale, a relative perturbation of the law (~1e-9) far below what 20,000 draws see.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import integrate, stats

import veil.dp.mechanisms as M
from veil.dp._samplers import grid_for

ALPHA = 1e-6
N = 20_000


def _laplace_cdf(z: float, b: float) -> float:
    return 0.5 * math.exp(z / b) if z < 0 else 1 - 0.5 * math.exp(-z / b)


def _integrate(f, centres: list[float], scale: float) -> float:
    """``int f`` over the real line; ``f`` decays like a Laplace of ``scale`` around
    ``centres`` (the kinks are given to quad as break points)."""
    lo, hi = min(centres) - 80 * scale, max(centres) + 80 * scale
    pts = sorted(set(centres))
    value, err = integrate.quad(f, lo, hi, points=pts, limit=400, epsabs=1e-13, epsrel=1e-11)
    assert err < 1e-9
    return value


# ----------------------------------------------------------------------------- Gaussian
def test_classic_gaussian_law(seeded):
    eps, delta, sens = 0.5, 1e-5, 1.0
    sigma = math.sqrt(2 * math.log(1.25 / delta)) * sens / eps  # Dwork & Roth 2014, Thm A.1
    m = M.Gaussian(epsilon=eps, delta=delta, sensitivity=sens, random_state=seeded(301))
    out = m.randomise(np.full(N, 7.0)) - 7.0
    assert stats.kstest(out, stats.norm(scale=sigma).cdf).pvalue > ALPHA
    assert np.all(np.mod((out + 7.0) / grid_for(sigma), 1.0) == 0.0)  # on the FP-safe grid
    # power: the analytic Gaussian's (smaller) sigma for the same budget is rejected
    wrong = M.GaussianAnalytic(epsilon=eps, delta=delta, sensitivity=sens).sigma
    assert wrong < 0.9 * sigma
    assert stats.kstest(out, stats.norm(scale=wrong).cdf).pvalue < ALPHA


# ----------------------------------------------------------------------------- report noisy max
def rnm_law(scores: list[float], b: float) -> np.ndarray:
    """``P[argmax_i (s_i + Lap(b)_i) = i] = int f_b(y - s_i) prod_{j != i} F_b(y - s_j) dy``."""
    probs = []
    for i, si in enumerate(scores):
        others = [s for j, s in enumerate(scores) if j != i]

        def f(y: float, si: float = si, others: list[float] = others) -> float:
            dens = math.exp(-abs(y - si) / b) / (2 * b)
            return dens * math.prod(_laplace_cdf(y - s, b) for s in others)

        probs.append(_integrate(f, scores, b))
    p = np.array(probs)
    assert p.sum() == pytest.approx(1.0, abs=1e-9)
    return p


@pytest.mark.parametrize("monotonic", [False, True])
def test_report_noisy_max_law(seeded, chi2_pvalue, monotonic):
    eps, sens = 1.0, 1.0
    scores = [0.0, 1.0, 2.0, 2.5]
    b = (1 if monotonic else 2) * sens / eps  # Dwork & Roth 2014, Claim 3.9
    m = M.ReportNoisyMax(
        epsilon=eps, sensitivity=sens, monotonic=monotonic, random_state=seeded(302 + monotonic)
    )
    picks = np.array([m.randomise(scores) for _ in range(N)])
    support = np.arange(len(scores))
    assert chi2_pvalue(picks, support, rnm_law(scores, b)) > ALPHA
    # power: the law of the other noise scale (b/2 or 2b) is rejected
    other = b / 2 if not monotonic else 2 * b
    assert chi2_pvalue(picks, support, rnm_law(scores, other)) < ALPHA


def test_report_noisy_max_law_with_ties(seeded, chi2_pvalue):
    # equal scores must be exchangeable: the law is symmetric in them
    scores = [1.0, 1.0, 0.0]
    m = M.ReportNoisyMax(epsilon=2.0, sensitivity=1.0, random_state=seeded(304))
    picks = np.array([m.randomise(scores) for _ in range(N)])
    law = rnm_law(scores, 1.0)
    assert law[0] == pytest.approx(law[1], rel=1e-9)
    assert chi2_pvalue(picks, np.arange(3), law) > ALPHA


# ----------------------------------------------------------------------------- sparse vector
def svt_law(
    queries: list[float], threshold: float, b1: float, b2: float, c: int
) -> dict[tuple[bool, ...], float]:
    """Law of the answered prefix of the sparse vector (Lyu, Su & Li 2017, Algorithm 1).

    Given the threshold noise ``r ~ Lap(b1)`` the answers are independent,
    ``P[q_j + Lap(b2) >= T + r] = 1 - F_b2(T + r - q_j)``; the prefix stops at the ``c``-th
    positive.  Each full answer vector's probability is integrated over ``r`` and added to
    its prefix.
    """
    law: dict[tuple[bool, ...], float] = {}
    for full in itertools.product([False, True], repeat=len(queries)):
        hits = np.flatnonzero(full)
        stop = hits[c - 1] + 1 if hits.size >= c else len(full)
        prefix = tuple(full[:stop])
        if prefix in law:
            continue  # the unanswered tail sums to one: integrate each prefix once

        def f(r: float, prefix: tuple[bool, ...] = prefix) -> float:
            dens = math.exp(-abs(r) / b1) / (2 * b1)
            for q, above in zip(queries, prefix):
                below = _laplace_cdf(threshold + r - q, b2)
                dens *= (1 - below) if above else below
            return dens

        centres = [0.0] + [q - threshold for q in queries]
        law[prefix] = _integrate(f, centres, max(b1, b2))
    assert sum(law.values()) == pytest.approx(1.0, abs=1e-9)
    return law


def _svt_scales(eps: float, sens: float, c: int, monotonic: bool) -> tuple[float, float]:
    eps1 = eps / 2
    return sens / eps1, (1 if monotonic else 2) * c * sens / (eps - eps1)


@pytest.mark.parametrize("monotonic", [False, True])
def test_above_threshold_law(seeded, chi2_pvalue, monotonic):
    eps, sens, threshold = 1.0, 1.0, 1.0
    queries = [0.0, 1.0, 2.0]
    rng = seeded(305 + monotonic)
    out = np.empty(N, dtype=np.int64)
    for k in range(N):
        at = M.AboveThreshold(
            epsilon=eps,
            sensitivity=sens,
            threshold=threshold,
            monotonic=monotonic,
            random_state=rng,
        )
        r = at.randomise(queries)
        out[k] = -1 if r is None else r

    def first_above(b1: float, b2: float) -> np.ndarray:
        law = svt_law(queries, threshold, b1, b2, c=1)
        p = [law[tuple([False] * len(queries))]]  # None -> -1
        p += [law[tuple([False] * i + [True])] for i in range(len(queries))]
        return np.array(p)

    b1, b2 = _svt_scales(eps, sens, 1, monotonic)
    support = np.arange(-1, len(queries))
    assert chi2_pvalue(out, support, first_above(b1, b2)) > ALPHA
    # power: the query noise of the other variant is rejected
    wrong_b2 = b2 / 2 if not monotonic else 2 * b2
    assert chi2_pvalue(out, support, first_above(b1, wrong_b2)) < ALPHA


def test_sparse_vector_law_c2(seeded, chi2_pvalue):
    eps, sens, threshold, c = 2.0, 1.0, 1.0, 2
    queries = [0.5, 2.0, 1.0, 3.0]
    law = svt_law(queries, threshold, *_svt_scales(eps, sens, c, False), c=c)
    patterns = sorted(law)
    index = {p: i for i, p in enumerate(patterns)}
    rng = seeded(307)
    out = np.empty(N, dtype=np.int64)
    for k in range(N):
        svt = M.SparseVector(
            epsilon=eps, sensitivity=sens, threshold=threshold, c=c, random_state=rng
        )
        out[k] = index[tuple(bool(a) for a in svt.randomise(queries))]
    support = np.arange(len(patterns))
    assert chi2_pvalue(out, support, np.array([law[p] for p in patterns])) > ALPHA
    # power: the c = 1 query noise (half as large) is rejected
    wrong = svt_law(queries, threshold, *_svt_scales(eps, sens, 1, False), c=c)
    assert chi2_pvalue(out, support, np.array([wrong[p] for p in patterns])) < ALPHA
