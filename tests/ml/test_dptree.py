"""Greedy DP decision trees and forests: budget accounting, utilities, privacy-loss audits."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import veil.dp as dp
from veil.dp._rng import resolve_rng
from veil.errors import BudgetError, ConfigError
from veil.ml import DecisionTreeClassifier, RandomForestClassifier, _dptree, _forest

Z = 4.9  # one-sided normal quantile for alpha ~ 5e-7 per compared bucket


def _rng(seed: int):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return resolve_rng(np.random.default_rng(seed))


def _max_log_ratio_excess(a: np.ndarray, b: np.ndarray, eps: float, min_count: int = 100) -> float:
    """Largest ``|log(a/b)| - eps - Z * sd`` over buckets with enough mass in both samples.

    ``a`` and ``b`` are bucket counts of equal-size samples on neighbouring inputs; a value
    above 0 means some bucket's probability ratio exceeds ``e^eps`` beyond sampling error.
    """
    keep = (a >= min_count) & (b >= min_count)
    assert keep.sum() >= 2, "audit needs buckets with mass under both inputs"
    a, b = a[keep].astype(float), b[keep].astype(float)
    sd = np.sqrt(1 / a + 1 / b)
    return float(np.max(np.abs(np.log(a / b)) - eps - Z * sd))


# ------------------------------------------------------------------------------ accounting
@pytest.mark.parametrize("max_depth", [None, 3])
def test_accountant_charged_epsilon_once(max_depth):
    X = _rng(1).random(4000).reshape(2000, 2)
    y = (X[:, 0] > 0.3).astype(int)
    acc = dp.BudgetAccountant(epsilon=1.0)
    for est in (
        DecisionTreeClassifier(max_depth, epsilon=0.4, bounds=(0, 1), accountant=acc),
        RandomForestClassifier(4, max_depth=max_depth, epsilon=0.5, bounds=(0, 1), accountant=acc),
    ):
        est.fit(X, y)
    assert acc.total()[0] == pytest.approx(0.9)
    with pytest.raises(BudgetError):
        DecisionTreeClassifier(epsilon=0.2, bounds=(0, 1), accountant=acc).fit(X, y)
    assert acc.total()[0] == pytest.approx(0.9)


@pytest.mark.parametrize("n_estimators", [1, 3])
@pytest.mark.parametrize("max_depth", [None, 0, 4])
def test_budget_split_sums_to_epsilon(monkeypatch, n_estimators, max_depth):
    """Record every epsilon the mechanisms receive: count + per tree (levels + leaves) = eps
    (the trees see disjoint rows, so they compose in parallel)."""
    spent: dict[str, list[float]] = {"count": [], "split": [], "leaf": []}
    real_count, real_split, real_leaf = (
        _forest.noisy_count,
        _dptree.select_splits,
        _dptree.noisy_leaf_counts,
    )

    def count(n, eps, rng):
        spent["count"].append(eps)
        return real_count(n, eps, rng)

    def split(u, eps, rng):
        spent["split"].extend([eps] * len(u))  # one selection per node of the level
        return real_split(u, eps, rng)

    def leaf(leaves, codes, n_leaves, k, eps, rng):
        spent["leaf"].append(eps)
        return real_leaf(leaves, codes, n_leaves, k, eps, rng)

    monkeypatch.setattr(_forest, "noisy_count", count)
    monkeypatch.setattr(_dptree, "select_splits", split)
    monkeypatch.setattr(_dptree, "noisy_leaf_counts", leaf)
    X = _rng(2).random(6000).reshape(3000, 2)
    y = (X[:, 1] > 0.6).astype(int)
    eps = 0.8
    rf = RandomForestClassifier(
        n_estimators, max_depth=max_depth, epsilon=eps, bounds=(0, 1), random_state=_rng(3)
    ).fit(X, y)
    depth = rf.max_depth_
    assert len(spent["leaf"]) == n_estimators
    assert len(spent["split"]) == n_estimators * (2**depth - 1)
    per_tree = spent["leaf"][0] + depth * (spent["split"][0] if depth else 0.0)
    assert sum(spent["count"]) + per_tree == pytest.approx(eps)
    assert len(spent["count"]) == (1 if max_depth is None else 0)


def test_max_depth_validation_and_auto_rule():
    X = np.linspace(0, 1, 400).reshape(200, 2)
    y = (X[:, 0] > 0.5).astype(int)
    for bad in (True, -1, 17, 2.5, "3"):
        with pytest.raises(ConfigError):
            DecisionTreeClassifier(bad, bounds=(0, 1)).fit(X, y)
    assert [_dptree.auto_depth(n, 1.0) for n in (1, 255, 256, 512, 1023, 1e6)] == [1, 1, 1, 2, 2, 8]
    tree = DecisionTreeClassifier(epsilon=1.0, bounds=(0, 1), random_state=_rng(4)).fit(X, y)
    assert 1 <= tree.max_depth_ <= _dptree.MAX_AUTO_DEPTH
    assert tree.leaf_counts_.shape == (2**tree.max_depth_, 2)


# ------------------------------------------------------------------------------ utilities
def test_split_utilities_match_brute_force_and_are_monotone_with_sensitivity_one():
    rng = np.random.default_rng(5)
    lo, hi = np.zeros(3), np.array([1.0, 2.0, 10.0])
    cand = _dptree.candidate_thresholds(lo, hi, 7)
    for _ in range(20):
        n = int(rng.integers(0, 60))
        X = rng.uniform(lo, hi, (n, 3))
        on_grid = rng.random((n, 3)) < 0.3  # values exactly on a candidate threshold
        X = np.where(on_grid, cand[np.arange(3), rng.integers(0, 7, (n, 3))], X)
        codes = rng.integers(0, 3, n)
        u = _dptree.split_utilities(X, codes, 3, cand)
        brute = [
            np.bincount(codes[X[:, f] <= t], minlength=3).max()
            + np.bincount(codes[X[:, f] > t], minlength=3).max()
            for f in range(3)
            for t in cand[f]
        ]
        np.testing.assert_array_equal(u, brute)
        x1 = rng.uniform(lo, hi, (1, 3))
        u1 = _dptree.split_utilities(
            np.vstack([X, x1]), np.append(codes, rng.integers(0, 3)), 3, cand
        )
        assert set(np.unique(u1 - u)) <= {0, 1}  # monotone, sensitivity 1


def test_count_below_agrees_with_threshold_comparisons():
    """The O(n) count of thresholds below each value equals the routing comparisons, also
    on values exactly on (or one ulp off) a threshold and on degenerate intervals."""
    rng = np.random.default_rng(12)
    for _ in range(300):
        m, k = int(rng.integers(1, 5)), int(rng.integers(1, 20))
        lo = rng.uniform(-3, 3, m)
        w = rng.choice([0.0, 1e-300, 1e-9, 1.0, 7.3, 1e6], m)
        th = _dptree.candidate_thresholds(lo, lo + w, k)
        a = rng.integers(0, m, 400)
        x = np.where(
            rng.random(400) < 0.5,
            th[a, rng.integers(0, k, 400)],
            lo[a] + rng.uniform(-0.2, 1.2, 400) * w[a],
        )
        x = np.where(rng.random(400) < 0.2, np.nextafter(x, rng.choice([-np.inf, np.inf], 400)), x)
        np.testing.assert_array_equal(
            _dptree._count_below(x, th, a), (x[:, None] > th[a]).sum(axis=1)
        )


def test_leaf_counts_come_from_the_rows_routed_as_at_prediction():
    """build_tree counts each row in the leaf it reaches while growing; that must be the leaf
    GreedyTree.leaves sends it to (checked with negligible noise, on values on thresholds)."""
    rng = _rng(13)
    X = rng.random(3000).reshape(1000, 3)
    X[::5] = 8 / 17  # exactly on a root candidate threshold of every feature
    codes = (X[:, 0] + X[:, 2] > 1).astype(np.int64) + (X[:, 1] > 0.5)
    tree, counts = _dptree.build_tree(X, codes, 3, np.zeros(3), np.ones(3), 4, 1e9, rng)
    exact = np.bincount(tree.leaves(X) * 3 + codes, minlength=16 * 3).reshape(16, 3)
    np.testing.assert_allclose(counts, exact, atol=1e-3)
    assert counts.sum() == pytest.approx(len(X), abs=1e-3)


def _reference_tree(X, codes, n_classes, depth, eps, rng):
    """build_tree's algorithm with every level's utilities recounted from scratch."""
    n, d = X.shape
    eps_leaf = _dptree.LEAF_SHARE * eps
    eps_level = (eps - eps_leaf) / depth
    feature = np.zeros(2**depth - 1, dtype=np.int64)
    threshold = np.zeros(2**depth - 1)
    box_lo, box_hi = np.zeros((1, d)), np.ones((1, d))
    node = np.zeros(n, dtype=np.int64)
    for level in range(depth):
        cand = _dptree.candidate_thresholds(box_lo, box_hi)
        u = _dptree.split_utilities(X, codes, n_classes, cand, node)
        picks = _dptree.select_splits(u, eps_level, rng)
        k, first = cand.shape[2], 2**level - 1
        child_lo, child_hi = np.repeat(box_lo, 2, axis=0), np.repeat(box_hi, 2, axis=0)
        for i, p in enumerate(picks.tolist()):
            f, t = divmod(p, k)
            feature[first + i], threshold[first + i] = f, cand[i, f, t]
            child_hi[2 * i, f] = child_lo[2 * i + 1, f] = cand[i, f, t]
        box_lo, box_hi = child_lo, child_hi
        at = first + node
        node = 2 * node + (X[np.arange(n), feature[at]] > threshold[at])
    return feature, threshold


@pytest.mark.parametrize("eps", [0.5, 50.0])
def test_incremental_bins_give_the_from_scratch_tree(eps):
    """build_tree recounts only the split feature's thresholds after each level; with the same
    random stream it must choose exactly the splits of recounting every feature each level
    (values placed on candidate thresholds of several levels included)."""
    X = _rng(5).random(6000).reshape(2000, 3)
    X[::7, 1] = 8 / 17
    X[::11, 2] = 4 / 17 * 8 / 17
    codes = ((X[:, 0] > 0.3) ^ (X[:, 1] + X[:, 2] > 0.9)).astype(np.int64)
    tree, _ = _dptree.build_tree(X, codes, 2, np.zeros(3), np.ones(3), 6, eps, _rng(9))
    feature, threshold = _reference_tree(X, codes, 2, 6, eps, _rng(9))
    np.testing.assert_array_equal(tree.feature, feature)
    np.testing.assert_array_equal(tree.threshold, threshold)


def test_batched_split_selection_follows_the_exponential_mechanism():
    """Chi-square of 20,000 draws against the exact probabilities exp(eps u) / Z."""
    from scipy import stats

    from veil.dp.mechanisms import Exponential

    u = np.array([10.0, 12.0, 12.0, 9.0, 13.0, 11.5, 0.0])
    eps = 0.9
    n = 20000
    picks = _dptree.select_splits(np.tile(u, (n, 1)), eps, _rng(11))
    p = Exponential(epsilon=eps, sensitivity=1, utility=u, monotonic=True).probabilities()
    expected = n * p
    observed = np.bincount(picks, minlength=u.size)
    keep = expected >= 5
    chi2 = (((observed - expected) ** 2) / expected)[keep].sum()
    assert observed[~keep].sum() <= max(5, 10 * expected[~keep].sum())
    assert stats.chi2.sf(chi2, keep.sum() - 1) > 1e-6


def test_greedy_tree_finds_a_threshold_on_a_skewed_feature():
    """Random thresholds rarely cut near 0.05 of the domain; the greedy grid refines there."""
    rng = _rng(6)
    X = rng.random(40000).reshape(20000, 2) ** 6  # mass near 0
    y = (X[:, 0] > 0.05).astype(int)
    tree = DecisionTreeClassifier(6, epsilon=1.0, bounds=(0, 1), random_state=rng).fit(X, y)
    assert tree.score(X, y) > 0.97


def test_adult_tree_and_forest_beat_majority_class(adult_xy):
    X, y = adult_xy
    majority = max(y.mean(), 1 - y.mean())
    rng = _rng(7)
    tree = DecisionTreeClassifier(epsilon=1.0, bounds=(0, 1), random_state=rng).fit(X, y)
    forest = RandomForestClassifier(epsilon=1.0, bounds=(0, 1), random_state=rng).fit(X, y)
    assert tree.score(X, y) > majority + 0.03
    assert forest.score(X, y) > majority + 0.03


# ------------------------------------------------------------------------------ audits
def _leaf_audit_counts(eps: float, scale_factor: float, n_draws: int, seed: int):
    """Histogram the noisy count of the cell one added row changes, on D and D + row."""
    rng = _rng(seed)
    tree = _dptree.GreedyTree(1, np.array([0]), np.array([0.5]))
    X = np.array([[0.2], [0.7], [0.8], [0.1]])
    codes = np.array([1, 0, 1, 0])
    X2, codes2 = np.vstack([X, [[0.3]]]), np.append(codes, 1)  # lands in leaf 0, class 1
    edges = np.arange(-3.0, 6.0)
    out = []
    for Xd, cd in ((X, codes), (X2, codes2)):
        vals = [
            _dptree.noisy_leaf_counts(tree.leaves(Xd), cd, 2, 2, eps * scale_factor, rng)[0, 1]
            for _ in range(n_draws)
        ]
        out.append(np.histogram(vals, bins=edges)[0])
    return out


def test_leaf_counts_privacy_loss_audit():
    """No bucket of the changed leaf count has probability ratio above e^eps (Laplace(1/eps)
    with parallel composition over leaves); the same attack catches a mechanism spending
    twice the budget it claims."""
    eps = 1.0
    a, b = _leaf_audit_counts(eps, 1.0, 6000, 8)
    assert _max_log_ratio_excess(a, b, eps) <= 0
    a, b = _leaf_audit_counts(eps, 2.0, 6000, 9)  # noise scale 1/(2 eps): leaks 2 eps
    assert _max_log_ratio_excess(a, b, eps) > 0


def _split_audit_counts(eps_level: float, n_draws: int, seed: int):
    """Histogram the split chosen at the root on D and D + row (``n_draws`` selections each,
    through the same utilities and sampler as :func:`_dptree.build_tree`)."""
    rng = _rng(seed)
    cand = _dptree.candidate_thresholds(np.zeros(1), np.ones(1))
    X = np.array([[0.05], [0.15], [0.45], [0.55], [0.9], [0.95]])
    codes = np.array([0, 1, 0, 1, 0, 1])
    X2, codes2 = np.vstack([X, [[0.02]]]), np.append(codes, 1)
    out = []
    for Xd, cd in ((X, codes), (X2, codes2)):
        u = _dptree.split_utilities(Xd, cd, 2, cand)
        picks = _dptree.select_splits(np.tile(u, (n_draws, 1)), eps_level, rng)
        out.append(np.bincount(picks, minlength=u.size))
    return out


def test_split_selection_privacy_loss_audit():
    """The split released at a node: probability ratio <= e^(eps_level) on neighbouring data
    (every bucket); an audit claiming a quarter of that budget fails."""
    eps_level = 2.0
    a, b = _split_audit_counts(eps_level, 20000, 10)
    assert _max_log_ratio_excess(a, b, eps_level) <= 0
    # power: the observed loss (about 0.6 eps_level here) exceeds a quarter of the budget
    assert _max_log_ratio_excess(a, b, eps_level / 4) > 0
