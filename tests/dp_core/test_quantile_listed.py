"""DP quantiles over a public candidate list (``candidates=``, OpenDP-style).

The release is one of the listed values, chosen by permute-and-flip on the midrank score
``|(#{x < c} + #{x <= c}) / 2 - q n|`` at ``eps / 2`` (values clamped to the candidates'
range).  The oracles are written from that definition (``scores`` below, and the
permute-and-flip law ``pf_pmf`` of test_quantile_candidates.py), not from the implementation.
Statistical tests: fixed seeds, fixed sample sizes, alpha = 1e-6.
"""

from __future__ import annotations

import inspect
import itertools
import warnings

import numpy as np
import pandas as pd
import pytest

import veil.dp as dp
from veil.dp._rng import SecureRandom
from veil.dp.tools._quantile_candidates import listed_quantiles
from veil.errors import ConfigError, InputError, InsecureRandomWarning

from ._audit import audit
from .test_quantile_candidates import chi2_pvalue, max_privacy_loss, pf_pmf

ALPHA = 1e-6
# uneven spacing, negative and fractional values
CANDS = np.array([-0.5, 0.25, 1.0, 2.5, 3.0])
# ties on candidates, values between candidates and outside their range (clamped)
DATA = [-1.0, 0.25, 0.6, 1.0, 1.0, 1.7, 2.5, 2.5, 2.9, 4.0]
FUNCS = ["quantile", "nanquantile", "percentile", "nanpercentile", "median", "nanmedian"]


def scores(data: list[float], q: float, cands: np.ndarray = CANDS) -> np.ndarray:
    """The midrank score of every candidate, from the definition (values clamped)."""
    x = np.clip(np.asarray(data, dtype=float), cands[0], cands[-1])
    n = x.size
    return np.array([abs(((x < c).sum() + (x <= c).sum()) / 2 - q * n) for c in cands])


def call(name: str, data: object, q: float, **kw: object) -> object:
    """``dp.tools.<name>`` at the quantile ``q`` (percentiles in percent, medians q = 0.5)."""
    f = getattr(dp.tools, name)
    if "median" in name:
        assert q == 0.5
        return f(data, **kw)
    return f(data, q * 100 if "percentile" in name else q, **kw)


# -------------------------------------------------------------------- the output law
@pytest.mark.parametrize(("q", "eps"), [(0.5, 1.0), (0.3, 0.4), (0.9, 3.0)])
def test_listed_quantile_matches_exact_permute_and_flip(q, eps):
    pmf = pf_pmf(scores(DATA, q), eps / 2)
    draws = listed_quantiles(np.array(DATA), np.full(12_000, q), eps, CANDS, SecureRandom(11))
    assert set(np.unique(draws)) <= set(CANDS)
    assert chi2_pvalue(draws, CANDS, pmf) > ALPHA
    # the test has power: the law at twice the epsilon is rejected
    assert chi2_pvalue(draws, CANDS, pf_pmf(scores(DATA, q), eps)) < ALPHA


@pytest.mark.parametrize("name", FUNCS)
def test_public_functions_follow_the_law_and_split_epsilon(name):
    """Each public function, float and integer input: exact law at eps / 2; two quantiles in
    one call are two draws at eps / 4 each (epsilon split as without candidates)."""
    q = 0.5 if "median" in name else 0.3
    eps = 0.8
    pmf = pf_pmf(scores(DATA, q), eps / 2)
    x = np.array(DATA)
    draws = np.array(
        [call(name, x, q, epsilon=eps, bounds=(-2, 5), candidates=CANDS, random_state=s)
         for s in range(2500)]
    )  # fmt: skip
    assert chi2_pvalue(draws, CANDS, pmf) > ALPHA
    if "median" not in name:
        f = getattr(dp.tools, name)
        qq = [q * 100] * 2 if "percentile" in name else [q] * 2
        pairs = np.array(
            [f(x, qq, epsilon=eps, bounds=(-2, 5), candidates=CANDS, random_state=s)
             for s in range(1500)]
        )  # fmt: skip
        assert pairs.shape == (1500, 2) and np.all(pairs[:, 0] <= pairs[:, 1])
        assert chi2_pvalue(pairs.ravel(), CANDS, pf_pmf(scores(DATA, q), eps / 4)) > ALPHA


def test_integer_input_uses_the_listed_candidates():
    """Integer dtype with candidates: the list is the support (fractional outputs); the dtype
    selects nothing (``integer=True`` with a list is refused, see
    test_quantile_declared_integer)."""
    ints = np.array([1, 2, 2, 3, 5, 5, 5, 7, 8, 8], dtype=np.int64)
    cands = np.array([0.5, 2.5, 4.5, 6.5])
    pmf = pf_pmf(scores(ints.tolist(), 0.5, cands), 1.0 / 2)
    draws = np.array(
        [dp.tools.median(ints, epsilon=1.0, bounds=(0, 10), candidates=cands, random_state=s)
         for s in range(2500)]
    )  # fmt: skip
    assert chi2_pvalue(draws, cands, pmf) > ALPHA


def test_output_is_always_a_candidate():
    rng = np.random.default_rng(4)
    cands = np.sort(rng.uniform(0, 100, 50))
    x = rng.normal(40, 30, (300, 3))  # values outside the candidates' range too
    for eps in (1e-6, 0.05, 1.0, 1e6):
        out = dp.tools.quantile(
            x, [0.1, 0.5, 0.99], epsilon=eps, bounds=(0, 100), axis=0, candidates=cands[::-1],
            random_state=int(eps * 7) % 1000,
        )  # fmt: skip
        assert out.shape == (3, 3) and np.isin(out, cands).all()
        assert np.all(np.diff(out, axis=0) >= 0)  # monotone in q
    y = x.copy()
    y[::7, 1] = np.nan
    out = dp.tools.nanpercentile(y, 50, bounds=(0, 100), axis=0, candidates=cands, random_state=1)
    assert np.isin(out, cands).all()
    ints = pd.Series([3, None, 7, 9], dtype="Int64")
    assert dp.tools.nanmedian(ints, bounds=(0, 10), candidates=[2.5, 7.25]) in (2.5, 7.25)


def test_axis_and_large_epsilon_release_the_true_candidate_per_column():
    cols = np.column_stack([np.full(101, 10.0), np.full(101, 20.0), np.full(101, 30.0)])
    out = dp.tools.median(
        cols, epsilon=300.0, bounds=(0, 40), axis=0, candidates=[10, 20, 30], random_state=5
    )
    assert out.tolist() == [10.0, 20.0, 30.0]
    out = dp.tools.median(cols.T, epsilon=300.0, bounds=(0, 40), axis=1, keepdims=True,
                          candidates=[10, 20, 30], random_state=6)  # fmt: skip
    assert out.shape == (3, 1) and out.ravel().tolist() == [10.0, 20.0, 30.0]


# ------------------------------------------------------------------------ privacy
def _neighbours(base: list[float], values: list[float], add_remove: bool) -> list[list[float]]:
    out = [base[:i] + [v] + base[i + 1 :] for i in range(len(base)) for v in values]
    if add_remove:  # a record switching between a value and NaN (the nan* functions)
        out += [base[:i] + base[i + 1 :] for i in range(len(base))]
        out += [base + [v] for v in values]
    return out


@pytest.mark.parametrize("q", [0.5, 0.2, 0.9])
def test_exact_privacy_loss_on_every_neighbour(q):
    """Every multiset of 4 values (on, between and outside the candidates) against each
    neighbour: the exact loss stays within eps (replace one, and add/remove for nan*), and
    the same selection without the factor 1/2 exceeds it -- the check can fail."""
    eps = 1.0
    values = [-1.0, 0.25, 0.6, 1.0, 2.7, 4.0]
    worst, worst_uncal = 0.0, 0.0
    for d in itertools.combinations_with_replacement(values, 4):
        s = scores(list(d), q)
        pa, pa2 = pf_pmf(s, eps / 2), pf_pmf(s, eps)
        for nb in _neighbours(list(d), values, add_remove=True):
            sb = scores(nb, q)
            worst = max(worst, max_privacy_loss(pa, pf_pmf(sb, eps / 2)))
            worst_uncal = max(worst_uncal, max_privacy_loss(pa2, pf_pmf(sb, eps)))
    assert 0.5 * eps < worst <= eps + 1e-9
    assert worst_uncal > 1.05 * eps


def test_empirical_privacy_audit_replace_one():
    """Sampled releases of the real function on the worst replace-one pair found by the exact
    search (loss 0.93 eps): every bucket's log-ratio stays within eps; a mechanism run at
    3x the epsilon is caught (negative control)."""
    eps, n_draws = 1.0, 40_000
    d1 = np.array([-1.0, 0.25, 1.0, 1.0, 2.5, 2.5])
    d2 = d1.copy()
    d2[0] = 2.9  # replace one record
    bins = np.concatenate([[CANDS[0] - 1], (CANDS[:-1] + CANDS[1:]) / 2, [CANDS[-1] + 1]])
    exact = max_privacy_loss(pf_pmf(scores(d1, 0.5), eps / 2), pf_pmf(scores(d2, 0.5), eps / 2))
    assert 0.9 * eps < exact <= eps
    rng = SecureRandom(7)
    qs = np.full(n_draws, 0.5)
    a = listed_quantiles(d1, qs, eps, CANDS, rng)
    b = listed_quantiles(d2, qs, eps, CANDS, rng)
    assert audit(a, b, bins) <= eps
    a3 = listed_quantiles(d1, qs, 3 * eps, CANDS, rng)
    b3 = listed_quantiles(d2, qs, 3 * eps, CANDS, rng)
    assert audit(a3, b3, bins, min_count=100) > eps
    # the public function draws the same law on both neighbours
    for data in (d1, d2):
        draws = np.array(
            [dp.tools.median(data, epsilon=eps, bounds=(-2, 5), candidates=CANDS, random_state=s)
             for s in range(2000)]
        )  # fmt: skip
        assert chi2_pvalue(draws, CANDS, pf_pmf(scores(data, 0.5), eps / 2)) > ALPHA


# --------------------------------------------------------------------------- NaN
@pytest.mark.parametrize("name", ["nanquantile", "nanpercentile", "nanmedian"])
def test_nan_variants_skip_nan_privately(name):
    q = 0.5
    x = np.array(DATA[:5] + [np.nan, np.nan] + DATA[5:] + [np.nan])
    pmf = pf_pmf(scores(DATA, q), 0.6 / 2)  # the law on the non-NaN values
    draws = np.array(
        [call(name, x, q, epsilon=0.6, bounds=(-2, 5), candidates=CANDS, random_state=s)
         for s in range(2000)]
    )  # fmt: skip
    assert chi2_pvalue(draws, CANDS, pmf) > ALPHA
    # an all-NaN cell has n = 0: uniform over the candidates, not a constant
    empty = np.array(
        [call(name, np.full(3, np.nan), q, epsilon=1.0, bounds=(-2, 5), candidates=CANDS,
              random_state=s) for s in range(1000)]
    )  # fmt: skip
    assert chi2_pvalue(empty, CANDS, np.full(CANDS.size, 0.2)) > ALPHA


@pytest.mark.parametrize("name", ["quantile", "percentile", "median"])
def test_plain_functions_still_refuse_nan(name):
    acc = dp.BudgetAccountant()
    with pytest.raises(InputError, match="NaN"):
        call(name, [1.0, np.nan], 0.5, bounds=(0, 5), candidates=[1, 2], accountant=acc)
    assert acc.spent_budget == []


# -------------------------------------------------------------------- validation
BAD = [
    ([1.0, 2.0, 1.0], "distinct"),
    ([], "1 to 2"),
    ([[1.0, 2.0]], "1-d"),
    (1.5, "1-d"),
    (["1", "2"], "dtype"),
    ([1.0, np.nan], "finite"),
    ([1.0, np.inf], "finite"),
    ([1.0, 11.0], "inside the bounds"),
    ([-0.5, 1.0], "inside the bounds"),
    ([0.0, -0.0], "distinct"),
    (np.arange(2**20 + 1.0) / 2**20, "2\\*\\*20"),
]


@pytest.mark.parametrize("name", FUNCS)
@pytest.mark.parametrize(("bad", "match"), BAD)
def test_invalid_candidates_raise_before_the_accountant_is_charged(name, bad, match):
    acc = dp.BudgetAccountant(epsilon=5.0)
    with pytest.raises(ConfigError, match=match):
        call(name, [1.0, 2.0, 3.0], 0.5, bounds=(0, 10), candidates=bad, accountant=acc)
    assert acc.spent_budget == []


def test_other_invalid_combinations_are_typed_errors_before_spending():
    acc = dp.BudgetAccountant(epsilon=5.0)
    x = [1.0, 2.0, 3.0]
    with pytest.raises(ConfigError, match="explicit bounds"):
        dp.tools.median(x, bounds="estimate", candidates=[1.0], accountant=acc)
    with pytest.raises(ConfigError, match="bounds"):
        dp.tools.median(x, candidates=[1.0], accountant=acc)  # bounds still required
    with pytest.raises(ConfigError, match="inside the bounds"):  # per-output bounds
        dp.tools.median(np.ones((3, 2)), bounds=([0, 2], [5, 5]), axis=0, candidates=[1.0, 3.0],
                        accountant=acc)  # fmt: skip
    with pytest.raises(ConfigError, match="did you mean 'candidates'"):
        dp.tools.median(x, bounds=(0, 5), candidate=[1.0], accountant=acc)
    with pytest.raises(TypeError):  # keyword only: no positional slot was taken
        dp.tools.median(x, 1.0, (0, 5), None, False, None, acc, [1.0])
    assert acc.spent_budget == []
    dp.tools.median(x, bounds=(0, 5), candidates=[1.0], accountant=acc)  # one candidate is fine
    assert acc.total().epsilon == 1.0


# ------------------------------------------------------- unchanged without candidates
def test_omitting_candidates_keeps_the_diffprivlib_behaviour():
    """diffprivlib's positional signature is unchanged, ``candidates=None`` is the default
    path bit for bit (same seed, same release), and float input still gets Smith's continuous
    release (not a grid)."""
    dpl = [
        "array",
        "quant",
        "epsilon",
        "bounds",
        "axis",
        "keepdims",
        "random_state",
        "accountant",
    ]  # fmt: skip  (diffprivlib 0.6.6 tools.quantile, then **unused_args)
    params = inspect.signature(dp.tools.quantile).parameters
    positional = [p for p, v in params.items() if v.kind is v.POSITIONAL_OR_KEYWORD]
    assert positional == dpl
    assert params["candidates"].kind is inspect.Parameter.KEYWORD_ONLY
    x = np.random.default_rng(2).normal(40, 15, 500)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InsecureRandomWarning)
        for name in FUNCS:
            q = 0.5
            a = call(name, x, q, epsilon=0.5, bounds=(0, 100), random_state=3)
            b = call(name, x, q, epsilon=0.5, bounds=(0, 100), random_state=3, candidates=None)
            assert a == b
        smith = np.array(
            [dp.tools.median(x, epsilon=1.0, bounds=(0, 100), random_state=s) for s in range(200)]
        )
    assert np.unique(smith).size == smith.size  # continuous draws


def test_median_scores_are_opendps_on_float_candidates():
    """Porting check: for the median, Veil's scores on a float candidate list are OpenDP's
    ``make_quantile_score_candidates`` scores up to OpenDP's integer scaling."""
    odp = pytest.importorskip("opendp.prelude")
    from veil.dp.tools._quantile_candidates import candidate_counts, midrank_scores

    odp.enable_features("contrib")
    data = [-0.5, 0.25, 0.6, 1.0, 1.0, 1.7, 2.5, 2.5, 2.9, 3.0]  # inside the candidates' range
    space = (odp.vector_domain(odp.atom_domain(T=float, nan=False)), odp.symmetric_distance())
    t = space >> odp.t.then_quantile_score_candidates(CANDS.tolist(), alpha=0.5)
    theirs = np.asarray(t(data), dtype=float)
    ours = midrank_scores(*candidate_counts(np.array(data), CANDS), len(data), 0.5)
    np.testing.assert_allclose(theirs / theirs.max(), ours / ours.max())
