"""Per-group DP quantiles with the exponential mechanism, vectorized over all groups at once.

For one group with clamped, sorted values ``x_1 <= ... <= x_m`` inside bounds ``[lo, hi]``,
the ``m + 1`` intervals ``[x_i, x_{i+1}]`` (``x_0 = lo``, ``x_{m+1} = hi``) get utility
``-|i - q m|`` and the mechanism outputs a uniform point of interval ``i`` with probability
proportional to ``(x_{i+1} - x_i) exp(eps u_i / (2 Delta))`` (Smith, "Privacy-preserving
statistical estimation with optimal convergence rates", STOC 2011; Gillenwater et al., ICML
2021).  Adding one row moves a rank by 0 or 1 and ``q m`` by ``q``, so ``i - q m`` changes by
``1 - q`` or ``-q``: ``Delta = max_rows * max(q, 1 - q)`` -- half of the usual ``max_rows`` for
the median, i.e. twice the effective epsilon of implementations that use sensitivity 1.  The interval is drawn with the Gumbel-max trick in log space, so huge ``eps`` and
tiny intervals never overflow; all groups are handled by one sort and a few reductions.

An empty group returns a uniform draw from the bounds.  Bounds whose width overflows float64
run on the halved values and bounds and double the answer (exact, the same law).

Declared integer columns (``PrivateFrame(integer_columns=...)``, ``veil query --integer``; never
the dtype, which pandas infers from the values) select among the candidates
``ceil(lo) .. floor(hi)`` instead, with the same mechanism as ``veil.dp.tools`` (see
:mod:`veil.dp.tools._quantile_candidates`): permute-and-flip (McKenna & Sheldon, NeurIPS 2020)
with exact coins on the midrank score ``|(#{x < c} + #{x <= c}) / 2 - q m|``, which moves by at
most ``max(q, 1 - q)`` per added or removed row and by at most 1 per replaced row -- the same
``Delta`` as above.  On data with many ties (ages) it returns the tied value itself rather than a
point of a neighbouring gap, which is what OpenDP's candidate-based quantile does too.

Public candidate lists (``Agg(..., candidates=[...])``, as ``candidates=`` of
:func:`veil.dp.tools.quantile`) replace the integers by the listed values: the same
permute-and-flip on the same midrank score, the values clamped to the candidates' range (a
per-row map).  The derivation above never uses that the candidates are integers or evenly
spaced, only that they are fixed before the data are seen: adding or removing a row ``v``
moves ``#{x < c}`` and ``#{x <= c}`` by 0 or 1 and ``q m`` by ``q``, so each score by at most
``max(q, 1 - q)``; with ``max_rows`` rows of one person in a group, ``Delta = max_rows max(q,
1 - q)``, and a replaced row moves it by at most 1 -- the integer path's ``Delta``, at the
same ``eps / (2 Delta)``.  The list is validated (1 to 2^20 distinct finite values inside
the bounds, :func:`~veil.dp.tools._quantile_candidates.listed_candidates`) when the query is
planned, before any charge.

Example
-------
>>> import numpy as np
>>> from veil.dp._rng import SecureRandom
>>> g = np.zeros(101, dtype=np.int64); v = np.linspace(0, 100, 101)
>>> med = dp_quantiles(g, v, 1, (0.0, 100.0), 0.5, 50.0, 1.0, SecureRandom())
>>> bool(abs(med[0] - 50) < 5)
True
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from veil.dp._rng import BitSource
from veil.dp.frame._noise import gumbel
from veil.dp.tools._quantile_candidates import floor_to_candidates, pf_quantile_groups

__all__ = ["dp_quantiles", "integer_candidates", "listed_counts", "rank_halfwidth"]

_MAX_CANDIDATES = 100_000  # integer ranges wider than this use the interval mechanism + floor
_MAX_CELLS = 20_000_000  # groups x candidates counted at once (memory); more: blocks of groups


def integer_candidates(bounds: tuple[float, float]) -> int | None:
    """Number of integer candidates ``ceil(lo) .. floor(hi)`` when an integer column's quantile
    uses them (permute-and-flip), else None (the interval mechanism, then floor)."""
    k = math.floor(float(bounds[1])) - math.ceil(float(bounds[0])) + 1
    return k if 1 <= k <= _MAX_CANDIDATES else None


def rank_halfwidth(candidates: int, epsilon: float, sensitivity: float, alpha: float) -> float:
    """Rank error bound of a permute-and-flip quantile over ``candidates`` integer values.

    With probability at least ``1 - alpha`` the released candidate's score (its midrank's
    distance from ``q m``) exceeds the best candidate's by at most
    ``2 Delta (ln(candidates) + ln(1 / alpha)) / epsilon``.  Proof: permute-and-flip outputs a
    candidate only if that candidate's own coin, of probability ``exp(-epsilon gap / (2
    Delta))``, came up heads; a union bound over the (at most ``candidates``) candidates whose
    gap is at least ``g`` gives ``P(gap >= g) <= candidates exp(-epsilon g / (2 Delta))`` --
    the exponential mechanism's bound (McSherry & Talwar 2007; McKenna & Sheldon 2020).  It
    needs only public inputs, so it is an accuracy statement *before* release; in the column's
    units the error depends on how the data are spread around the quantile.

    Examples
    --------
    >>> round(rank_halfwidth(74, 1.0, 0.5, 0.05), 2)  # ages 17..90, median, eps 1
    7.3
    """
    return 2.0 * sensitivity * (math.log(candidates) + math.log(1.0 / alpha)) / epsilon


def dp_quantiles(
    groups: np.ndarray,
    values: np.ndarray,
    n_groups: int,
    bounds: tuple[float, float],
    q: float,
    epsilon: float,
    sensitivity: float,
    rng: BitSource,
    *,
    integer_valued: bool = False,
    candidates: tuple[float, ...] | np.ndarray | None = None,
) -> np.ndarray:
    """DP ``q``-quantile of ``values`` within each group.

    Parameters
    ----------
    groups
        Group code in ``[0, n_groups)`` of each (already bounded, non-missing) value.
    values
        The values; clamped to ``bounds``.
    n_groups
        Number of output groups.
    bounds
        ``(lo, hi)`` public bounds.
    q
        Quantile level in [0, 1].
    epsilon
        Privacy budget spent *in each group* (the caller divides by ``max_groups``).
    sensitivity
        Largest number of rows one person contributes to one group.
    rng
        Secure bit source.
    integer_valued
        The column holds integers: use integer candidates (see the module notes).
    candidates
        Public candidate answers, sorted and distinct (validated when the query is planned):
        permute-and-flip over them (see the module notes); takes precedence over
        ``integer_valued`` (the plan refuses both at once).

    Returns
    -------
    numpy.ndarray of float64, shape (n_groups,)
    """
    lo, hi = float(bounds[0]), float(bounds[1])
    groups = np.asarray(groups, dtype=np.int64)
    if candidates is not None:
        cands = np.asarray(candidates, dtype=np.float64)
        return _in_blocks(
            groups, values, n_groups, cands.size,
            lambda g, v, n: _listed_quantiles(g, v, n, cands, q, epsilon, sensitivity, rng),
        )  # fmt: skip
    k = integer_candidates((lo, hi)) if integer_valued else None
    if k is not None:
        return _in_blocks(
            groups, values, n_groups, k,
            lambda g, v, n: _integer_quantiles(g, v, n, lo, hi, q, epsilon, sensitivity, rng),
        )  # fmt: skip
    if not math.isfinite(hi - lo):
        # the width overflows float64 (bounds near +-1.8e308): a gap between two values far
        # apart had length inf, log inf won every draw and the release was hi whenever one
        # person's value opened such a gap, never otherwise.  Halving is exact (and a fixed
        # map of each value): the mechanism on the halved values and bounds, doubled, has the
        # law of the mechanism on the values (scale equivariance), as veil.dp.tools does
        half = dp_quantiles(
            groups, np.asarray(values, dtype=np.float64) / 2.0, n_groups, (lo / 2.0, hi / 2.0),
            q, epsilon, sensitivity, rng,
        )  # fmt: skip
        out = np.clip(half * 2.0, lo, hi)
        return floor_to_candidates(out, lo, hi) if integer_valued else out
    vals = np.clip(np.asarray(values, dtype=np.float64), lo, hi)
    if lo == hi:
        return np.full(n_groups, lo)
    order = np.lexsort((vals, groups))
    gs, vs = groups[order], vals[order]
    m = np.bincount(gs, minlength=n_groups).astype(np.int64)
    n = gs.shape[0]
    total = n + n_groups
    # interval (g, i) lives at position row_start[g] + g + i, i = 0..m[g]
    row_start = np.concatenate(([0], np.cumsum(m)[:-1])).astype(np.int64)
    first = row_start + np.arange(n_groups, dtype=np.int64)
    lefts = np.empty(total)
    rights = np.empty(total)
    lefts[first] = lo
    rights[first + m] = hi
    j = np.arange(n, dtype=np.int64)
    lefts[j + gs + 1] = vs
    rights[j + gs] = vs
    ig = np.repeat(np.arange(n_groups, dtype=np.int64), m + 1)
    rank = np.arange(total, dtype=np.int64) - first[ig]
    utility = -np.abs(rank - q * m[ig])
    width = rights - lefts
    with np.errstate(divide="ignore"):
        score = np.log(width) + (epsilon / (2.0 * sensitivity)) * utility + gumbel(rng, total)
    best = np.maximum.reduceat(score, first)
    hit = np.flatnonzero(score == best[ig])
    # first hit per group (ties have probability zero but be safe)
    hit_groups = ig[hit]
    chosen = np.full(n_groups, -1, dtype=np.int64)
    chosen[hit_groups[::-1]] = hit[::-1]
    u = (rng.raw(n_groups) >> np.uint64(11)).astype(np.float64) * 2.0**-53
    out = np.clip(lefts[chosen] + u * width[chosen], lo, hi)
    if integer_valued:  # too many integer candidates for the discrete path: floor, as the tools do
        out = floor_to_candidates(out, lo, hi)
    return out


def _in_blocks(
    groups: np.ndarray,
    values: np.ndarray,
    n_groups: int,
    k: int,
    pick: Callable[[np.ndarray, np.ndarray, int], np.ndarray],
) -> np.ndarray:
    """``pick(groups, values, n_groups)`` over blocks of groups, at most ``_MAX_CELLS``
    group-candidate counts at once (``k`` candidates; rows sorted by group once)."""
    block = max(_MAX_CELLS // k, 1)
    if n_groups <= block:
        return pick(groups, values, n_groups)
    order = np.argsort(groups, kind="stable")
    gs, vs = groups[order], np.asarray(values, dtype=np.float64)[order]
    out = np.empty(n_groups)
    for start in range(0, n_groups, block):
        end = min(start + block, n_groups)
        a, b = np.searchsorted(gs, [start, end])
        out[start:end] = pick(gs[a:b] - start, vs[a:b], end - start)
    return out


def listed_counts(
    groups: np.ndarray, values: np.ndarray, n_groups: int, cands: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(lt, cnt)`` of every group and candidate, shape ``(n_groups, k)``: ``#{x < c}`` and
    ``#{x == c}`` of the group's values clamped to ``[cands[0], cands[-1]]`` -- per group what
    :func:`~veil.dp.tools._quantile_candidates.candidate_counts` counts, all groups at once."""
    k = cands.size
    v = np.clip(np.asarray(values, dtype=np.float64), cands[0], cands[-1])
    above = np.searchsorted(cands, v, side="right")  # #{c <= x}: x < c_j iff j >= above
    equal = np.searchsorted(cands, v, side="left")  # x == c_j iff j == equal < above
    grp = np.asarray(groups, dtype=np.int64)
    # k + 1 bins a group (above runs to k: a value at the last candidate is below none)
    at = np.bincount(grp * np.int64(k + 1) + above, minlength=n_groups * (k + 1))
    lt = np.cumsum(at.reshape(n_groups, k + 1), axis=1)[:, :k]  # #{above <= j}
    tie = equal < above
    cell = grp[tie] * np.int64(k) + equal[tie]
    cnt = np.bincount(cell, minlength=n_groups * k).reshape(n_groups, k)
    return lt, cnt


def _listed_quantiles(
    groups: np.ndarray,
    values: np.ndarray,
    n_groups: int,
    cands: np.ndarray,
    q: float,
    epsilon: float,
    sensitivity: float,
    rng: BitSource,
) -> np.ndarray:
    """Permute-and-flip over public candidates with the midrank score, all groups at once."""
    lt, cnt = listed_counts(groups, values, n_groups, cands)
    m = np.bincount(np.asarray(groups, dtype=np.int64), minlength=n_groups)
    pick = pf_quantile_groups(lt, cnt, m, q, epsilon, rng, sensitivity)
    return cands[pick]


def _integer_quantiles(
    groups: np.ndarray,
    values: np.ndarray,
    n_groups: int,
    lo: float,
    hi: float,
    q: float,
    epsilon: float,
    sensitivity: float,
    rng: BitSource,
) -> np.ndarray:
    """Permute-and-flip over the integer candidates with the midrank score, all groups at once."""
    first = math.ceil(lo)
    k = math.floor(hi) - first + 1
    v = np.clip(np.rint(np.asarray(values, dtype=np.float64)), first, first + k - 1)
    cell = groups * np.int64(k) + (v.astype(np.int64) - first)
    counts = np.bincount(cell, minlength=n_groups * k).reshape(n_groups, k)
    m = counts.sum(axis=1)
    below = np.cumsum(counts, axis=1) - counts  # #{x < c}
    pick = pf_quantile_groups(below, counts, m, q, epsilon, rng, sensitivity)
    return (first + pick).astype(np.float64)
