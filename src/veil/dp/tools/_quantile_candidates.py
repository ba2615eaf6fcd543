"""DP quantiles over a public candidate set: permute-and-flip with the midrank score.

Two candidate sets use this mechanism:

* *declared integer data* (``integer=True`` of the ``veil.dp.tools`` quantiles,
  ``PrivateFrame(integer_columns=...)``; never the input's dtype, which pandas infers from the
  values): the integers ``c = ceil(L) .. floor(U)`` between the bounds;
* *a listed set* (``candidates=`` of the ``veil.dp.tools`` quantiles, a Veil extension in the
  style of OpenDP's ``make_quantile_score_candidates``): any sorted, duplicate-free list of
  1 to 2^20 finite floats inside the bounds (:func:`listed_candidates`), whatever the input's
  dtype.

Either set must be chosen before looking at the data (public): the release is one of its
members, so a set derived from the data would leak through the output's support alone.
Values outside ``[min c, max c]`` are clamped to it (see Score): they count as ties with the
nearest end candidate.

Score.  With ``lt(c) = #{x < c}``, ``le(c) = #{x <= c}`` (values clamped to the candidate
range, a per-record map) and ``n`` values, candidate ``c`` occupies the block of ranks
``[lt(c), le(c)]`` and scores

    ``s(c) = (lt(c) + le(c)) / 2 - q n``,      utility ``u(c) = -|s(c)|``,

the distance between the target rank ``q n`` and the candidate's *midrank*.  For the median
this is the score of OpenDP's ``make_quantile_score_candidates``; OpenDP puts the target point
at fraction ``q`` of the block (``lt + q (le - lt)``) instead of its middle, which on tied data
can make a neighbour of the true quantile score best however large epsilon is (Adult ``age``,
q = 0.9: its release is one year off with probability -> 1), whereas the midrank prefers the
true quantile whenever the neighbouring blocks of ties are of comparable size.  Against the
plain interval distance ``dist(q n, [lt, le])`` (the ``PrivateFrame`` utility) it adds half
of each wrong candidate's own block of ties to its penalty, which is what makes the release
exact on tied data such as ages at small epsilon.

Sensitivity (derived for every pair of neighbours; cases for one candidate ``c``; nothing
below uses that the candidates are integers or evenly spaced, only that they are fixed):

* *replace one record* ``a -> b`` (``n`` public; the privacy unit of ``veil.dp.tools``, as in
  diffprivlib): with ``a < b``, ``lt(c)`` drops by one iff ``a < c <= b`` and ``le(c)`` iff
  ``a <= c < b``; ``q n`` is fixed, so ``s(c)`` changes by ``0``, ``-1/2`` or ``-1`` --
  always in ``[-1, 0]``, and symmetrically in ``[0, 1]`` when ``a > b``.  ``|Delta u| <= 1``.
* *add or remove one value* (``n`` private; a record switching between a value and NaN in the
  ``nan*`` functions): adding ``v`` raises ``lt(c)`` iff ``v < c``, ``le(c)`` iff ``v <= c``
  and ``q n`` by ``q``, so ``s(c)`` changes by ``1 - q``, ``1/2 - q`` or ``-q``:
  ``|Delta u| <= max(q, 1 - q) <= 1``.

``Delta = 1`` covers both relations.  ``u`` is not monotone (``s`` moves one way, but ``|s|``
shrinks above the quantile and grows below it), so the selection needs the ``eps / (2 Delta)``
calibration, which is tight here: candidates on both sides of the quantile can move by a full
unit in opposite directions.

Mechanism.  Permute-and-flip (McKenna & Sheldon, "Permute-and-Flip: A new mechanism for
differentially private selection", NeurIPS 2020): visit the candidates in a uniformly random
order and release the first ``c`` whose coin ``Bernoulli(exp(eps (u(c) - u*) / 2))`` comes up
heads (``u* = max u``; the best candidate always accepts).  It
is ``eps``-DP with the same calibration as the exponential mechanism and never has a lower
expected utility (their Theorem 2); on Adult ages at ``eps = 0.01`` its expected error is half
the exponential mechanism's.  Sampling is exact: all ``K`` coins are flipped at once and a uniform
accepted candidate is returned (the same distribution, see :func:`_uniform_accepted`); every
coin is an exact ``Bernoulli(exp(-gamma))`` decided
against the exact rational ``gamma = (eps / 2) (|s(c)| - min |s|)`` (float estimates with a
proven error bound settle all but ~1e-12 of the coins; the rest are refined with exact
arithmetic).  No probability is rounded, except that a coin whose exponent overflows float64
(``eps |s| > 1.8e308``, probability below ``2^-(10^308)``) is taken as tails.

Example
-------
>>> import numpy as np
>>> from veil.dp._rng import SecureRandom
>>> ages = np.repeat(np.arange(20, 61), 50).astype(float)
>>> first, k = integer_candidates(0, 100)
>>> int(candidate_quantiles(ages, [0.5], 1.0, first, k, SecureRandom())[0])
40
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from veil.dp._rng import BitSource, uniform_below
from veil.dp._samplers import _bern_exp_neg
from veil.errors import ConfigError

__all__ = [
    "MAX_CANDIDATES",
    "integer_candidates",
    "listed_candidates",
    "candidate_counts",
    "candidate_quantiles",
    "listed_quantiles",
    "floor_to_candidates",
    "midrank_scores",
    "pf_quantile",
    "pf_quantile_groups",
]

MAX_CANDIDATES = 1 << 20  # wider integer ranges use the interval mechanism (then floored)
_U = 2.0**-53  # unit roundoff of float64


def integer_candidates(lo: float, hi: float) -> tuple[int, int] | None:
    """``(first, k)``: the integers ``first .. first + k - 1`` inside ``[lo, hi]``.

    None when there is no integer in the bounds, more than :data:`MAX_CANDIDATES` of them, or
    they are not all exactly representable as float64.
    """
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return None
    first, last = math.ceil(lo), math.floor(hi)
    k = last - first + 1
    if k < 1 or k > MAX_CANDIDATES or max(abs(first), abs(last)) > 2**52:
        return None
    return first, k


def candidate_quantiles(
    values: np.ndarray,
    qs: Sequence[float] | np.ndarray,
    epsilon: float,
    first: int,
    k: int,
    rng: BitSource,
) -> np.ndarray:
    """One DP ``q``-quantile per entry of ``qs``, each with the full ``epsilon`` (the caller
    splits the budget); ``values`` are the (NaN-free) data, whole numbers (the callers round
    them; a fractional value would be floored).

    Returns
    -------
    numpy.ndarray of float64, the chosen integer candidates (in the order of ``qs``).
    """
    v = np.asarray(values, dtype=np.float64)
    idx = (np.clip(v, first, first + k - 1) - first).astype(np.int64)
    cnt = np.bincount(idx, minlength=k).astype(np.int64)
    lt = np.cumsum(cnt) - cnt
    return first + _pick_each(lt, cnt, v.size, qs, epsilon, rng).astype(np.float64)


def listed_candidates(candidates: object, name: str, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Validate a public candidate list: the sorted candidates as a float64 array.

    ``lo`` / ``hi`` hold the bounds of every output cell; each candidate must lie inside all of
    them.  Raises :class:`~veil.errors.ConfigError` (one message) unless ``candidates`` is a
    1-d array-like of 1 to :data:`MAX_CANDIDATES` finite numbers without duplicates (their
    order does not matter; duplicates are refused rather than merged, since a repeated value
    usually means a mistaken list, and OpenDP refuses them too).

    Examples
    --------
    >>> listed_candidates([3.0, 1.0, 2.5], "median", np.array([0.0]), np.array([10.0]))
    array([1. , 2.5, 3. ])
    """
    what = f"{name}: candidates must be a 1-d list of 1 to 2**20 finite numbers"
    try:
        arr = np.asarray(candidates)
    except (TypeError, ValueError):  # ragged nested lists
        raise ConfigError(f"{what} (got {type(candidates).__name__})") from None
    if arr.dtype.kind not in "biuf":
        raise ConfigError(f"{what}, got dtype {arr.dtype}")
    c = arr.astype(np.float64)
    if c.ndim != 1 or not 1 <= c.size <= MAX_CANDIDATES:
        raise ConfigError(f"{what}, got shape {c.shape}")
    if not np.isfinite(c).all():
        raise ConfigError(f"{what}; got NaN or infinity")
    c = np.sort(c)
    dup = np.flatnonzero(np.diff(c) == 0)
    if dup.size:
        raise ConfigError(
            f"{name}: candidates must be distinct; {float(c[dup[0]])!r} appears more than once"
        )
    if c[0] < np.max(lo) or c[-1] > np.min(hi):
        raise ConfigError(
            f"{name}: candidates must lie inside the bounds: they span "
            f"[{float(c[0])!r}, {float(c[-1])!r}], "
            f"the bounds [{float(np.max(lo))!r}, {float(np.min(hi))!r}]"
        )
    return c


def candidate_counts(values: np.ndarray, cands: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(lt, cnt)`` per candidate: ``#{x < c}`` and ``#{x == c}`` of the (NaN-free) values
    clamped to ``[cands[0], cands[-1]]`` (``cands`` sorted, distinct); the inputs of
    :func:`midrank_scores`."""
    z = np.sort(np.clip(np.asarray(values, dtype=np.float64), cands[0], cands[-1]))
    lt = np.searchsorted(z, cands, side="left").astype(np.int64)
    le = np.searchsorted(z, cands, side="right").astype(np.int64)
    return lt, le - lt


def listed_quantiles(
    values: np.ndarray,
    qs: Sequence[float] | np.ndarray,
    epsilon: float,
    cands: np.ndarray,
    rng: BitSource,
) -> np.ndarray:
    """One DP ``q``-quantile per entry of ``qs`` among the public ``cands`` (sorted, distinct,
    from :func:`listed_candidates`), each with the full ``epsilon`` (the caller splits the
    budget): permute-and-flip on the midrank scores at ``epsilon / 2``, as for integer input.

    Examples
    --------
    >>> from veil.dp._rng import SecureRandom
    >>> grid = np.linspace(0, 100, 101)
    >>> x = np.repeat([20.0, 40.0, 60.0], 100)
    >>> float(listed_quantiles(x, [0.5], 10.0, grid, SecureRandom())[0])
    40.0
    """
    lt, cnt = candidate_counts(values, cands)
    return cands[_pick_each(lt, cnt, np.size(values), qs, epsilon, rng)]


def _pick_each(
    lt: np.ndarray,
    cnt: np.ndarray,
    n: int,
    qs: Sequence[float] | np.ndarray,
    epsilon: float,
    rng: BitSource,
) -> np.ndarray:
    """Index of the candidate chosen for each ``q`` (independent draws, ``epsilon`` each).

    Repeated values of ``q`` are drawn together, as rows of one :func:`pf_quantile_groups`
    pass (at most ~2^22 coins at a time); distinct values in their order of appearance.
    """
    qs = np.asarray(qs, dtype=np.float64).ravel()
    out = np.empty(qs.size, dtype=np.int64)
    k = lt.size
    _, first = np.unique(qs, return_index=True)
    step = max(1, (1 << 22) // k)
    for q in qs[np.sort(first)]:
        rows = np.flatnonzero(qs == q)
        for s in range(0, rows.size, step):
            r = rows[s : s + step]
            shape = (r.size, k)
            out[r] = pf_quantile_groups(
                np.broadcast_to(lt, shape),
                np.broadcast_to(cnt, shape),
                np.full(r.size, n),
                float(q),
                float(epsilon),
                rng,
            )
    return out


def floor_to_candidates(out: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Floor interval-mechanism releases of declared integer data into ``ceil(lo) .. floor(hi)``.

    Post-processing for integer ranges too wide for the candidate mechanism; when no integer
    lies in ``[lo, hi]`` the releases are returned unchanged.
    """
    first, last = math.ceil(lo), math.floor(hi)
    if first > last:
        return out
    return np.clip(np.floor(out), first, last)


def midrank_scores(lt: np.ndarray, cnt: np.ndarray, n: int | np.ndarray, q: float) -> np.ndarray:
    """Scores ``|lt(c) + cnt(c) / 2 - q n|`` (lower is better; utility is the negation).

    ``lt[c] = #{x < c}``, ``cnt[c] = #{x == c}``; sensitivity 1 (see the module notes).
    """
    return np.abs((lt + 0.5 * cnt) - q * n)


def pf_quantile(
    lt: np.ndarray,
    cnt: np.ndarray,
    n: int,
    q: float,
    epsilon: float,
    rng: BitSource,
    sensitivity: float = 1.0,
) -> int:
    """Index of the candidate chosen by permute-and-flip on :func:`midrank_scores`.

    Exact coins, calibrated to ``epsilon / (2 sensitivity)`` (rounded down so that the
    effective epsilon never exceeds ``epsilon``).  ``sensitivity`` is 1 for one record
    (``veil.dp.tools``); ``PrivateFrame`` passes its per-group contribution bound.
    """
    lt2, cnt2 = np.asarray(lt)[None, :], np.asarray(cnt)[None, :]
    return int(pf_quantile_groups(lt2, cnt2, np.array([n]), q, epsilon, rng, sensitivity)[0])


def pf_quantile_groups(
    lt: np.ndarray,
    cnt: np.ndarray,
    n: np.ndarray,
    q: float,
    epsilon: float,
    rng: BitSource,
    sensitivity: float = 1.0,
) -> np.ndarray:
    """:func:`pf_quantile` for every row of ``lt`` / ``cnt`` (shape ``(groups, k)``; ``n`` has
    one count per group) at once: all coins in one pass, one uniform accepted index per row."""
    t = epsilon / (2.0 * sensitivity)
    if 2 * Fraction(t) * Fraction(sensitivity) > Fraction(epsilon):
        t = float(np.nextafter(t, 0.0))
    n = np.asarray(n, dtype=np.int64)
    n_col = n[:, None].astype(np.float64)
    a_hat = midrank_scores(lt, cnt, n_col, q)  # float; |error| <= e_s (see below)
    # lt + cnt / 2 is exact (half-integers below 2^52); q n and the difference round once
    # each, by <= u * 2n: e_s <= 8 u (n + 1) is generous
    e_s = 8.0 * _U * (n_col + 1)
    amin_hat = a_hat.min(axis=1, keepdims=True)
    with np.errstate(over="ignore"):  # eps * score > 1.8e308: gamma = inf, coin probability 0
        gamma_hat = t * (a_hat - amin_hat)
    # |gamma_hat - gamma| <= t (2 e_s + u a_max) + u gamma_hat, bounded generously:
    err = t * (2 * e_s + 4 * _U * (n_col + 1)) + 4 * _U * gamma_hat
    k = a_hat.shape[1]
    q_t: list[Fraction] = []  # (q, t) as exact rationals, built on first use
    exact_min: dict[int, Fraction] = {}  # exact min |s| of a group, built on first use

    def exact_abs(g: int, j: int) -> Fraction:
        return abs(int(lt[g, j]) + Fraction(int(cnt[g, j]), 2) - q_t[0] * int(n[g]))

    def exact_gamma(i: int) -> Fraction:
        g, j = divmod(int(i), k)
        if not q_t:
            q_t.extend((Fraction(q), Fraction(t)))
        if g not in exact_min:
            near = np.flatnonzero(a_hat[g] <= amin_hat[g, 0] + 2 * e_s[g, 0])  # the min is here
            exact_min[g] = min(exact_abs(g, int(c)) for c in near)
        return q_t[1] * (exact_abs(g, j) - exact_min[g])

    # at huge eps exp(err) may overflow (inf: settled exactly) and gamma = inf gives nan bounds
    # (coin false: its probability exp(-gamma) is below 2^-(10^308))
    with np.errstate(over="ignore", invalid="ignore"):
        coins = _bern_exp_neg(gamma_hat.ravel(), err.ravel(), [exact_gamma], rng)  # type: ignore[list-item]
    return _uniform_accepted(coins.reshape(a_hat.shape), rng)


def _uniform_accepted(coins: np.ndarray, rng: BitSource) -> np.ndarray:
    """Per row, a uniformly chosen column among the accepted (True) ones.

    Permute-and-flip releases the first candidate, in a uniformly random order, whose coin
    comes up heads.  The coins do not depend on the order, and the first element of a fixed set
    in a uniformly random order is uniform over that set; so flipping every coin at once and
    returning a uniform member of the accepted set has exactly the same distribution, without
    drawing the permutation: the ``r``-th accepted column, ``r`` exactly uniform below the
    row's number of accepted columns (:func:`veil.dp._rng.uniform_below`).
    """
    m = coins.sum(axis=1)
    if np.any(m == 0):  # pragma: no cover - the best candidate's coin is exp(0) = 1
        raise AssertionError("permute-and-flip: the best candidate never rejects")
    rank = uniform_below(rng, m, m.size).astype(np.int64)  # 0-based rank among the accepted
    hit = coins & (np.cumsum(coins, axis=1) == (rank + 1)[:, None])
    return np.argmax(hit, axis=1)
