"""The diffprivlib mechanisms added for drop-in parity: Staircase, Uniform,
LaplaceBoundedNoise, ExponentialCategorical/Hierarchical, Vector, Bingham, and the exact
base-measure exponential mechanism.  Distribution tests at alpha = 1e-6 with fixed sizes and
seeds, privacy-loss audits on neighbouring inputs, parameter errors, diffprivlib API parity."""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from veil.dp import mechanisms as M
from veil.dp._exact import LazyUniform, u_less_exp
from veil.dp._rng import SecureRandom
from veil.dp.mechanisms._coins import qexp_coins
from veil.errors import ConfigError, InputError, InsecureRandomWarning

from ._audit import audit  # the privacy-loss audit shared with the core mechanisms

ALPHA = 1e-6
N = 20_000

pytestmark = pytest.mark.filterwarnings("ignore::veil.errors.InsecureRandomWarning")


def chi2_pvalue(counts: np.ndarray, probs: np.ndarray) -> float:
    keep = probs > 0
    assert counts[~keep].sum() == 0  # impossible outcomes never appear
    return float(stats.chisquare(counts[keep], probs[keep] / probs[keep].sum() * counts.sum())[1])


# ----------------------------------------------------------------------------- Staircase
def staircase_abs_cdf(x: np.ndarray, eps: float, delta: float, gamma: float) -> np.ndarray:
    """CDF of |X| for the continuous staircase (Geng & Viswanath 2014)."""
    b = math.exp(-eps)
    k = np.floor(x / delta)
    r = x - k * delta
    inside = (np.minimum(r, gamma * delta) + b * np.maximum(r - gamma * delta, 0)) / (
        delta * (gamma + (1 - gamma) * b)
    )
    return 1 - b**k + b**k * (1 - b) * inside


@pytest.mark.parametrize(
    ("eps", "sens", "gamma"),
    [(1.0, 1.0, None), (3.0, 2.5, 0.3), (0.5, 1.0, 0.9), (30.0, 1.0, None)],
)
def test_staircase_distribution(eps, sens, gamma):
    m = M.Staircase(epsilon=eps, sensitivity=sens, gamma=gamma, random_state=11)
    g, d, s = m._grid()
    z = m.randomise(np.full(N, 7.0)) - 7.0
    cdf = staircase_abs_cdf  # continuous law with the effective gamma = s/D, Delta = D g
    p = stats.kstest(np.abs(z), lambda x: cdf(x, eps, d * g, s / d)).pvalue
    assert p > ALPHA
    assert stats.binomtest(int((z > 0).sum()), int((z != 0).sum())).pvalue > ALPHA
    # discrete closed form vs the continuous staircase's E[X^2], period by period
    dd, b, gam = d * g, math.exp(-eps), s / d
    a = (1 - b) / (2 * dd * (gam + (1 - gam) * b))
    k = np.arange(400.0)
    lo, mid, hi = k * dd, (k + gam) * dd, (k + 1) * dd
    cont = 2 * a * np.sum(b**k * ((mid**3 - lo**3) + b * (hi**3 - mid**3)) / 3)
    # (the grid's central step has s points, zero counted once: relative O(1/s) difference)
    assert m.variance(0) == pytest.approx(cont, rel=1e-6 + 2 / s)
    if eps <= 3:  # at eps = 30 the variance comes from events of probability ~3e-7
        assert np.var(z) == pytest.approx(m.variance(0), rel=0.1)


def test_staircase_gamma_default_and_privacy_audit():
    eps = 1.0
    m = M.Staircase(epsilon=eps, sensitivity=1.0, random_state=2)
    assert m.gamma == pytest.approx(1 / (1 + math.exp(eps / 2)))
    a, b = m.randomise(np.zeros(4 * N)), m.randomise(np.ones(4 * N))
    loss = audit(a, b, np.linspace(-6, 7, 53))
    assert loss <= eps
    assert loss > 0.5 * eps  # the staircase does reach ratio e^eps: the audit has power


# ----------------------------------------------------------------------------- Uniform
def test_uniform_distribution_and_delta():
    delta, sens = 0.1, 1.0
    m = M.Uniform(delta=delta, sensitivity=sens, random_state=3)
    g, mm = m._grid()
    assert m.epsilon == 0 and m.delta == delta
    z = m.randomise(np.zeros(N))
    assert np.abs(z).max() <= mm * g
    assert stats.kstest(z, stats.uniform(-mm * g, 2 * mm * g).cdf).pvalue > ALPHA
    assert m.variance(0) == pytest.approx(sens**2 / (12 * delta**2), rel=1e-6)
    # (0, delta): the mass of M(0) that M(sens) can never produce is <= delta
    z2 = m.randomise(np.full(N, sens))
    lost = int((z < z2.min() - g / 2).sum())
    assert stats.binomtest(lost, N, delta, alternative="greater").pvalue > ALPHA
    assert lost > 0.5 * delta * N  # and the bound is nearly attained (tight calibration)


# ----------------------------------------------------------------------------- bounded noise
@pytest.mark.parametrize(("eps", "delta"), [(1.0, 0.1), (0.02, 0.3), (4.0, 1e-4)])
def test_laplace_bounded_noise_distribution(eps, delta):
    m = M.LaplaceBoundedNoise(epsilon=eps, delta=delta, sensitivity=1.0, random_state=4)
    g, t, n = m._params
    bound = 1 / eps * math.log(1 + math.expm1(eps) / (2 * delta))
    assert m.noise_bound == pytest.approx(bound, rel=1e-6)
    z = m.randomise(np.zeros(N))
    assert np.abs(z).max() <= n * g
    bb, big = t * g, n * g
    cdf = lambda x: 0.5 + np.sign(x) * -np.expm1(-np.abs(x) / bb) / (2 * -math.expm1(-big / bb))  # noqa: E731
    assert stats.kstest(z, cdf).pvalue > ALPHA
    assert np.var(z) == pytest.approx(m.variance(0), rel=0.1)


def test_laplace_bounded_noise_privacy_audit():
    eps, delta = 1.0, 0.05
    m = M.LaplaceBoundedNoise(epsilon=eps, delta=delta, sensitivity=1.0, random_state=5)
    a, b = m.randomise(np.zeros(4 * N)), m.randomise(np.ones(4 * N))
    bnd = m.noise_bound
    inner = np.linspace(1 - bnd, bnd, 30)  # overlap of the two supports: ratio <= e^eps
    assert audit(a, b, inner) <= eps
    edge = int((a < 1 - bnd).sum())  # outside the neighbour's support: mass <= delta
    assert stats.binomtest(edge, a.size, delta, alternative="greater").pvalue > ALPHA


# ----------------------------------------------------------------------------- categorical
UTIL = [("a", "b", 1), ("a", "c", 2), ("b", "c", 1.5), ("a", "d", 3), ("b", "d", 2), ("c", "d", 1)]


def test_exponential_categorical_distribution_and_audit():
    eps = 1.5
    m = M.ExponentialCategorical(epsilon=eps, utility_list=UTIL, random_state=6)
    assert m.sensitivity == 3 and m.delta == 0
    dist = {(x, y): u for x, y, u in UTIL} | {(y, x): u for x, y, u in UTIL}
    dom = ["a", "b", "c", "d"]
    freq = {}
    for v in dom:
        w = np.array([math.exp(-eps * dist.get((v, c), 0) / 6) for c in dom])
        draws = [m.randomise(v) for _ in range(4000)]
        counts = np.array([draws.count(c) for c in dom])
        assert chi2_pvalue(counts, w) > ALPHA
        assert m.probabilities(v) == pytest.approx(dict(zip(dom, w / w.sum())))
        freq[v] = counts
    # audit every pair of inputs and outputs: |log ratio| <= eps (4.9-sigma lower bound)
    for v in dom:
        for v2 in dom:
            ha, hb = freq[v].astype(float), freq[v2].astype(float)
            lr = np.abs(np.log(ha / hb)) - 4.9 * np.sqrt(1 / ha + 1 / hb)
            assert lr.max() <= eps


def test_exponential_hierarchical_distances_and_distribution():
    h = [[["A", "B"], ["C"]], [["D", "E"]]]
    m = M.ExponentialHierarchical(epsilon=2.0, hierarchy=h, random_state=7)
    d = {(x, y): u for x, y, u in m.utility_list}
    assert d[("A", "B")] == 1 and d[("A", "C")] == 2 and d[("A", "D")] == 3
    assert d[("D", "E")] == 1 and m.sensitivity == 3
    dom = ["A", "B", "C", "D", "E"]
    w = np.array([math.exp(-2.0 * d.get(("A", c), 0) / 6) for c in dom])
    draws = [m.randomise("A") for _ in range(4000)]
    assert chi2_pvalue(np.array([draws.count(c) for c in dom]), w) > ALPHA
    assert M.ExponentialHierarchical(epsilon=1, hierarchy=["only"]).randomise("only") == "only"


# ----------------------------------------------------------------------------- base measure
def test_exponential_measure_exact_distribution():
    util = [0.0, 4.0, 1.0, 30.0, 29.0, 2.0]
    meas = [1e3, 1e-1, 3.0, 1e-12, 5e-12, 0.0]
    m = M.Exponential(epsilon=2.0, sensitivity=1, utility=util, measure=meas, random_state=8)
    p = m.probabilities()
    ref = np.array(meas) * np.exp(np.array(util) - max(util))  # eps/(2 Delta) = 1
    assert p == pytest.approx(ref / ref.sum())
    counts = np.bincount([m.randomise() for _ in range(8000)], minlength=6)
    assert counts[5] == 0  # zero measure: never chosen
    assert chi2_pvalue(counts, p) > ALPHA
    # extreme range: log-weights spanning thousands of nats stay exact (no underflow loss)
    m2 = M.Exponential(epsilon=1.0, sensitivity=1e-3, utility=[0.0, 3.0], measure=[1.0, 1e-300])
    lw = 500 * 3.0 + math.log(1e-300)  # log weight of candidate 1 relative to candidate 0
    assert lw > 800
    assert all(m2.randomise() == 1 for _ in range(50))
    with pytest.raises(InputError):
        M.Exponential(epsilon=1, sensitivity=0, utility=[1, 2], measure=[1, 0]).randomise()


# ----------------------------------------------------------------------------- Vector
def test_vector_noise_distribution():
    d, n = 4, 50
    m = M.Vector(epsilon=2.0, function_sensitivity=0.25, dimension=d, n=n, random_state=9)
    eps_p, extra = m.calibration()
    assert eps_p == pytest.approx(2.0 - 2 * math.log1p(0.25 / (n * 0.01)))
    assert extra == 0.0
    noise = np.array(
        [m.randomise(lambda w: (0.0, np.zeros(d)))(np.zeros(d))[1] * n for _ in range(3000)]
    )
    norms = np.linalg.norm(noise, axis=1)
    assert stats.kstest(norms, stats.gamma(d, scale=2 / eps_p).cdf).pvalue > ALPHA
    cos2 = (noise[:, 0] / norms) ** 2  # uniform direction: Beta(1/2, (d-1)/2)
    assert stats.kstest(cos2, stats.beta(0.5, (d - 1) / 2).cdf).pvalue > ALPHA
    # the perturbed objective adds b.w/n (+ extra |w|^2/2) to loss and gradient alike
    f = m.randomise(lambda w: float(w @ w))
    w = np.arange(1.0, d + 1)
    assert isinstance(f(w), float)
    assert f(np.zeros(d)) == 0.0  # a linear term only (extra = 0)
    assert f(w) + f(-w) == pytest.approx(2 * float(w @ w))  # the b.w/n parts cancel
    g = m.randomise(lambda w: (float(w @ w), 2 * w))
    loss, grad = g(w)
    b_n = grad - 2 * w  # the gradient's shift b/n ...
    assert np.linalg.norm(b_n) > 0
    assert loss == pytest.approx(float(w @ w) + float(b_n @ w))  # ... is the loss's b.w/n
    # small epsilon: the extra regulariser branch of Chaudhuri et al. (2011), Algorithm 2
    m2 = M.Vector(epsilon=0.1, function_sensitivity=0.25, dimension=d, n=5)
    eps2, extra2 = m2.calibration()
    assert eps2 == 0.05 and extra2 == pytest.approx(0.25 / (5 * math.expm1(0.025)) - 0.01)
    f2 = m2.randomise(lambda w: float(w @ w))
    assert f2(w) + f2(-w) == pytest.approx((2 + extra2) * float(w @ w))  # + extra |w|^2 / 2


# ----------------------------------------------------------------------------- Bingham
def test_bingham_distribution_2d_and_rotated_3d():
    eps = 2.0
    m = M.Bingham(epsilon=eps, random_state=10)
    th = []
    for _ in range(2000):
        v = m.randomise(np.diag([3.0, 0.0]))
        th.append(np.arctan2(v[1], v[0]) % np.pi)
    grid = np.linspace(0, np.pi, 100_001)
    cdf = np.cumsum(np.exp(eps * 3.0 / 2 * np.cos(grid) ** 2))
    cdf /= cdf[-1]
    assert stats.kstest(th, lambda t: np.interp(t, grid, cdf)).pvalue > ALPHA
    # 3-d, rotated: with A = Q diag(l1, l2, l2) Q^T, t = |v . q1| has density ~ exp(kappa t^2)
    q = np.linalg.qr(np.random.default_rng(0).normal(size=(3, 3)))[0]
    a = q @ np.diag([4.0, 1.0, 1.0]) @ q.T
    kappa = eps * 3.0 / 2
    t = np.array([abs(m.randomise(a) @ q[:, 0]) for _ in range(2000)])
    grid = np.linspace(0, 1, 100_001)
    cdf = np.cumsum(np.exp(kappa * grid**2))
    cdf /= cdf[-1]
    assert stats.kstest(t, lambda x: np.interp(x, grid, cdf)).pvalue > ALPHA
    v = m.randomise(a)
    assert np.linalg.norm(v) == pytest.approx(1.0)
    top = M.Bingham(epsilon=1.0, sensitivity=0).randomise(a)
    assert abs(top @ q[:, 0]) == pytest.approx(1.0)


# ----------------------------------------------------------------------------- errors, RNG
@pytest.mark.parametrize(
    ("cls", "kwargs"),
    [
        (M.Staircase, {"epsilon": 0, "sensitivity": 1}),
        (M.Staircase, {"epsilon": 1, "sensitivity": -1}),
        (M.Staircase, {"epsilon": 1, "sensitivity": 1, "gamma": 1.5}),
        (M.Uniform, {"delta": 0.6, "sensitivity": 1}),
        (M.Uniform, {"delta": 0, "sensitivity": 1}),
        (M.LaplaceBoundedNoise, {"epsilon": 1, "delta": 0.5, "sensitivity": 1}),
        (M.LaplaceBoundedNoise, {"epsilon": 0, "delta": 0.1, "sensitivity": 1}),
        (M.ExponentialCategorical, {"epsilon": 1, "utility_list": [("a", "b", 0)]}),
        (M.ExponentialCategorical, {"epsilon": 1, "utility_list": [("a", "b", 1), ("a", "c", 1)]}),
        (M.ExponentialCategorical, {"epsilon": 1, "utility_list": [("a", "b", 1), ("b", "a", 2)]}),
        (M.ExponentialHierarchical, {"epsilon": 1, "hierarchy": [["a", "b"], "c"]}),
        (M.ExponentialHierarchical, {"epsilon": 1, "hierarchy": [["a"], ["a"]]}),
        (M.Vector, {"epsilon": 1, "function_sensitivity": 1, "dimension": 0}),
        (M.Vector, {"epsilon": 1, "function_sensitivity": 1, "dimension": 2, "alpha": 0}),
        (M.Bingham, {"epsilon": 0}),
    ],
)
def test_parameter_errors(cls, kwargs):
    with pytest.raises(ConfigError):
        cls(**kwargs)


def test_input_errors_and_secure_default():
    with pytest.raises(InputError):
        M.ExponentialCategorical(epsilon=1, utility_list=UTIL).randomise("zz")
    with pytest.raises(InputError):
        M.Bingham(epsilon=1).randomise(np.array([[1.0, 2.0], [0.0, 1.0]]))
    with pytest.raises(InputError):
        M.Vector(epsilon=1, function_sensitivity=1, dimension=2).randomise(3.0)
    with pytest.raises(InputError):
        M.Staircase(epsilon=1, sensitivity=1).randomise(float("nan"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the default generator is secure: no warning
        assert M.Staircase(epsilon=1, sensitivity=1)._rng.secure
        assert M.Uniform(delta=0.1, sensitivity=1)._rng.secure
    with pytest.warns(InsecureRandomWarning):
        M.Bingham(epsilon=1, random_state=3)
    assert isinstance(M.Laplace(epsilon=1, sensitivity=1), M.DPMachine)


# ----------------------------------------------------------------------------- diffprivlib
def _calls(mech, value):
    """What randomise / bias / variance do: a type name, or the exception class."""
    out = {}
    for name in ("randomise", "bias", "variance"):
        try:
            res = getattr(mech, name)(value)
            out[name] = "callable" if callable(res) else type(np.asarray(res).ravel()[0].item())
        except NotImplementedError:
            out[name] = NotImplementedError
    return out


def test_diffprivlib_drop_in():
    dpl = pytest.importorskip("diffprivlib.mechanisms")
    cases = [
        ("Staircase", {"epsilon": 1.0, "sensitivity": 1.0}, 3.0),
        ("Staircase", {"epsilon": 1.0, "sensitivity": 1.0, "gamma": 0.2}, 3.0),
        ("Uniform", {"delta": 0.1, "sensitivity": 1.0}, 3.0),
        ("LaplaceBoundedNoise", {"epsilon": 1.0, "delta": 0.1, "sensitivity": 1.0}, 3.0),
        ("ExponentialCategorical", {"epsilon": 1.0, "utility_list": UTIL}, "a"),
        ("ExponentialHierarchical", {"epsilon": 1.0, "hierarchy": [["a", "b"], ["c", "d"]]}, "a"),
        ("Bingham", {"epsilon": 1.0, "sensitivity": 1.0}, np.diag([3.0, 1.0, 0.5])),
        (
            "Vector",
            {"epsilon": 1.0, "function_sensitivity": 0.25, "dimension": 3, "n": 100},
            lambda w: (float(w @ w), 2 * w),
        ),
        (
            "Exponential",
            {"epsilon": 1.0, "sensitivity": 1, "utility": [1, 2], "measure": [1, 2]},
            None,
        ),
    ]
    for name, kwargs, value in cases:
        ours, theirs = getattr(M, name)(**kwargs), getattr(dpl, name)(**kwargs)
        ca, cb = _calls(ours, value), _calls(theirs, value)
        assert ca["randomise"] == cb["randomise"], name
        for meth in ("bias", "variance"):  # Veil may define more, never less
            if cb[meth] is not NotImplementedError:
                assert ca[meth] is float, (name, meth)
        if name == "Vector":
            f = ours.randomise(value)
            assert len(f(np.zeros(3))) == len(theirs.randomise(value)(np.zeros(3)))
        if name.startswith("ExponentialH"):
            assert ours.utility_list == [(a, b, float(u)) for a, b, u in theirs.utility_list]
        if name in ("Uniform", "Staircase") and cb["variance"] is float:
            assert ours.variance(value) == pytest.approx(theirs.variance(value), rel=1e-6)
    assert {n for n in dir(dpl) if n[0].isupper()} <= set(M.__all__)


@pytest.mark.parametrize("meas", [[np.inf, 1.0], [np.nan, 1.0], [0.0, 0.0], [-1.0, 1.0], [1.0]])
def test_exponential_measure_rejected_at_construction(meas):
    with pytest.raises(ConfigError, match="measure must be finite"):
        M.Exponential(epsilon=1.0, sensitivity=1, utility=[0.0, 1.0], measure=meas)


# ----------------------------------------------------------------------------- exact coins
@pytest.mark.parametrize(
    ("num", "q", "gamma", "expected"),
    [
        (1 << 62, Fraction(1, 2), Fraction(0), True),  # U ~ 1/4 < 1/2
        (3 << 62, Fraction(1, 2), Fraction(0), False),  # U ~ 3/4 > 1/2
        (1 << 63, Fraction(1, 4), Fraction(-1), True),  # U ~ 1/2 < e/4 ~ 0.68
        (3 << 62, Fraction(1, 4), Fraction(-1), False),  # U ~ 3/4 > e/4
        (1 << 63, Fraction(0), Fraction(0), False),  # q = 0: never
    ],
)
def test_u_less_exp_with_factor(num, q, gamma, expected):
    """``u_less_exp(u, gamma, q)`` decides ``U < q exp(-gamma)`` (used by ``qexp_coins``)."""
    u = LazyUniform(num, 64, SecureRandom(0))
    assert u_less_exp(u, gamma, q) is expected


def test_qexp_coins_frequency():
    """``qexp_coins`` draws ``Bernoulli(q exp(-gamma))`` (binomial test at ALPHA)."""
    q, gamma, n = Fraction(3, 2), 1.2, N
    hits = int(qexp_coins(q, gamma, n, SecureRandom(5)).sum())
    p = float(q) * math.exp(-gamma)
    assert stats.binomtest(hits, n, p).pvalue > ALPHA


@pytest.mark.parametrize(
    ("cls", "kwargs"),
    [
        (M.Staircase, {"sensitivity": 1}),
        (M.LaplaceBoundedNoise, {"delta": 0.1, "sensitivity": 1}),
        (M.ExponentialCategorical, {"utility_list": UTIL}),
        (M.Vector, {"function_sensitivity": 1, "dimension": 2}),
        (M.Bingham, {}),
        (M.Exponential, {"sensitivity": 1, "utility": [1, 2]}),
        (M.PermuteAndFlip, {"sensitivity": 1, "utility": [1, 2]}),
        (M.ReportNoisyMax, {}),
        (M.SparseVector, {"sensitivity": 1, "threshold": 0}),
        (M.AboveThreshold, {"sensitivity": 1, "threshold": 0}),
        (M.Geometric, {}),
        (M.GeometricTruncated, {"lower": 0, "upper": 3}),
    ],
)
@pytest.mark.parametrize("eps", [0, 0.0, -1.0])
def test_pure_mechanisms_need_positive_epsilon(cls, kwargs, eps):
    """The shared base check names the mechanism and runs before the generator is resolved."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no InsecureRandomWarning: rejected before the seed
        with pytest.raises(ConfigError, match=f"{cls.__name__} needs epsilon > 0"):
            cls(epsilon=eps, random_state=1, **kwargs)
    assert cls(epsilon=0.5, random_state=1, **kwargs).epsilon == 0.5
