"""DP quantiles: exact output distributions and privacy-loss audits on neighbouring inputs.

Integer-typed input uses permute-and-flip over the integer candidates with the midrank score
``|lt(c) + cnt(c) / 2 - q n|`` and ``eps / 2``; float input uses Smith's interval mechanism.  The
oracles below are written from the mechanisms' definitions (not from the implementation):
the permute-and-flip distribution is enumerated over permutations or computed from
independent coins, and privacy losses are computed exactly on every pair of neighbours of a
small universe.  Statistical tests use fixed seeds, fixed sample sizes and alpha = 1e-6.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import veil.dp as dp
from veil.dp._rng import SecureRandom
from veil.dp.tools._quantile_candidates import candidate_quantiles, integer_candidates
from veil.errors import ConfigError, InsecureRandomWarning

ALPHA = 1e-6


# ------------------------------------------------------------------------------- oracles
def scores(data: list[int], q: float, first: int, k: int) -> np.ndarray:
    """``|(#{x < c} + #{x <= c}) / 2 - q n|`` for every candidate, from the definition."""
    n = len(data)
    out = []
    for c in range(first, first + k):
        lt = sum(1 for x in data if min(max(x, first), first + k - 1) < c)
        le = sum(1 for x in data if min(max(x, first), first + k - 1) <= c)
        out.append(abs((lt + le) / 2 - q * n))
    return np.array(out)


def pf_pmf(score: np.ndarray, t: float) -> np.ndarray:
    """Permute-and-flip output distribution: coin ``exp(-t (s_i - min s))`` for each candidate,
    first accepted in a uniform random order = uniform over the accepted set.  Computed with
    the Poisson-binomial law of the number of *other* accepted candidates."""
    p = np.exp(-t * (score - score.min()))
    out = np.empty(p.size)
    for r in range(p.size):
        law = np.array([1.0])  # law of the number of accepted candidates other than r
        for j in np.delete(np.arange(p.size), r):
            law = np.concatenate([law * (1 - p[j]), [0.0]]) + np.concatenate([[0.0], law * p[j]])
        out[r] = p[r] * float(np.sum(law / np.arange(1, law.size + 1)))
    return out


def pf_pmf_by_permutations(score: np.ndarray, t: float) -> np.ndarray:
    """The definition (McKenna & Sheldon 2020): average over all orders of 'first heads'."""
    p = np.exp(-t * (score - score.min()))
    out = np.zeros(p.size)
    perms = list(itertools.permutations(range(p.size)))
    for perm in perms:
        survive = 1.0
        for i in perm:
            out[i] += survive * p[i]
            survive *= 1 - p[i]
    return out / len(perms)


def em_pmf(score: np.ndarray, t: float) -> np.ndarray:
    w = np.exp(-t * (score - score.min()))
    return w / w.sum()


def chi2_pvalue(samples: np.ndarray, support: np.ndarray, pmf: np.ndarray) -> float:
    """Chi-square goodness of fit; cells with expected count < 5 are pooled into one."""
    counts = np.array([(samples == v).sum() for v in support], dtype=float)
    assert counts.sum() == samples.size, "a draw outside the support"
    exp = pmf / pmf.sum() * samples.size
    small = exp < 5
    obs = np.append(counts[~small], counts[small].sum())
    ex = np.append(exp[~small], exp[small].sum())
    keep = ex > 0
    assert np.all(obs[~keep] == 0)
    return float(stats.chisquare(obs[keep], ex[keep]).pvalue)


def max_privacy_loss(pa: np.ndarray, pb: np.ndarray) -> float:
    return float(np.max(np.abs(np.log(pa) - np.log(pb))))


# -------------------------------------------------------------------- the distribution
def test_pf_oracles_agree():
    score = np.array([3.0, 0.5, 0.0, 1.5, 4.0, 0.5])
    for t in (0.1, 0.7, 3.0):
        np.testing.assert_allclose(pf_pmf(score, t), pf_pmf_by_permutations(score, t), atol=1e-12)


@pytest.mark.parametrize(("q", "eps"), [(0.5, 1.0), (0.25, 0.4), (0.9, 3.0)])
def test_integer_quantile_matches_exact_permute_and_flip(q, eps):
    data = [1, 2, 2, 3, 5, 5, 5, 7, 8, 8]  # ties, gaps and a value outside the bounds
    first, k = integer_candidates(0.5, 7.5)  # candidates 1..7; 8 is clamped to 7
    pmf = pf_pmf(scores(data, q, first, k), eps / 2)
    rng = SecureRandom(11)
    draws = candidate_quantiles(np.array(data, float), np.full(12_000, q), eps, first, k, rng)
    assert chi2_pvalue(draws, np.arange(first, first + k), pmf) > ALPHA


def test_exact_coin_settling_path(monkeypatch):
    """With a deliberately huge float error bound most coins are settled by exact rational
    arithmetic: the law must not change."""
    from veil.dp.tools import _quantile_candidates as qc

    monkeypatch.setattr(qc, "_U", 2.0**-8)
    data = [1, 2, 2, 3, 5, 5, 5, 7]
    pmf = pf_pmf(scores(data, 0.5, 0, 9), 0.8 / 2)
    draws = candidate_quantiles(
        np.array(data, float), np.full(3000, 0.5), 0.8, 0, 9, SecureRandom(3)
    )
    assert chi2_pvalue(draws, np.arange(9), pmf) > ALPHA


def test_public_median_of_integer_column_matches_exact_distribution():
    data = np.array([3, 4, 4, 4, 6, 9, 9, 10], dtype=np.int64)
    pmf = pf_pmf(scores(data.tolist(), 0.5, 0, 13), 0.6 / 2)
    draws = np.array(
        [
            dp.tools.median(data, epsilon=0.6, bounds=(0, 12), integer=True, random_state=s)
            for s in range(3000)
        ]
    )
    assert chi2_pvalue(draws, np.arange(0, 13), pmf) > ALPHA
    # several quantiles split epsilon: each one is drawn with eps / 2 (sorted afterwards)
    pair = np.array(
        [
            dp.tools.quantile(
                data, [0.5, 0.5], epsilon=1.2, bounds=(0, 12), integer=True, random_state=s
            )
            for s in range(1500)
        ]
    )
    pmf_pair = pf_pmf(scores(data.tolist(), 0.5, 0, 13), 0.3)
    assert np.all(pair[:, 0] <= pair[:, 1])
    # the multiset of the two draws is two independent draws from the eps/2 distribution
    assert chi2_pvalue(pair.ravel(), np.arange(0, 13), pmf_pair) > ALPHA


def test_permute_and_flip_is_never_less_accurate_than_the_exponential_mechanism():
    # exact expected |error| on tied, age-like data (for the median OpenDP uses this score)
    rng = np.random.default_rng(5)
    data = np.clip(np.round(rng.normal(38, 13, 3000)), 17, 90).astype(int).tolist()
    score = scores(data, 0.5, 17, 74)
    cands = np.arange(17, 91)
    truth = np.median(data)
    for eps in (0.001, 0.01, 0.1):
        pf = pf_pmf(score, eps / 2) @ np.abs(cands - truth)
        em = em_pmf(score, eps / 2) @ np.abs(cands - truth)
        assert pf <= em + 1e-12


# -------------------------------------------------------------------- privacy audits
def _universe(n: int, values: range) -> list[tuple[int, ...]]:
    return list(itertools.combinations_with_replacement(values, n))


@pytest.mark.parametrize("q", [0.5, 0.2, 0.9])
def test_exact_privacy_loss_replace_one_and_add_remove(q):
    """Every multiset of 4 values in 0..4 against each neighbour (replace one record, and add /
    remove one value for the nan* functions): the exact loss never exceeds eps, while the same
    mechanism calibrated with eps (no factor 1/2) does exceed it -- the audit can fail."""
    eps = 1.0
    first, k = 0, 5
    worst, worst_uncal = 0.0, 0.0
    for d in _universe(4, range(5)):
        base = list(d)
        neighbours = []
        for i in range(len(base)):
            for v in range(5):
                neighbours.append(base[:i] + [v] + base[i + 1 :])  # replace
            neighbours.append(base[:i] + base[i + 1 :])  # remove (a value becomes NaN)
        neighbours += [base + [v] for v in range(5)]  # add
        s = scores(base, q, first, k)
        pa, pa2 = pf_pmf(s, eps / 2), pf_pmf(s, eps)
        for nb in neighbours:
            sb = scores(nb, q, first, k)
            worst = max(worst, max_privacy_loss(pa, pf_pmf(sb, eps / 2)))
            worst_uncal = max(worst_uncal, max_privacy_loss(pa2, pf_pmf(sb, eps)))
    assert worst <= eps + 1e-9
    assert worst > 0.5 * eps  # the calibration is not loose by a factor of 2
    assert worst_uncal > eps * 1.05


def test_empirical_privacy_audit_integer_median():
    """Sampled audit on the worst replace-one pair: bucket ratios stay within e^eps."""
    eps = 1.0
    d1 = [0, 1, 1, 3, 4, 4]
    d2 = [0, 1, 1, 0, 4, 4]  # replace one 3 by a 0
    rng = SecureRandom(7)
    a = candidate_quantiles(np.array(d1, float), np.full(25_000, 0.5), eps, 0, 5, rng)
    b = candidate_quantiles(np.array(d2, float), np.full(25_000, 0.5), eps, 0, 5, rng)
    ha = np.bincount(a.astype(int), minlength=5).astype(float)
    hb = np.bincount(b.astype(int), minlength=5).astype(float)
    ok = (ha >= 200) & (hb >= 200)
    lr = np.abs(np.log(ha[ok] / a.size) - np.log(hb[ok] / b.size))
    slack = 4.9 * np.sqrt(1 / ha[ok] + 1 / hb[ok])  # ~ alpha 1e-6 on the log ratio
    assert np.all(lr - slack <= eps)
    # and the sampled frequencies match the exact law of each input
    for draws, data in ((a, d1), (b, d2)):
        assert chi2_pvalue(draws, np.arange(5), pf_pmf(scores(data, 0.5, 0, 5), eps / 2)) > ALPHA


def _smith_density(data: list[float], q: float, t: float, lo: float, hi: float, x: np.ndarray):
    z = np.sort(np.clip(data, lo, hi))
    edges = np.concatenate([[lo], z, [hi]])
    length = np.diff(edges)
    i = np.arange(length.size)
    w = np.exp(-t * np.abs(i - q * z.size))
    rank = np.searchsorted(z, x, side="right")  # interval holding x (x not on an edge)
    return w[rank] / np.sum(length * w)


def test_exact_privacy_loss_smith_interval_mechanism():
    """Float path: the output density on random replace-one neighbours, including adversarial
    ones (a tight cluster below the median and a long gap above it)."""
    eps, q = 1.0, 0.5
    rng = np.random.default_rng(3)
    grid = np.linspace(0.0005, 99.9995, 20_000)
    cases = [([10, 10.01, 10.02, 10.03, 90, 95], [10, 10.01, 10.02, 99, 90, 95])]
    for _ in range(200):
        d = rng.uniform(0, 100, 7)
        d2 = d.copy()
        d2[rng.integers(7)] = rng.uniform(0, 100)
        cases.append((d.tolist(), d2.tolist()))
    worst = 0.0
    for d, d2 in cases:
        x = grid[~np.isin(grid, np.concatenate([d, d2]))]
        pa = _smith_density(d, q, eps / 2, 0, 100, x)
        pb = _smith_density(d2, q, eps / 2, 0, 100, x)
        worst = max(worst, max_privacy_loss(pa, pb))
    assert worst <= eps + 1e-9


# --------------------------------------------------------------------------- behaviour
def test_median_score_is_opendps_quantile_score():
    odp = pytest.importorskip("opendp.prelude")
    odp.enable_features("contrib")
    data = [1, 2, 2, 3, 5, 5, 5, 7]
    cands = list(range(0, 9))
    t = (odp.vector_domain(odp.atom_domain(T=int)), odp.symmetric_distance()) >> (
        odp.t.then_quantile_score_candidates(cands, alpha=0.5)
    )
    theirs = np.array(t(data), dtype=float)
    ours = scores(data, 0.5, 0, 9)
    np.testing.assert_allclose(theirs / theirs.max(), ours / ours.max())


def test_integer_paths_edge_cases():
    assert integer_candidates(0.2, 0.8) is None  # no integer inside: interval mechanism
    assert integer_candidates(0, 2**21) is None  # too many: interval mechanism, floored


def test_extreme_epsilons_are_safe():
    x = np.array([1, 2, 2, 3, 5, 5, 7] * 100, dtype=np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # numpy overflow / invalid
        warnings.simplefilter("ignore", InsecureRandomWarning)  # the seeded generator
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            huge = [
                dp.tools.median(x, epsilon=1.7e308, bounds=(0, 10), integer=True, random_state=s)
                for s in range(3)
            ]
            tiny = [
                dp.tools.median(x, epsilon=1e-300, bounds=(0, 10), integer=True, random_state=s)
                for s in range(20)
            ]
    assert huge == [3.0, 3.0, 3.0]
    assert set(tiny) <= set(np.arange(11.0)) and len(set(tiny)) > 3  # ~uniform over 0..10


def test_midrank_score_is_consistent_on_tied_data():
    """q = 0.9 on tied data where the target rank sits low in its block of ties: the midrank
    score picks the true quantile (OpenDP's fraction-q point would pick its neighbour)."""
    data = [1] * 40 + [2] * 40 + [3] * 40 + [4] * 40 + [5] * 20  # 0.9 n = 162: 10% into the 5s
    first, k = integer_candidates(0, 6)
    truth = float(np.quantile(data, 0.9, method="inverted_cdf"))
    draws = candidate_quantiles(
        np.array(data, float), np.full(200, 0.9), 20.0, first, k, SecureRandom(9)
    )
    assert np.all(draws == truth)
    fraction_q = np.array(
        [abs(sum(x < c for x in data) + 0.9 * data.count(c) - 162) for c in range(7)]
    )
    assert int(np.argmin(fraction_q)) != truth  # the alternative really is biased here
    big = np.arange(0, 3_000_000, 3, dtype=np.int64)
    m = dp.tools.median(big, epsilon=1.0, bounds=(0, 3_000_000), integer=True, random_state=1)
    assert m == math.floor(m) and abs(m - np.median(big)) < 1000
    with pytest.raises(ConfigError, match="no integer"):  # an integer release is impossible
        dp.tools.median(np.array([0, 1, 1]), epsilon=1, bounds=(0.2, 0.8), integer=True)
    # booleans declared integer: candidates {0, 1}
    flags = np.array([True] * 80 + [False] * 20)
    assert dp.tools.median(flags, epsilon=5.0, bounds=(0, 1), integer=True, random_state=2) == 1.0
    # pandas nullable integers: nanmedian skips NA privately and stays on the integers
    s = pd.Series([20, 21, None, 21, 22, 21, None], dtype="Int64")
    m = dp.tools.nanmedian(s, epsilon=50.0, bounds=(0, 100), integer=True, random_state=4)
    assert m == 21.0
    # axis: one integer median per column
    cols = np.tile(np.array([[10], [20], [30]]), (1, 200)).T.reshape(200, 3)
    out = dp.tools.median(cols, epsilon=30.0, bounds=(0, 40), axis=0, integer=True, random_state=5)
    assert out.tolist() == [10.0, 20.0, 30.0]


def test_all_nan_cell_is_a_uniform_draw_not_a_constant():
    """An all-NaN cell has n = 0: every score is 0, so the release must be uniform over the
    bounds (floats) or the candidates (integers) -- a fixed value would tell it apart from a
    neighbour holding one value with certainty."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InsecureRandomWarning)
        floats = np.array(
            [
                dp.tools.nanmedian(np.array([np.nan, np.nan]), epsilon=1.0, bounds=(0, 10),
                                   random_state=s)
                for s in range(400)
            ]
        )  # fmt: skip
        ints = np.array(
            [
                dp.tools.nanmedian(pd.array([None, None], dtype="Int64"), epsilon=1.0,
                                   bounds=(0, 4), integer=True, random_state=s)
                for s in range(500)
            ]
        )  # fmt: skip
    assert stats.kstest(floats, stats.uniform(0, 10).cdf).pvalue > ALPHA
    support = np.arange(5)
    assert chi2_pvalue(ints, support, np.full(5, 0.2)) > ALPHA


def test_wide_integer_fallback_stays_integer_with_fractional_bounds():
    """Floored interval releases are clamped to ceil(lo) .. floor(hi), never to a fractional
    bound (clipping the floor to ``lo = 0.5`` would release 0.5 for integer input)."""
    # clamped to 0.5, the zeros leave one interval of positive width at rank 25: [0.5, 1)
    v = np.repeat(np.array([0, 1], dtype=np.int64), 25)
    out = dp.tools.quantile(
        v, [0.01, 0.5], epsilon=50.0, bounds=(0.5, 2**21 + 0.5), integer=True, random_state=3
    )
    assert np.all(out == np.floor(out)) and np.all((out >= 1) & (out <= 2**21))


def test_grouped_permute_and_flip_matches_per_group_law(monkeypatch):
    """All groups at once (PrivateFrame's path): each group follows its own exact law, also when
    the coins are settled exactly (huge float error bound) and the accepted sets differ in size."""
    from veil.dp.tools import _quantile_candidates as qc

    monkeypatch.setattr(qc, "_U", 2.0**-8)
    datasets = [[1, 2, 2, 3, 5, 5, 5, 7], [0, 0, 8, 8, 8], [4]]
    k, reps, eps = 9, 1500, 0.8
    cnt = np.array([np.bincount(d, minlength=k) for d in datasets] * reps)
    lt = np.cumsum(cnt, axis=1) - cnt
    n = cnt.sum(axis=1)
    picks = qc.pf_quantile_groups(lt, cnt, n, 0.5, eps, SecureRandom(5)).reshape(reps, -1)
    for g, data in enumerate(datasets):
        pmf = pf_pmf(scores(data, 0.5, 0, k), eps / 2)
        assert chi2_pvalue(picks[:, g], np.arange(k), pmf) > ALPHA
