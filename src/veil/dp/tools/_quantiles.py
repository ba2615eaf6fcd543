"""DP quantiles, percentiles and medians (diffprivlib signatures).

Privacy unit and neighbouring relation.  One record (a row along axis 0).  The plain functions
protect the *replacement* of one record with the number of records ``n`` public (diffprivlib's
relation for its statistics with ``n`` in the sensitivity, and OpenDP's sized data at symmetric
distance 2); the ``nan*`` functions additionally protect a record switching between a value and
NaN, i.e. the addition or removal of one value with the number of non-NaN values private.

Float input: Smith's interval mechanism (Smith 2011, "Privacy-preserving statistical
estimation with optimal convergence rates", STOC).  Sort the clamped data
``L = z_0 <= z_1 <= ... <= z_n <= z_{n+1} = U``; a point ``x`` of interval ``[z_i, z_{i+1})``
has ``#{z < x} = i`` and utility ``u(x) = -|i - q n|``.  Choose interval ``i`` with probability
proportional to ``(z_{i+1} - z_i) exp(-eps |i - q n| / 2)`` (rejection sampling with exact
coins) and return a uniform point inside it.  Sensitivity: replacing ``a`` by ``b > a`` lowers
``#{z < x}`` by one for ``x`` in ``(a, b]`` and leaves it elsewhere, ``q n`` fixed: ``|Delta u|
<= 1``; adding or removing a value moves ``#{z < x} - q n`` by ``1 - q`` or ``-q``: ``|Delta u|
<= max(q, 1 - q) <= 1``.  ``Delta = 1`` covers both, and the exponential mechanism's
``eps / (2 Delta)`` is needed because ``u`` is not monotone (it rises on one side of the
quantile while it falls on the other).

Declared integer data (``integer=True``, a Veil extension; diffprivlib has none): the release
is restricted to the integers between the bounds and chosen by exact permute-and-flip
(McKenna & Sheldon 2020) on the midrank score ``|(lt(c) + le(c)) / 2 - q n|`` of the values
rounded to the nearest integer (half to even; a per-record map, so the sensitivity below is
unchanged; also ``Delta = 1``, ``eps / 2``; see :mod:`veil.dp.tools._quantile_candidates`),
which returns the tied value itself on data such as ages instead of a point of a neighbouring
gap.  Integer ranges wider than 2^20 candidates use the interval mechanism on the rounded values
and floor its output (post-processing).

The choice between the two is a privacy parameter, never read from the input.  The mechanism
fixes the support of the release (integers, or a continuum hit at an integer with probability
0), so a choice that followed the input's dtype would be a function of the data: pandas infers
``int64`` for a column of whole numbers and ``float64`` as soon as one value is fractional or
missing, and the releases on two such neighbours (one record replaced by ``30.5``, or for the
``nan*`` functions one value switched to NaN) would be told apart with certainty -- an
unbounded privacy loss (``tests/dp_core/test_quantile_declared_integer.py`` audits it).  The
default is therefore the continuous mechanism whatever the dtype, as in diffprivlib.

Public candidate lists (``candidates=``, a Veil extension; diffprivlib has none): the release
is one of the listed values, chosen by the same exact permute-and-flip on the midrank score at
``eps / 2`` (:func:`~veil.dp.tools._quantile_candidates.listed_quantiles`), whatever the input's
dtype -- OpenDP's ``make_quantile_score_candidates`` followed by a noisy max, with Veil's
score.  Re-derivation for a listed set: the score of candidate ``c`` depends on the data only
through ``lt(c) = #{x < c}`` and ``le(c) = #{x <= c}`` of the values clamped to the candidates'
range (a per-record map).  Replacing one record ``a`` by ``b > a`` (``n`` public) removes it
from ``lt(c)`` iff ``a < c <= b`` and from ``le(c)`` iff ``a <= c < b`` and leaves ``q n``
alone, so every score ``(lt + le) / 2 - q n`` moves by ``0``, ``-1/2`` or ``-1`` (``+`` for
``b < a``): ``Delta = 1``, whatever the spacing of the candidates; adding or removing a value
(the ``nan*`` functions) moves it by at most ``max(q, 1 - q) <= 1``.  The utility ``-|s|`` is
not monotone, hence ``eps / (2 Delta) = eps / 2``, the integer path's calibration.  The list
must be public (fixed before looking at the data: its members are the possible outputs), with
1 to 2^20 distinct finite values inside the bounds; it is validated before the accountant is
charged.  A list already fixes the support, so ``integer=True`` with ``candidates`` is refused
(``ConfigError``, before any charge) rather than silently ignored or combined: list only
integers to restrict a list to them.

Several quantiles split epsilon equally; the answers are sorted to be monotone in ``q``
(post-processing).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from veil.dp._rng import resolve_rng
from veil.dp._samplers import bernoulli, bernoulli_exp, discrete_laplace
from veil.dp.mechanisms._coins import sample_measure_gamma
from veil.dp.tools._bounds import estimate_bounds
from veil.dp.tools._common import (
    apply_axis,
    as_array,
    cell_epsilon,
    check_epsilon,
    check_unused,
    parse_bounds,
    plan_axis,
    spend,
)
from veil.dp.tools._quantile_candidates import (
    candidate_quantiles,
    floor_to_candidates,
    integer_candidates,
    listed_candidates,
    listed_quantiles,
)
from veil.errors import ConfigError, InputError

__all__ = [
    "quantile",
    "percentile",
    "median",
    "nanquantile",
    "nanpercentile",
    "nanmedian",
    "smith_quantile",
]

_EST_SHARE = 0.25


def smith_quantile(
    values: np.ndarray, q: float, epsilon: float, lo: float, hi: float, rng: Any
) -> float:
    """One DP quantile of the 1-d ``values`` (NaN-free) within ``[lo, hi]``.

    The interval is drawn by rejection with exact coins (no probability is rounded away):
    propose ``i ~ exp(-eps |i - q n| / 2)`` from an exact discrete Laplace around ``q n``
    (corrected by an exact ``Bernoulli(exp(-gamma))``), then accept with probability
    ``length_i / max length`` (exact Bernoulli).  Heavily tied data (fewer than a quarter of
    the intervals non-empty), noise wide against the intervals (``epsilon (n + 1) <= 8``, so
    any ``epsilon`` too small for the proposals' exact sampler), and inputs whose proposals
    keep failing (more than ``4 (n + 1)``, e.g. long gaps far from the quantile) draw among
    the non-empty intervals directly, with exact coins whose product is proportional to
    ``length_i exp(-eps |i - q n| / 2)`` (:func:`~veil.dp.mechanisms._coins.sample_measure_gamma`,
    at most ``4 (n + 1)`` proposals expected): the same law, never a float approximation, and
    a run time bounded for every input.

    Examples
    --------
    >>> import numpy as np
    >>> from veil.dp._rng import SecureRandom
    >>> m = smith_quantile(np.arange(1000.0), 0.5, 1.0, 0, 1000, SecureRandom())
    >>> 400 < m < 600
    True
    """
    if hi == lo:
        return float(lo)
    if not math.isfinite(hi - lo):
        # the width overflows float64 (bounds near +-1.8e308): an interval of two records far
        # apart would have an infinite length, its weight NaN, and the draw fail on some data
        # only.  Run on the halved values instead (halving is exact for normal floats and a
        # monotone per-record map for subnormal ones, so the analysis above is unchanged) and
        # double the answer (post-processing, exact, and still within [lo, hi]).
        half = smith_quantile(np.asarray(values) * 0.5, q, epsilon, lo * 0.5, hi * 0.5, rng)
        return 2.0 * half
    z = np.sort(np.clip(values, lo, hi))
    n = z.size
    edges = np.concatenate([[lo], z, [hi]])
    length = np.diff(edges)
    gaps = np.flatnonzero(length > 0)
    if 4 * gaps.size >= length.size and epsilon * length.size > _WIDE_NOISE:
        i = _exact_interval(length, q * n, epsilon, rng, min(_MAX_PROPOSALS, 4 * length.size))
        if i is not None:
            return float(edges[i] + rng.random() * length[i])
    # Exact coins over the non-empty intervals, proportional to length_i exp(-eps |i - q n| / 2)
    # (the same law; at most 4 (n + 1) proposals expected, whatever the data): for heavy ties
    # (e.g. ages stored as floats: proposals around q n would mostly land on empty intervals),
    # for noise wide against the n + 1 intervals (a small epsilon: the discrete Laplace
    # proposals would mostly fall outside them, and beyond epsilon ~ 2^-51 their sampler
    # refuses the scale), and when the proposals keep failing (a few long gaps far from the
    # quantile).  Which path runs depends on the data; none may decide between a release and
    # an error, nor take seconds where another takes microseconds.
    gamma = (epsilon / 2) * np.abs(gaps - q * n)
    i = int(gaps[sample_measure_gamma(length[gaps], gamma - gamma.min(), rng)])
    return float(edges[i] + rng.random() * length[i])


_MAX_PROPOSALS = 1 << 22
#: ``epsilon * (n + 1)`` at or below which the discrete Laplace proposals of scale
#: ``2 / epsilon`` are too wide for the ``n + 1`` intervals (most would miss them)
_WIDE_NOISE = 8.0


def _exact_interval(
    length: np.ndarray, mu: float, epsilon: float, rng: Any, limit: int = _MAX_PROPOSALS
) -> int | None:
    """Index ``i`` with probability ``~ length_i exp(-eps |i - mu| / 2)``, or None after about
    ``limit`` proposals (the caller then draws the same law another way: an accepted proposal
    has the target law however many were refused before it, so the mixture is exact)."""
    n1 = length.size
    longest = float(length.max())
    c = epsilon / 2
    m0 = round(mu)
    off = abs(m0 - mu)
    scale = Fraction(2) / Fraction(epsilon)
    batch, spent = 64, 0
    while spent < limit:
        d = discrete_laplace(scale, batch, rng)
        j = m0 + d
        # target / proposal = exp(-c (|j - mu| - |d|)) <= exp(c off): the correction coin
        gamma = c * (np.abs(j - mu) - np.abs(d) + off)
        coin = bernoulli_exp(np.maximum(gamma, 0.0), batch, rng)
        ok = coin & (j >= 0) & (j < n1)
        jj = np.where(ok, j, 0)
        keep = ok & bernoulli(length[jj] / longest, batch, rng)
        hit = np.flatnonzero(keep)
        if hit.size:
            return int(j[hit[0]])
        spent += batch
        batch = min(batch * 8, 1 << 20)
    return None


def _quantiles(
    name: str,
    array: Any,
    quant: Any,
    epsilon: float,
    bounds: Any,
    axis: Any,
    keepdims: bool,
    random_state: Any,
    accountant: Any,
    nan: bool,
    candidates: Any = None,
    integer: Any = False,
) -> Any:
    eps = check_epsilon(epsilon)
    integer_input = _check_integer(integer, name)
    qs = np.asarray(quant, dtype=np.float64)
    if qs.size == 0 or np.any(~((qs >= 0) & (qs <= 1))):
        raise ConfigError(f"{name}: quantiles must lie in [0, 1]")
    arr = as_array(array, nan=nan, name=name)
    axes, out_shape = plan_axis(arr, axis)
    n_out = int(np.prod(out_shape)) if out_shape else 1
    estimate = isinstance(bounds, str) and bounds == "estimate"
    if not estimate:
        lo_all, hi_all = parse_bounds(bounds, name, n_out)
    if integer_input and not estimate:
        for lo, hi in zip(np.ravel(lo_all).tolist(), np.ravel(hi_all).tolist()):
            if math.isfinite(lo) and math.isfinite(hi) and math.ceil(lo) > math.floor(hi):
                raise ConfigError(
                    f"{name}: integer=True but the bounds ({lo:g}, {hi:g}) contain no integer; "
                    "widen them to whole numbers or drop integer=True"
                )
    listed = None
    if candidates is not None:
        if integer_input:
            raise ConfigError(
                f"{name}: integer=True and candidates= both fix the possible answers; give one "
                "(to restrict a list to integers, list only integers)"
            )
        if estimate:
            raise ConfigError(
                f"{name}: candidates need explicit bounds=(lower, upper) that contain them, "
                "not 'estimate'"
            )
        listed = listed_candidates(candidates, name, lo_all, hi_all)
    if arr.size == 0:
        raise InputError(f"{name}: empty input")
    e_cell = cell_epsilon(eps, arr.shape)
    spend(accountant, eps)  # before anything is computed
    rng = resolve_rng(random_state)
    flat_q = qs.ravel()
    order = np.argsort(flat_q, kind="stable")

    def cell_all(v: np.ndarray, i: int) -> np.ndarray:
        e = e_cell
        if estimate:
            lo, hi = estimate_bounds(v, _EST_SHARE * e, random_state=rng, nan=nan)
            e = (1 - _EST_SHARE) * e
        else:
            lo, hi = float(lo_all[i]), float(hi_all[i])
        vals = v[~np.isnan(v)] if nan else v
        if integer_input:  # declared whole numbers: round each value (a per-record map)
            vals = np.rint(vals)
        # no special case for an all-NaN cell: with n = 0 every score is 0 and both mechanisms
        # draw uniformly from the bounds / candidates -- a constant here would be told apart
        # from a neighbour with one value with certainty
        e_q = e / flat_q.size
        cands = integer_candidates(lo, hi) if integer_input else None  # (never with listed)
        if listed is not None:  # a public list
            res = listed_quantiles(vals, flat_q, e_q, listed, rng)
        elif cands is not None:
            res = candidate_quantiles(vals, flat_q, e_q, cands[0], cands[1], rng)
        else:
            res = np.array([smith_quantile(vals, float(q), e_q, lo, hi, rng) for q in flat_q])
            if integer_input:  # too many (or no) integer candidates: floor (post-processing)
                res = floor_to_candidates(res, lo, hi)
        out = np.empty_like(res)
        out[order] = np.sort(res)  # monotone in q
        return out

    per_q: list[Any] = []
    cache: dict[int, np.ndarray] = {}

    def getter(k: int) -> Any:
        def f(v: np.ndarray, i: int) -> float:
            if i not in cache:
                cache[i] = cell_all(v, i)
            return float(cache[i][k])

        return f

    for k in range(flat_q.size):
        per_q.append(apply_axis(arr, axes, keepdims, getter(k)))
    if qs.ndim == 0:
        return per_q[0]
    return np.asarray(per_q).reshape(qs.shape + np.shape(per_q[0]))


def _check_integer(integer: Any, name: str) -> bool:
    """The declared ``integer`` flag as a bool; ConfigError unless it is one (before any charge).

    Only ``True`` / ``False`` (or numpy bools): a flag that selects the release's support must be
    stated, and ``integer=1`` or ``"yes"`` is more likely a misplaced argument than a choice.
    """
    if isinstance(integer, (bool, np.bool_)):
        return bool(integer)
    raise ConfigError(f"{name}: integer must be True or False, got {integer!r}")


def _signature_doc(name: str, arg: str) -> str:
    return f"""DP ``{name}`` (Smith 2011; permute-and-flip on candidates), diffprivlib signature.

    Parameters
    ----------
    array : array_like
    {arg}
    epsilon : float, default 1.0
        Split equally over the requested quantiles.
    bounds : (lower, upper) or "estimate"
        Required (never read from the data); ``"estimate"`` spends 25% of epsilon on them.
    axis, keepdims : as numpy
    random_state : None (secure), int or numpy Generator (tests only)
    accountant : BudgetAccountant, optional
    candidates : 1-d array_like of float, optional (keyword only; a Veil extension)
        A *public* list of possible answers (fixed without looking at the data, as OpenDP's
        ``make_quantile_score_candidates``): 1 to 2**20 distinct finite values, in any order,
        inside the bounds (``ConfigError`` otherwise, before any budget is spent).  The
        release is one of them, chosen by exact permute-and-flip (McKenna & Sheldon 2020) on
        the midrank score ``|(#{{x < c}} + #{{x <= c}}) / 2 - q n|`` at ``epsilon / 2``: one
        replaced record moves each candidate's score by at most 1 (see the module notes).
        Default None: Smith's interval mechanism, or the integers between the bounds with
        ``integer=True``.  Not together with ``integer=True`` (``ConfigError``).
    integer : bool, default False (keyword only; a Veil extension)
        Declare the data whole numbers (ages, counts): the release is then an integer between
        the bounds, chosen by the same permute-and-flip on the values rounded to the nearest
        integer (ranges wider than 2**20 integers: Smith's mechanism, floored; bounds that
        hold no integer: ``ConfigError`` before any budget is spent).  A public
        choice, like the bounds: the dtype is never consulted (``False`` is continuous even for
        an integer array, as in diffprivlib), because a dtype pandas infers from the values
        turns to float when one value is fractional or missing, and the support of the release
        would reveal it.

    Examples
    --------
    >>> import veil.dp as dp
    >>> m = dp.tools.median([1.0, 5.0, 9.0, 4.0], epsilon=1.0, bounds=(0, 10))
    >>> 0 <= m <= 10
    True
    >>> grid = [0.0, 2.5, 5.0, 7.5, 10.0]
    >>> m = dp.tools.median([1.0, 5.0, 9.0, 4.0], epsilon=1.0, bounds=(0, 10), candidates=grid)
    >>> m in grid
    True
    >>> ages = [23, 35, 35, 41, 52]
    >>> m = dp.tools.median(ages, epsilon=1.0, bounds=(0, 100), integer=True)
    >>> float(m).is_integer()
    True
    """


def quantile(
    array: Any,
    quant: Any,
    epsilon: float = 1.0,
    bounds: Any = None,
    axis: Any = None,
    keepdims: bool = False,
    random_state: Any = None,
    accountant: Any = None,
    *,
    candidates: Any = None,
    integer: bool = False,
    **unused_args: Any,
) -> Any:
    check_unused(unused_args, quantile)
    return _quantiles(
        "quantile",
        array,
        quant,
        epsilon,
        bounds,
        axis,
        keepdims,
        random_state,
        accountant,
        False,
        candidates,
        integer,
    )


def nanquantile(
    array: Any,
    quant: Any,
    epsilon: float = 1.0,
    bounds: Any = None,
    axis: Any = None,
    keepdims: bool = False,
    random_state: Any = None,
    accountant: Any = None,
    *,
    candidates: Any = None,
    integer: bool = False,
    **unused_args: Any,
) -> Any:
    check_unused(unused_args, nanquantile)
    return _quantiles(
        "nanquantile",
        array,
        quant,
        epsilon,
        bounds,
        axis,
        keepdims,
        random_state,
        accountant,
        True,
        candidates,
        integer,
    )


def _percent(percent: Any, name: str) -> np.ndarray:
    p = np.asarray(percent, dtype=np.float64)
    if np.any(~((p >= 0) & (p <= 100))):
        raise ConfigError(f"{name}: percentiles must lie in [0, 100]")
    return p / 100


def percentile(
    array: Any,
    percent: Any,
    epsilon: float = 1.0,
    bounds: Any = None,
    axis: Any = None,
    keepdims: bool = False,
    random_state: Any = None,
    accountant: Any = None,
    *,
    candidates: Any = None,
    integer: bool = False,
    **unused_args: Any,
) -> Any:
    check_unused(unused_args, percentile)
    return _quantiles(
        "percentile",
        array,
        _percent(percent, "percentile"),
        epsilon,
        bounds,
        axis,
        keepdims,
        random_state,
        accountant,
        False,
        candidates,
        integer,
    )


def nanpercentile(
    array: Any,
    percent: Any,
    epsilon: float = 1.0,
    bounds: Any = None,
    axis: Any = None,
    keepdims: bool = False,
    random_state: Any = None,
    accountant: Any = None,
    *,
    candidates: Any = None,
    integer: bool = False,
    **unused_args: Any,
) -> Any:
    check_unused(unused_args, nanpercentile)
    return _quantiles(
        "nanpercentile",
        array,
        _percent(percent, "nanpercentile"),
        epsilon,
        bounds,
        axis,
        keepdims,
        random_state,
        accountant,
        True,
        candidates,
        integer,
    )


def median(
    array: Any,
    epsilon: float = 1.0,
    bounds: Any = None,
    axis: Any = None,
    keepdims: bool = False,
    random_state: Any = None,
    accountant: Any = None,
    *,
    candidates: Any = None,
    integer: bool = False,
    **unused_args: Any,
) -> Any:
    check_unused(unused_args, median)
    return _quantiles(
        "median",
        array,
        0.5,
        epsilon,
        bounds,
        axis,
        keepdims,
        random_state,
        accountant,
        False,
        candidates,
        integer,
    )


def nanmedian(
    array: Any,
    epsilon: float = 1.0,
    bounds: Any = None,
    axis: Any = None,
    keepdims: bool = False,
    random_state: Any = None,
    accountant: Any = None,
    *,
    candidates: Any = None,
    integer: bool = False,
    **unused_args: Any,
) -> Any:
    check_unused(unused_args, nanmedian)
    return _quantiles(
        "nanmedian",
        array,
        0.5,
        epsilon,
        bounds,
        axis,
        keepdims,
        random_state,
        accountant,
        True,
        candidates,
        integer,
    )


quantile.__doc__ = _signature_doc("quantile", "quant : float or array of float in [0, 1]")
nanquantile.__doc__ = _signature_doc("nanquantile", "quant : float or array in [0, 1]; NaN ignored")
percentile.__doc__ = _signature_doc("percentile", "percent : float or array in [0, 100]")
nanpercentile.__doc__ = _signature_doc("nanpercentile", "percent : in [0, 100]; NaN ignored")
median.__doc__ = _signature_doc("median", "(the 0.5 quantile)")
nanmedian.__doc__ = _signature_doc("nanmedian", "(the 0.5 quantile; NaN ignored)")
