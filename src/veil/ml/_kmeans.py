"""Differentially private k-means: a noisy grid synopsis for the start, then Lloyd iterations
with noisy sums and counts (Su et al.'s EUGkM + DPLloyd hybrid)."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from veil._checks import positive_int, user_stacklevel
from veil.errors import AccuracyWarning, ConfigError, InputError
from veil.ml._base import (
    DPEstimatorMixin,
    check_array_2d,
    check_n_features,
    check_privacy_params,
    group_sums,
    resolve_bounds,
)
from veil.ml._budget import Charge, atomic_fit
from veil.ml._noise import COUNT_SHARE, add_laplace, check_laplace, noisy_count, resolve_rng

__all__ = ["KMeans"]


class KMeans(DPEstimatorMixin, ClusterMixin, TransformerMixin, BaseEstimator):
    """k-means clustering with epsilon-differential privacy.

    The hybrid of Su, Cao, Li, Bertino & Jin (2016), "Differentially private k-means
    clustering", CODASPY, and Su, Cao, Li, Bertino, Lyu & Jin (2017), "Differentially private
    k-means clustering and a hybrid approach to private optimization", ACM TOPS: a noisy grid
    synopsis (their EUGkM) picks the initial centres, then DPLloyd refines them.

    *Initialisation* (``init="auto"``).  Half of the centre budget, ``eps_h``, releases the
    counts of the rows in a uniform grid of ``M = m^d`` cells over the bounds, each plus
    Laplace(``1 / eps_h``) noise (a row lies in one cell: L1 sensitivity 1), with EUGkM's grid
    size ``m = floor((n eps_h / 10)^{2 / (2 + d)})`` per feature.  Cells whose noisy count is
    below ``ln(M) / eps_h`` are dropped: an empty cell passes with probability
    ``exp(-ln M) / 2 = 1 / (2 M)``, so about half a spurious cell survives in all, instead of
    ``M / 2`` cells of positive noise drowning the data.  Non-private k-means (k-means++
    seeding, 10 restarts) on the surviving cell centres weighted by their noisy counts gives
    the initial centres.  That is post-processing of the released counts, so the restarts are
    free: Lloyd from data-independent centres (the old default) lands in a poor local optimum
    in many runs even without noise, which the restarts on the synopsis avoid.  The choice
    between this and the fallback depends only on ``d``, ``epsilon`` and a Laplace-noised row
    count ``n_hat`` (``COUNT_SHARE`` = 2 % of the non-inertia budget, sensitivity 1: the
    privacy unit is one row added or removed, so the exact ``n`` is never used to plan).  ``m``
    is lowered until ``M <= 2^20`` cells (memory); when it is then below 2 (too little data or
    budget for two cells per feature, or more than 20 features), the centre budget goes to
    DPLloyd from data-independent centres (``init="sphere"``: Su et al.'s sphere packing inside
    the bounds), with ``n_iter`` iterations, by default chosen from ``n_hat`` too.  ``init="sphere"`` with an explicit ``n_iter`` needs no count and spends
    nothing on it.

    *Refinement* (DPLloyd).  Each of ``n_iter`` iterations assigns points to the nearest centre
    and releases, per cluster, a noisy count and a noisy per-feature sum (clusters are disjoint:
    parallel composition).  Per iteration the budget is split between count and sum in the ratio
    ``1 : (4 d rho^2)^{1/3}`` with ``rho = 0.225`` (Su et al.'s analysis).  After the grid
    initialisation the default is one iteration with the remaining half: the initial centres
    are a fixed point of k-means on the synopsis, so one step removes most of the grid's
    quantisation bias, while ``T`` steps would each get ``1 / T`` of the budget (``T^2`` times
    the noise variance in the final centres).  Each released centre is the posterior mean of the
    cluster mean under a uniform prior on the bounds given the noisy mean (per coordinate,
    Laplace noise of scale ``(d / eps_sum) / count``, the noisy count taken as exact):
    post-processing that equals the noisy mean when the noise is small and shrinks towards the
    middle of the bounds when it is not, instead of clipping noise-dominated centres onto the
    faces of the box (far from any data).  A fraction
    ``inertia_share`` (default 0.05) of the budget is kept to release a noisy ``inertia_`` (sum
    of squared distances, each clipped to ``inertia_clip``, by default the squared diameter
    ``D^2`` of the bounds: Laplace noise of scale ``D^2 / (inertia_share * epsilon)``; replacing
    one point moves the clipped sum by at most the cap), so that reading ``inertia_`` does not
    leak.  Its 95 % confidence half-width is ``inertia_ci_`` (public: it depends only on the
    bounds and the budget); when it exceeds the estimate an :class:`~veil.errors.AccuracyWarning`
    says the released inertia is mostly noise (small tables, wide bounds, small epsilon), and a
    larger ``inertia_share`` (or ``0`` to skip it) is the remedy.

    Parameters
    ----------
    n_clusters : int, default 8
    epsilon : float, default 1.0
    bounds : (lower, upper) or "data"
        Per-feature bounds (required).
    n_iter : int, optional
        Number of Lloyd iterations; default 1 after the grid initialisation, otherwise from Su
        et al.'s guideline (between 2 and 7, fewer when the budget per point is small).
    init : {"auto", "sphere"}, default "auto"
        ``"auto"``: the noisy-grid initialisation when the grid is affordable (see above),
        else ``"sphere"``; ``"sphere"``: data-independent sphere-packing centres and the whole
        centre budget to DPLloyd.
    inertia_share : float, default 0.05
        Fraction of ``epsilon`` spent on the private ``inertia_``, in ``[0, 1)``; ``0`` releases
        no inertia (``inertia_`` is then NaN) and gives the whole budget to the centres.
    inertia_clip : float, optional
        Public cap ``C`` on each point's squared distance to its centre in ``inertia_`` (the
        sensitivity of the released sum).  Default: the squared diameter of the bounds, which
        never clips; a smaller cap (e.g. the squared radius a cluster is expected to have)
        divides the noise by ``D^2 / C`` at the price of under-counting far points.
    random_state, accountant : see :class:`veil.ml.GaussianNB`.

    Attributes
    ----------
    cluster_centers_, labels_ (of the training data, not private: do not release),
    inertia_ (differentially private estimate, NaN when ``inertia_share=0``),
    inertia_ci_ (95 % half-width of its noise), n_iter_, epsilon_spent_,
    init_ (``"grid"`` or ``"sphere"``: the initialisation used), grid_size_ (``m``, cells per
    feature of the grid synopsis; 0 without it)

    References
    ----------
    .. [1] D. Su, J. Cao, N. Li, E. Bertino, H. Jin, "Differentially private k-means
       clustering", CODASPY 2016.
    .. [2] D. Su, J. Cao, N. Li, E. Bertino, M. Lyu, H. Jin, "Differentially private k-means
       clustering and a hybrid approach to private optimization", ACM TOPS 20(4), 2017.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(c, 0.3, (500, 2)) for c in (0, 5)])
    >>> km = KMeans(2, epsilon=1.0, bounds=(-2, 7), random_state=0).fit(X)  # doctest: +SKIP
    """

    def __init__(
        self,
        n_clusters: int = 8,
        *,
        epsilon: float = 1.0,
        bounds: Any = None,
        n_iter: int | None = None,
        init: str = "auto",
        inertia_share: float = 0.05,
        inertia_clip: float | None = None,
        random_state: Any = None,
        accountant: Any = None,
    ) -> None:
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.bounds = bounds
        self.n_iter = n_iter
        self.init = init
        self.inertia_share = inertia_share
        self.inertia_clip = inertia_clip
        self.random_state = random_state
        self.accountant = accountant

    @atomic_fit
    def fit(self, X: Any, y: Any = None, sample_weight: Any = None) -> KMeans:
        """Cluster ``X``; spends ``epsilon`` from the accountant."""
        if sample_weight is not None:
            raise InputError("sample_weight is not supported: it would change the sensitivity")
        check_privacy_params(self.epsilon)
        k = positive_int(self.n_clusters, "n_clusters")
        if self.n_iter is not None:
            positive_int(self.n_iter, "n_iter")
        if self.init not in ("auto", "sphere"):
            raise ConfigError(f"init must be 'auto' or 'sphere', got {self.init!r}")
        share = self.inertia_share
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 <= share < 1:
            raise ConfigError(f"inertia_share must be a number in [0, 1), got {share!r}")
        clip = self.inertia_clip
        if clip is not None and (
            isinstance(clip, bool) or not isinstance(clip, (int, float)) or not 0 < clip < math.inf
        ):
            raise ConfigError(f"inertia_clip must be a positive finite number, got {clip!r}")
        Xa = check_array_2d(X, min_samples=2)
        lo, hi = resolve_bounds(self.bounds, Xa)
        n, d = Xa.shape
        with np.errstate(over="ignore"):
            diam2 = float(((hi - lo) ** 2).sum())
            spans = np.concatenate([hi - lo, lo + hi])
        if not (math.isfinite(diam2) and np.isfinite(spans).all()):
            raise ConfigError(
                "bounds: the width, mid-point or squared diameter of the box is beyond float64's range; pass "
                "narrower bounds"
            )
        eps_inertia = float(share) * float(self.epsilon)
        eps_iters = float(self.epsilon) - eps_inertia
        need_count = self.init == "auto" or self.n_iter is None  # the plan reads the row count
        eps_n = COUNT_SHARE * eps_iters if need_count else 0.0
        eps_iters -= eps_n
        cap = diam2 if clip is None else min(float(clip), diam2)
        _check_plan(self, d, eps_n, eps_iters, cap, eps_inertia)
        rng = resolve_rng(self.random_state)
        with Charge(self.accountant, self.epsilon):
            Xc = np.clip(Xa, lo, hi)
            half = np.maximum((hi - lo) / 2.0, 1e-12)
            mid = (lo + hi) / 2.0
            n_hat = noisy_count(n, eps_n, rng) if need_count else 0.0
            m = _grid_size(n_hat, d, eps_iters / 2) if self.init == "auto" else 0
            if m:
                eps_grid = eps_iters / 2
                eps_iters -= eps_grid
                centers = _grid_init(Xc, k, m, eps_grid, lo, hi, rng)
                n_iter = self.n_iter or 1
            else:
                centers = _sphere_packing_init(k, lo, hi, rng)
                n_iter = self.n_iter or _default_iters(max(n_hat, 1.0), d, k, eps_iters)
            eps_it = eps_iters / n_iter
            ratio = (4 * d * 0.225**2) ** (1 / 3)
            eps_count = eps_it / (1 + ratio)
            eps_sum = eps_it - eps_count
            Z = np.clip((Xc - mid) / half, -1.0, 1.0)  # L1 sensitivity of a sum vector is d
            for _ in range(n_iter):
                labels = _assign(Xc, centers)
                counts = np.bincount(labels, minlength=k).astype(float)
                sums = group_sums(labels, Z, k)
                nc = add_laplace(counts, 1.0 / eps_count, rng)
                ns = add_laplace(sums, d / eps_sum, rng, sensitivity=d, coords=d)
                keep = nc >= 1.0
                size = np.maximum(nc, 1.0)[:, None]
                new = _posterior_mean(ns / size, (d / eps_sum) / size) * half + mid
                centers = np.where(keep[:, None], new, centers)
            labels = _assign(Xc, centers)
            dist2 = ((Xc - centers[labels]) ** 2).sum(axis=1)
            if eps_inertia > 0:
                clipped = np.array([np.minimum(dist2, cap).sum()])
                scale = cap / eps_inertia
                # a box of width 0 (cap 0): every distance is 0, released exactly (no noise)
                noisy_inertia = (
                    add_laplace(clipped, scale, rng, sensitivity=cap) if cap > 0 else clipped
                )
                self.inertia_ = float(max(0.0, noisy_inertia[0]))
                self.inertia_ci_ = float(scale * math.log(1 / 0.05))  # P(|Lap| > t) = e^{-t/b}
                if self.inertia_ci_ > self.inertia_:
                    warnings.warn(
                        f"the private inertia_ ({self.inertia_:.4g}) is within its noise "
                        f"(95% half-width {self.inertia_ci_:.4g}): give it a larger "
                        "inertia_share, narrower bounds or more data",
                        AccuracyWarning,
                        stacklevel=user_stacklevel(),
                    )
            else:
                self.inertia_ = float("nan")
                self.inertia_ci_ = float("nan")
            self.cluster_centers_ = centers
            self.labels_ = labels
            self.n_iter_ = n_iter
            self.init_ = "grid" if m else "sphere"
            self.grid_size_ = m
            self.n_features_in_ = d
            self.epsilon_spent_ = float(self.epsilon)
        return self

    def predict(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "cluster_centers_")
        Xa = check_n_features(self, X)
        return _assign(Xa, self.cluster_centers_)

    def fit_predict(self, X: Any, y: Any = None, sample_weight: Any = None) -> np.ndarray:
        return self.fit(X, sample_weight=sample_weight).labels_

    def transform(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "cluster_centers_")
        Xa = check_n_features(self, X)
        return np.sqrt(((Xa[:, None, :] - self.cluster_centers_[None]) ** 2).sum(axis=2))

    def score(self, X: Any, y: Any = None, sample_weight: Any = None) -> float:
        """Opposite of the (non-private) inertia of ``X`` under the fitted centres."""
        check_is_fitted(self, "cluster_centers_")
        Xa = check_n_features(self, X)
        labels = _assign(Xa, self.cluster_centers_)
        return -float(((Xa - self.cluster_centers_[labels]) ** 2).sum())


def _check_plan(
    est: KMeans, d: int, eps_n: float, eps_iters: float, cap: float, eps_inertia: float
) -> None:
    """Refuse, before the charge, a fit whose noise some branch of its plan could not draw.

    Which branch runs (the grid or not, the default number of iterations) is read from the
    noisy row count after the charge, so every branch the public parameters allow is checked
    here: the count (``1 / eps_n``), the grid's counts (``2 / eps_iters``), each iteration's
    counts and sums for every possible ``n_iter`` (1 after the grid, 2, 3, 5 or 7 without it,
    or the given one), and the inertia (``cap / eps_inertia``).  All are public (epsilon, its
    shares, ``d``, the bounds), so the refusal never depends on the data.
    """
    releases: list[tuple[float, float] | tuple[float, float, int]] = []
    if eps_n:
        releases.append((1.0, eps_n))
    grid = est.init == "auto" and 2**d <= _GRID_MAX_CELLS  # m = 2 fits
    rests = [(eps_iters, [est.n_iter] if est.n_iter else [2, 3, 5, 7])]
    if grid:
        eps_grid = eps_iters / 2
        releases.append((1.0, eps_grid))
        rests.append((eps_iters - eps_grid, [est.n_iter or 1]))
    ratio = (4 * d * 0.225**2) ** (1 / 3)
    for rest, iters in rests:
        for n_iter in iters:
            eps_it = rest / n_iter
            eps_count = eps_it / (1 + ratio)
            releases += [(1.0, eps_count), (float(d), eps_it - eps_count, d)]
    if eps_inertia > 0:
        releases.append((cap, eps_inertia))
    check_laplace(*releases)


def _posterior_mean(y: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Posterior mean of ``mu`` uniform on ``[-1, 1]`` given ``y = mu + Laplace(s)``, per entry.

    With ``lam = 1/s`` the posterior density is ``exp(-lam |y - mu|)`` on ``[-1, 1]``; splitting
    the integrals at ``y`` (clipped: outside the interval the posterior is that of the nearest
    end) gives ``y + (h(lam c) - h(lam a)) / (lam (2 - e^{-lam a} - e^{-lam c}))`` with
    ``a = 1 + y``, ``c = 1 - y`` and ``h(x) = 1 - e^{-x} (1 + x)``.  It tends to ``y`` as the
    noise vanishes and to 0 (the prior mean) as it grows.
    """
    y = np.clip(y, -1.0, 1.0)
    lam = 1.0 / np.maximum(np.broadcast_to(s, y.shape), 1e-300)
    xa, xc = lam * (1.0 + y), lam * (1.0 - y)

    def h(x: np.ndarray) -> np.ndarray:  # 1 - e^{-x}(1 + x), by its series near 0
        series = x * x * (0.5 - x / 3.0 + x * x / 8.0)
        return np.where(x < 1e-3, series, -np.expm1(-x) - x * np.exp(-x))

    denom = -np.expm1(-xa) - np.expm1(-xc)
    scaled = lam * denom
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        shift = (h(xc) - h(xa)) / scaled
    # scaled underflows to 0 only for noise scales beyond ~1e154: the posterior is the prior
    return np.clip(np.where(scaled > 0, y + shift, 0.0), -1.0, 1.0)


#: EUGkM's constant (Su et al. 2016): about ``n eps / theta`` cells when ``d = 2``.
_GRID_THETA = 10.0
#: Largest grid synopsis (cells) the initialisation builds; beyond it ``init`` falls back.
_GRID_MAX_CELLS = 2**20


def _grid_size(n: float, d: int, eps: float) -> int:
    """Cells per feature of the EUGkM grid, ``m = floor((n eps / theta)^{2/(2+d)})``, lowered
    until ``m^d <= 2^20``; 0 when fewer than 2 (no useful grid).  ``n`` is the noisy count."""
    # at most 2^20 + 1 before the loop: a huge n * eps (or an infinite one) made ``m`` a
    # gigantic integer (a loop of ``m`` steps) or an OverflowError after the charge
    root = max(n * eps / _GRID_THETA, 0.0) ** (2.0 / (2.0 + d))  # inf stays inf, no error
    m = int(math.floor(min(root, _GRID_MAX_CELLS + 1.0)))
    while m >= 2 and m**d > _GRID_MAX_CELLS:
        m -= 1
    return m if m >= 2 else 0


def _grid_init(
    X: np.ndarray, k: int, m: int, eps: float, lo: np.ndarray, hi: np.ndarray, rng: Any
) -> np.ndarray:
    """Initial centres from a noisy ``m^d`` grid histogram of ``X`` (``eps``-DP, see KMeans).

    The counts get Laplace(``1/eps``) noise; cells below ``ln(M)/eps`` are dropped and the
    rest, weighted by their noisy counts, are clustered by scikit-learn's k-means (k-means++,
    10 restarts): post-processing.  Missing centres (fewer than ``k`` cells survive) come from
    the sphere packing.
    """
    from sklearn.cluster import KMeans as _SkKMeans
    from threadpoolctl import threadpool_limits

    d = X.shape[1]
    n_cells = m**d
    width = np.maximum(hi - lo, 1e-12)
    idx = np.clip(np.floor((X - lo) / width * m).astype(np.int64), 0, m - 1)
    flat = np.ravel_multi_index(tuple(idx.T), (m,) * d)
    counts = np.bincount(flat, minlength=n_cells).astype(float)
    noisy = add_laplace(counts, 1.0 / eps, rng)
    kept = np.flatnonzero(noisy >= math.log(n_cells) / eps)
    cells = (np.stack(np.unravel_index(kept, (m,) * d), axis=1) + 0.5) / m * width + lo
    if len(kept) <= k:
        fill = _sphere_packing_init(k - len(kept), lo, hi, rng) if len(kept) < k else cells[:0]
        return np.vstack([cells, fill])
    seed = int(rng.integers(2**31 - 1))
    with threadpool_limits(1):  # a few thousand weighted points: threads only add overhead
        km = _SkKMeans(k, n_init=10, random_state=seed).fit(cells, sample_weight=noisy[kept])
    return np.asarray(km.cluster_centers_, dtype=float)


def _sphere_packing_init(k: int, lo: np.ndarray, hi: np.ndarray, rng: Any) -> np.ndarray:
    """Data-independent initial centres, spread out (Su et al. 2016's sphere packing).

    Centres are drawn uniformly in the box shrunk by a radius ``r`` and accepted only when at
    least ``2 r`` from every accepted centre; ``r`` shrinks until ``k`` centres fit.

    The test runs on the unit-cube coordinates ``u`` of ``c = lo + width * u``: measured in
    the box itself, a box of width 0 (or below ``1e-12``) put every centre at distance 0 of
    the others, and ``r`` shrank thousands of times before ``k`` centres fitted (a fit that
    hung after the budget was spent).
    """
    d = len(lo)
    width = hi - lo
    r = 0.5 / k ** (1 / d) if d else 0.0
    while True:
        units: list[np.ndarray] = []
        for _ in range(200 * k):
            u = r + (1 - 2 * r) * rng.random(d)
            if all(np.linalg.norm(u - o) >= 2 * r for o in units):
                units.append(u)
                if len(units) == k:
                    return lo + width * np.array(units)
        r *= 0.8


def _assign(X: np.ndarray, centers: np.ndarray) -> np.ndarray:
    d2 = (X * X).sum(1)[:, None] - 2 * X @ centers.T + (centers * centers).sum(1)[None, :]
    return np.argmin(d2, axis=1)


def _default_iters(n: int, d: int, k: int, eps: float) -> int:
    # Su et al.: more iterations only pay off when each iteration keeps enough budget per point.
    budget_per_point = n * eps / (k * math.sqrt(d))
    if budget_per_point > 1500:
        return 7
    if budget_per_point > 500:
        return 5
    if budget_per_point > 100:
        return 3
    return 2
