"""Exact decisions for the classes whose floating-point figure lies within rounding of a threshold.

Entropy l-diversity and t-closeness are computed in floating point for all classes at once
(:mod:`veil.anonymity._models`, :mod:`veil.anonymity._tcloseness`).  A class at exactly the
threshold (two values of equal count and ``l = 2``; a class at ``t = 0.25`` exactly) may come
out an ulp on the wrong side, so the comparison needs a margin; but a margin alone accepts
classes really beyond the threshold by less than it (a class of 15,001 and 15,000 records has
``exp(H) = 2 (1 - 5.6e-10)`` and passed ``l = 2`` with the former margin ``1e-9``).  The
classes within :data:`MARGIN` of the threshold are therefore decided here, in exact rational
arithmetic on their counts, and every other class by its floating-point figure (whose rounding
error is far below the margin).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from veil.anonymity._stats import SensitiveColumn, SensitiveStats

__all__ = [
    "MARGIN",
    "emd_beyond",
    "emd_exact",
    "entropy_at_least",
    "entropy_border",
    "r1_below",
    "threshold",
]

#: Classes whose floating-point figure is within this of the threshold are decided exactly.
MARGIN = 1e-9
#: Largest ``n * log2(n * denominator(l))`` (bits of ``(n b)^n``) decided with integers; larger
#: non-uniform classes within the margin count as below ``l`` (the conservative side).
_MAX_BITS = 1 << 22


def threshold(x: float) -> Fraction:
    """The threshold as written: the shortest decimal that reads back as ``x`` (``repr``).

    ``t = 0.3`` means 3/10, whose nearest double is 0.29999999999999998890: a class at
    exactly 3/10 is within the ``t`` the user wrote and the report prints.
    """
    return Fraction(repr(float(x)))


def r1_below(r1: np.ndarray, tail: np.ndarray, c: float) -> np.ndarray:
    """``r1 < c * tail`` exactly, for integer counts and ``c`` as written (:func:`threshold`).

    In floating point ``1.1 * 50`` is ``55.00000000000001``, so a class with ``r1 = 55`` and
    ``r_l + ... + r_m = 50`` passed recursive (1.1, l)-diversity while ``55 < 55`` is false.
    With ``c = a/b``: ``r1 b < a tail``, in ``int64`` when no product can reach ``2**63``.
    """
    target = threshold(c)
    a, b = target.numerator, target.denominator
    r1 = np.asarray(r1, dtype=np.int64)
    tail = np.asarray(tail, dtype=np.int64)
    top = max(int(r1.max(initial=0)), int(tail.max(initial=0)), 1)
    if top.bit_length() + max(a.bit_length(), b.bit_length()) < 62:
        return r1 * b < tail * a
    return np.asarray(r1.astype(object) * b < tail.astype(object) * a, dtype=bool)


def class_counts(ss: SensitiveStats, cls: int) -> tuple[np.ndarray, np.ndarray]:
    """``(values, counts)`` of class ``cls`` (``ss`` lists its pairs sorted by class)."""
    lo, hi = np.searchsorted(ss.cls, [cls, cls + 1])
    if lo == hi or not (ss.cls[lo:hi] == cls).all():  # not sorted: select
        sel = ss.cls == cls
        return ss.val[sel], ss.cnt[sel]
    return ss.val[lo:hi], ss.cnt[lo:hi]


def entropy_at_least(counts: np.ndarray, l_value: float) -> bool:
    """Whether ``exp(H) >= l`` exactly for a class with these value counts.

    ``H = sum (c/n) log(n/c)``, so ``exp(H) >= l = a/b`` (:func:`threshold`) exactly when
    ``(n b)^n >= a^n prod c^c`` (integers).  A class whose counts are all equal has
    ``exp(H) = m`` (its number of values).  Classes too large for the integer comparison
    count as below ``l`` (see :data:`_MAX_BITS`).
    """
    c = [int(x) for x in counts if x > 0]
    if not c:
        return False
    target = threshold(l_value)
    if min(c) == max(c):
        return Fraction(len(c)) >= target
    n = sum(c)
    a, b = target.numerator, target.denominator
    if n * max((n * b).bit_length(), a.bit_length()) > _MAX_BITS:
        return False
    prod = 1
    for x in c:
        prod *= x**x
    return (n * b) ** n >= a**n * prod


def _global_counts(col: SensitiveColumn) -> tuple[np.ndarray, int]:
    codes = np.asarray(col.codes, dtype=np.int64)
    return np.bincount(codes, minlength=col.n_values), int(codes.shape[0])


def entropy_border(
    ss: SensitiveStats, sizes: np.ndarray, border: np.ndarray, l_value: float
) -> np.ndarray:
    """For the classes flagged in ``border``, whether ``exp(H) < l`` exactly (violating).

    A class whose counts are all equal has ``exp(H) = m``, its number of values (decided for
    all such classes at once); the others by :func:`entropy_at_least`.
    """
    n_cls = sizes.shape[0]
    border = border & (np.asarray(sizes) > 0)  # an empty class holds nothing: left as it was
    sel = border[ss.cls]  # the pairs of the classes to decide
    cls, cnt = ss.cls[sel], ss.cnt[sel]
    cmax = np.zeros(n_cls, dtype=np.int64)
    np.maximum.at(cmax, cls, cnt)
    cmin = np.full(n_cls, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(cmin, cls, cnt)
    distinct = np.bincount(cls, minlength=n_cls)
    target = threshold(l_value)
    uniform = border & (cmax == cmin)
    out = np.zeros(n_cls, dtype=bool)
    if target.numerator < 1 << 31 and target.denominator < 1 << 31:  # m < a/b as m b < a
        out[uniform] = distinct[uniform] * target.denominator < target.numerator
    else:
        for i in np.flatnonzero(uniform).tolist():
            out[i] = Fraction(int(distinct[i])) < target
    for i in np.flatnonzero(border & ~uniform).tolist():
        out[i] = not entropy_at_least(class_counts(ss, i)[1], l_value)
    return out


def emd_exact(
    ss: SensitiveStats, cls: int, distance: str, glob: tuple[np.ndarray, int] | None = None
) -> Fraction:
    """The earth mover's distance of class ``cls`` to the table's distribution, exactly.

    The same distances as :func:`veil.anonymity._tcloseness.emd`, on integer masses
    ``e_v = c_v N - C_v n`` (``c``: the class's counts, ``n`` its size; ``C``: the table's,
    ``N`` its size), that is ``n N (p_v - q_v)``: equal, ``sum |e_v| / (2 n N)``; ordered,
    ``sum_j |e_0 + ... + e_j| / ((m - 1) n N)``; hierarchical, per level the mass that must
    move up through each node (its children's positive masses less its own positive total),
    weighted by ``level / height``.  ``glob``: the table's ``(C, N)`` when already counted.
    """
    col = ss.column
    big_c, big_n = _global_counts(col) if glob is None else glob
    vals, cnts = class_counts(ss, cls)
    n = int(np.sum(cnts))
    if n == 0:  # an empty class holds nothing to protect: never violating
        return Fraction(0)
    c = np.zeros(col.n_values, dtype=object)
    c[np.asarray(vals, dtype=np.int64)] = [int(x) for x in cnts]
    e = c * big_n - big_c.astype(object) * n  # Python integers: no overflow
    scale = n * big_n
    if distance == "equal":
        return Fraction(int(sum(abs(x) for x in e.tolist())), 2 * scale)
    if distance == "ordered":
        m = col.n_values
        if m <= 1:
            return Fraction(0)
        cum = np.cumsum(e)
        return Fraction(int(sum(abs(x) for x in cum.tolist())), (m - 1) * scale)
    h = col.hierarchy
    height = 0 if h is None else h.height - 1
    if h is None or height == 0:
        return Fraction(0)
    cost = 0
    for level in range(1, h.height):
        parent = h.level_map(level - 1, level).astype(np.int64)
        size = h.n_labels(level)
        tot = np.zeros(size, dtype=object)
        pos = np.zeros(size, dtype=object)
        np.add.at(tot, parent, e)
        np.add.at(pos, parent, np.where(e > 0, e, 0))
        cost += level * int(sum(p - max(t, 0) for p, t in zip(pos.tolist(), tot.tolist())))
        e = tot
    return Fraction(cost, height * scale)


def emd_beyond(
    ss: SensitiveStats, sizes: np.ndarray, border: np.ndarray, distance: str, t: float
) -> np.ndarray:
    """For the classes flagged in ``border``, whether their distance exceeds ``t`` exactly.

    Equal and ordered distances are decided for all those classes at once in ``int64`` (the
    integer numerators ``2 n N d`` and ``(m - 1) n N d`` of :func:`emd_exact`, the ordered one
    by the segment sums of :func:`veil.anonymity._tcloseness.emd`) when no product can reach
    ``2**62``; otherwise, and for the hierarchical distance, class by class.
    """
    col = ss.column
    big_c, big_n = _global_counts(col)
    target = threshold(t)
    a, b = target.numerator, target.denominator
    n_cls, m = sizes.shape[0], col.n_values
    border = border & (np.asarray(sizes) > 0)  # an empty class holds nothing: never beyond
    out = np.zeros(n_cls, dtype=bool)
    idx = np.flatnonzero(border)
    if idx.size == 0:
        return out
    small = 4 * (m + 2) * big_n * big_n < 1 << 62
    if distance not in ("equal", "ordered") or not small or m <= 1:
        for i in idx.tolist():
            out[i] = emd_exact(ss, i, distance, (big_c, big_n)) > target
        return out
    sel = border[ss.cls]
    cls, val, cnt = ss.cls[sel], ss.val[sel].astype(np.int64), ss.cnt[sel].astype(np.int64)
    n = np.asarray(sizes, dtype=np.int64)
    num = np.zeros(n_cls, dtype=np.int64)
    if distance == "equal":  # sum_v |c_v N - C_v n| = sum_present (|.| - C_v n) + n N
        cn = big_c[val] * n[cls]
        np.add.at(num, cls, np.abs(cnt * big_n - cn) - cn)
        num += n * big_n
        denom = 2 * n * big_n
    else:  # segments [val, end) where the class's cumulative count K is constant
        cc = np.cumsum(big_c)  # CC_j: the table's cumulative count up to value j
        s_pre = np.concatenate(([0], np.cumsum(cc)))  # S[x] = sum_{j<x} CC_j
        order = np.lexsort((val, cls))
        cls, val, cnt = cls[order], val[order], cnt[order]
        start = np.searchsorted(cls, cls)
        cum = np.cumsum(cnt)
        k = cum - np.concatenate(([0], cum))[start]  # K after each pair
        last = np.r_[cls[1:] != cls[:-1], True]
        end = np.where(last, m, np.r_[val[1:], m])
        kn, nn = k * big_n, n[cls]
        tp = np.clip(np.searchsorted(cc, kn // nn, side="right"), val, end)
        seg = kn * (tp - val) - nn * (s_pre[tp] - s_pre[val])
        seg += nn * (s_pre[end] - s_pre[tp]) - kn * (end - tp)
        np.add.at(num, cls, seg)
        isfirst = np.r_[True, cls[1:] != cls[:-1]]
        num[cls[isfirst]] += n[cls[isfirst]] * s_pre[val[isfirst]]  # values before the first
        denom = (m - 1) * n * big_n
    # num / denom > a / b, in Python integers (b may be a large power of ten)
    lhs = num[idx].astype(object) * b
    rhs = denom[idx].astype(object) * a
    out[idx] = (lhs > rhs).astype(bool)
    return out
