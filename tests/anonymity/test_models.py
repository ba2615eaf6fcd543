"""Privacy models: EMD variants against independent formulas (scipy), monotonicity claims."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import linprog
from scipy.stats import wasserstein_distance

from veil.anonymity import (
    ClassStats,
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    RecursiveCLDiversity,
    TCloseness,
    encode_sensitive,
    evaluate,
)
from veil.anonymity._tcloseness import emd
from veil.errors import ConfigError
from veil.schema import Hierarchy

HIER = Hierarchy.from_mapping(
    {
        "flu": ["respiratory", "illness", "*"],
        "cold": ["respiratory", "illness", "*"],
        "asthma": ["respiratory", "illness", "*"],
        "gastritis": ["digestive", "illness", "*"],
        "ulcer": ["digestive", "illness", "*"],
        "broken arm": ["injury", "accident", "*"],
        "burn": ["injury", "accident", "*"],
    }
)


def _random(seed, m=6, n=300, classes=12):
    rng = np.random.default_rng(seed)
    vals = rng.integers(0, m, n) * 10
    cls = rng.integers(0, classes, n)
    return vals, cls


def _lp_emd(p, q, dist):
    """EMD as a transportation linear program (independent oracle)."""
    m = len(p)
    c = dist.ravel()
    a_eq, b_eq = [], []
    for i in range(m):
        row = np.zeros((m, m))
        row[i, :] = 1
        a_eq.append(row.ravel())
        b_eq.append(p[i])
    for j in range(m):
        col = np.zeros((m, m))
        col[:, j] = 1
        a_eq.append(col.ravel())
        b_eq.append(q[j])
    res = linprog(c, A_eq=np.array(a_eq), b_eq=np.array(b_eq), bounds=(0, None), method="highs")
    return res.fun


@pytest.mark.parametrize("seed", range(4))
def test_equal_and_ordered_emd(seed):
    vals, cls = _random(seed)
    sc = encode_sensitive(pd.Series(vals), "v")
    st = ClassStats.from_codes(cls, sensitive={"v": sc})
    m = sc.n_values
    eq = emd(st.sensitive["v"], st.sizes, "equal")
    od = emd(st.sensitive["v"], st.sizes, "ordered")
    pos = np.arange(m)
    for c in range(st.n_classes):
        p = np.bincount(sc.codes[cls == c], minlength=m) / np.sum(cls == c)
        assert eq[c] == pytest.approx(0.5 * np.abs(p - sc.global_freq).sum(), abs=1e-12)
        w = wasserstein_distance(pos, pos, p, sc.global_freq) / (m - 1)
        assert od[c] == pytest.approx(w, abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_hierarchical_emd_matches_linear_program(seed):
    rng = np.random.default_rng(seed)
    leaves = HIER.values
    vals = rng.choice(leaves, 200, p=rng.dirichlet(np.ones(len(leaves))))
    cls = rng.integers(0, 6, 200)
    sc = encode_sensitive(pd.Series(vals), "d", HIER)
    st = ClassStats.from_codes(cls, sensitive={"d": sc})
    got = emd(st.sensitive["d"], st.sizes, "hierarchical")
    m, height = len(leaves), HIER.height - 1
    dist = np.zeros((m, m))
    for i in range(m):
        for j in range(m):
            lvl = next(lv for lv in range(HIER.height) if HIER.codes(lv)[i] == HIER.codes(lv)[j])
            dist[i, j] = lvl / height
    for c in range(st.n_classes):
        p = np.bincount(sc.codes[cls == c], minlength=m) / np.sum(cls == c)
        assert got[c] == pytest.approx(_lp_emd(p, sc.global_freq, dist), abs=1e-7)


def test_l_diversity_variants():
    y = pd.Series(["a"] * 6 + ["b"] * 3 + ["c"] * 1 + ["a", "b"])
    cls = np.array([0] * 10 + [1, 1])
    sc = encode_sensitive(y, "y")
    st = ClassStats.from_codes(cls, sensitive={"y": sc})
    assert DistinctLDiversity("y", 3).violating(st).tolist() == [False, True]
    h0 = -(0.6 * np.log(0.6) + 0.3 * np.log(0.3) + 0.1 * np.log(0.1))
    e = EntropyLDiversity("y", float(np.exp(h0)))
    assert e.violating(st).tolist() == [False, True]  # class 1 has entropy log 2 < h0
    assert EntropyLDiversity("y", 2.0).violating(st).tolist() == [False, False]
    assert EntropyLDiversity("y", float(np.exp(h0)) + 0.01).violating(st).tolist() == [True, True]
    # recursive (c,2): r1 < c (r2 + r3): 6 < c * 4
    assert RecursiveCLDiversity("y", 2, 1.51).violating(st).tolist() == [False, False]
    assert RecursiveCLDiversity("y", 2, 1.5).violating(st).tolist() == [True, False]  # strict
    assert RecursiveCLDiversity("y", 3, 6.01).violating(st).tolist() == [False, True]


def test_monotone_claims_hold_under_merging():
    """Merging classes never breaks a model flagged monotone (generalization property)."""
    rng = np.random.default_rng(5)
    for _ in range(30):
        vals, cls = _random(int(rng.integers(1e6)), m=4, n=120, classes=10)
        sc = encode_sensitive(pd.Series(vals), "v")
        merged = cls // 2
        models = [
            KAnonymity(8),
            DistinctLDiversity("v", 3),
            EntropyLDiversity("v", 2.5),
            RecursiveCLDiversity("v", 2, 2.0),
            TCloseness("v", 0.25),
            TCloseness("v", 0.2, "ordered"),
        ]
        fine = ClassStats.from_codes(cls, sensitive={"v": sc})
        coarse = ClassStats.from_codes(merged, sensitive={"v": sc})
        for mdl in models:
            assert mdl.monotone
            v_fine, v_coarse = mdl.violating(fine), mdl.violating(coarse)
            ok_fine = ~v_fine
            # a merged class whose parts all satisfy the model satisfies it too
            both_ok = np.bincount(merged[np.arange(len(cls))], weights=None, minlength=5) > 0
            parts_ok = np.ones(coarse.n_classes, dtype=bool)
            for c in range(fine.n_classes):
                parts_ok[c // 2] &= ok_fine[c]
            assert not (v_coarse & parts_ok & both_ok).any(), mdl.describe()


def test_evaluate_with_suppression():
    st = ClassStats(np.array([1, 2, 5, 7]))
    ev = evaluate([KAnonymity(3)], st, max_suppressed=3)
    assert ev.holds and ev.n_suppressed == 3 and ev.violating.tolist() == [True, True, False, False]
    ev = evaluate([KAnonymity(3)], st, max_suppressed=2)
    assert not ev.holds and "k-anonymity" in ev.failed[0]


def test_model_parameter_errors():
    with pytest.raises(ConfigError):
        KAnonymity(0)
    with pytest.raises(ConfigError):
        TCloseness("x", 1.5)
    with pytest.raises(ConfigError):
        TCloseness("x", 0.2, "hierarchical")
    with pytest.raises(ConfigError):
        TCloseness("x", 0.2, "manhattan")
    with pytest.raises(ConfigError):
        EntropyLDiversity("x", 0.5)
