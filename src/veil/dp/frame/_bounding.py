"""Per-person contribution bounding (vectorized uniform sampling).

Differential privacy protects a *privacy unit* (a person).  Before noise can be calibrated, the
number of rows one person contributes must be bounded: at most ``max_groups`` groups per person
and at most ``max_rows`` rows per (person, group).  Excess contributions are dropped by
*uniform sampling without replacement*: every row (every person-group pair) receives an
independent 64-bit random priority from the secure generator and, within each person-group pair
(each person), the ``max_rows`` (``max_groups``) smallest priorities are kept.  Sampling must not
depend on the values, or the choice itself would leak (Wilson et al., "Differentially Private SQL
with Bounded User Contribution", PoPETs 2020, section 3).

Only the rows of over-contributing pairs/persons are sorted, so data that already satisfy the
bounds cost two hash factorizations and two ``bincount`` calls.

Example
-------
>>> import numpy as np
>>> persons = np.array([0, 0, 0, 1]); groups = np.array([0, 0, 1, 0])
>>> prio = lambda n: np.arange(n, dtype=np.uint64)
>>> keep = bound_contributions(persons, groups, 2, max_groups=1, max_rows=1, priorities=prio)
>>> int(keep.sum())
2
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

__all__ = ["bound_contributions", "rank_within", "persons_per_group"]


def rank_within(keys: np.ndarray, priorities: np.ndarray) -> np.ndarray:
    """Rank (0-based) of each element among those sharing its key, ordered by priority.

    Parameters
    ----------
    keys
        Integer keys.
    priorities
        Random tie-free priorities of the same length.

    Returns
    -------
    numpy.ndarray of int64
        ``rank[i]`` = number of elements with the same key and a smaller priority.
    """
    n = keys.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    order = np.lexsort((priorities, keys))
    sorted_keys = keys[order]
    starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
    run_lengths = np.diff(np.r_[starts, n])
    rank_sorted = np.arange(n, dtype=np.int64) - np.repeat(starts, run_lengths)
    rank = np.empty(n, dtype=np.int64)
    rank[order] = rank_sorted
    return rank


def _cap(keys: np.ndarray, n_keys: int, cap: int, priorities: Callable[[int], np.ndarray]):
    """Boolean mask keeping at most ``cap`` uniformly chosen elements per key."""
    counts = np.bincount(keys, minlength=n_keys)
    keep = np.ones(keys.shape[0], dtype=bool)
    if counts.size == 0 or counts.max() <= cap:
        return keep
    over = np.flatnonzero(counts[keys] > cap)
    rank = rank_within(keys[over], priorities(over.size))
    keep[over[rank >= cap]] = False
    return keep


def _bits(x: int) -> int:
    return max(int(x).bit_length(), 1)


def _runs(sorted_keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start index and length of each run of equal values in a sorted array."""
    n = sorted_keys.shape[0]
    change = np.empty(n, dtype=bool)
    change[0] = True
    np.not_equal(sorted_keys[1:], sorted_keys[:-1], out=change[1:])
    starts = np.flatnonzero(change)
    return starts, np.diff(starts, append=n)


def _rank(starts: np.ndarray, runs: np.ndarray, n: int) -> np.ndarray:
    """Rank of each element within its run."""
    return np.arange(n, dtype=np.int64) - np.repeat(starts, runs)


def bound_contributions(
    persons: np.ndarray,
    groups: np.ndarray,
    n_groups: int,
    *,
    max_groups: int,
    max_rows: int,
    priorities: Callable[[int], np.ndarray],
) -> np.ndarray:
    """Mask of the rows kept after bounding each person's contribution.

    Parameters
    ----------
    persons
        Integer person codes (``>= 0``), one per row.
    groups
        Integer group codes in ``[0, n_groups)``, one per row.
    n_groups
        Number of groups.
    max_groups
        Largest number of distinct groups a person may contribute to.
    max_rows
        Largest number of rows a person may contribute to one group.
    priorities
        ``priorities(n)`` returns ``n`` independent uniform random 64-bit integers (from the
        secure generator).

    Returns
    -------
    numpy.ndarray of bool
        Rows to keep; the kept rows are a uniform sample of each person's rows subject to the
        caps.

    Notes
    -----
    One value sort of the packed key ``(person, group, row)`` groups each person's rows by
    group.  Only over-full pairs get random priorities (``rank_within`` on that subset), and
    only persons in too many groups have their pairs sampled (:func:`_sample_pairs`); data that
    already satisfy the caps cost one sort.  Keys that do not fit in 64 bits fall back to
    hash factorization and ``lexsort``.
    """
    persons = np.asarray(persons, dtype=np.int64)
    groups = np.asarray(groups, dtype=np.int64)
    n = persons.shape[0]
    if n == 0:
        return np.zeros(0, dtype=bool)
    pb, gb, ib = _bits(int(persons.max())), _bits(max(n_groups - 1, 0)), _bits(n - 1)
    if pb + gb + ib > 64:
        return _bound_lexsort(persons, groups, n_groups, max_groups, max_rows, priorities)
    u_gb, u_ib = np.uint64(gb), np.uint64(ib)
    key = persons.view(np.uint64) << (u_gb + u_ib)  # codes are >= 0: view, no copy
    key |= groups.view(np.uint64) << u_ib
    key |= np.arange(n, dtype=np.uint64)
    key.sort()  # numpy's SIMD value sort: an argsort by (person, group) for free
    rows_sorted = (key & ((np.uint64(1) << u_ib) - np.uint64(1))).view(np.int64)
    key >>= u_ib  # the (person, group) pair key, sorted
    starts, runs = _runs(key)
    keep_sorted = np.ones(n, dtype=bool)
    changed = False
    if runs.max() > max_rows:  # rows of over-full pairs: keep a uniform sample of max_rows
        over = np.flatnonzero(np.repeat(runs > max_rows, runs))
        run_id = np.repeat(np.arange(runs.size, dtype=np.int64), runs)[over]
        keep_sorted[over] = rank_within(run_id, priorities(over.size)) < max_rows
        changed = True
    pair_person = (key[starts] >> u_gb).view(np.int64)  # sorted by person
    del key
    _, p_runs = _runs(pair_person)
    if p_runs.max() > max_groups:  # pairs of persons in too many groups: uniform sample
        pair_keep = _sample_pairs(pair_person, p_runs, max_groups, pb, priorities)
        keep_sorted &= np.repeat(pair_keep, runs)
        changed = True
    keep = np.ones(n, dtype=bool)
    if changed:
        keep[rows_sorted] = keep_sorted
    return keep


def _sample_pairs(
    pair_person: np.ndarray,
    p_runs: np.ndarray,
    max_groups: int,
    pb: int,
    priorities: Callable[[int], np.ndarray],
) -> np.ndarray:
    """Keep ``max_groups`` uniformly chosen pairs of each person (pairs sorted by person).

    Each pair of an over-contributing person gets random bits under its person code; one value
    sort gives each person's ``max_groups``-th smallest key as a threshold, and a pair is kept
    when its key does not exceed its person's threshold.  A tie at the threshold (probability
    about ``2^-(64 - bits(persons))`` per pair) could keep one pair too many, so the few persons
    concerned are re-sampled exactly with ``lexsort``.
    """
    m = pair_person.size
    keep = np.ones(m, dtype=bool)
    over_person = np.repeat(p_runs > max_groups, p_runs)
    idx = np.flatnonzero(over_person)
    u_pb = np.uint64(64 - pb)
    kkey = (pair_person[idx].view(np.uint64) << u_pb) | (priorities(idx.size) >> np.uint64(pb))
    ssorted = np.sort(kkey)
    runs = p_runs[p_runs > max_groups]
    run_starts = np.concatenate(([0], np.cumsum(runs)[:-1]))
    threshold = ssorted[run_starts + max_groups - 1]
    keep[idx] = kkey <= np.repeat(threshold, runs)
    tie = ssorted[run_starts + max_groups] == threshold  # runs are longer than max_groups
    if tie.any():
        bad = np.flatnonzero(np.repeat(tie, runs))
        sub = idx[bad]
        keep[sub] = rank_within(pair_person[sub], priorities(sub.size)) < max_groups
    return keep


def _bound_lexsort(
    persons: np.ndarray,
    groups: np.ndarray,
    n_groups: int,
    max_groups: int,
    max_rows: int,
    priorities: Callable[[int], np.ndarray],
) -> np.ndarray:
    """Fallback for keys wider than 64 bits: hash factorization and ``lexsort``."""
    pair_key = persons * np.int64(max(n_groups, 1)) + groups
    pair_codes, pair_uniques = pd.factorize(pair_key)
    pair_codes = np.asarray(pair_codes, dtype=np.int64)
    keep = _cap(pair_codes, len(pair_uniques), max_rows, priorities)
    pair_person = np.asarray(pair_uniques, dtype=np.int64) // np.int64(max(n_groups, 1))
    pair_person = np.asarray(pd.factorize(pair_person)[0], dtype=np.int64)
    pair_keep = _cap(pair_person, int(pair_person.max()) + 1, max_groups, priorities)
    if not pair_keep.all():
        keep &= pair_keep[pair_codes]
    return keep


def persons_per_group(persons: np.ndarray, groups: np.ndarray, n_groups: int) -> np.ndarray:
    """Number of distinct persons in each group (one packed-key value sort).

    Example
    -------
    >>> persons_per_group(np.array([0, 0, 1]), np.array([1, 1, 1]), 2).tolist()
    [0, 2]
    """
    persons = np.asarray(persons, dtype=np.int64)
    groups = np.asarray(groups, dtype=np.int64)
    if persons.size == 0:
        return np.zeros(n_groups, dtype=np.int64)
    gb = _bits(max(n_groups - 1, 0))
    if _bits(int(persons.max())) + gb > 64:
        pairs = pd.DataFrame({"p": persons, "g": groups}).drop_duplicates()
        return np.bincount(pairs["g"].to_numpy(dtype=np.int64), minlength=n_groups)
    key = persons.view(np.uint64) << np.uint64(gb)
    key |= groups.view(np.uint64)
    key.sort()
    starts, _ = _runs(key)
    mask = (np.uint64(1) << np.uint64(gb)) - np.uint64(1)
    return np.bincount((key[starts] & mask).view(np.int64), minlength=n_groups)
