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

__all__ = ["bound_contributions", "rank_within"]


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
    """
    persons = np.asarray(persons, dtype=np.int64)
    groups = np.asarray(groups, dtype=np.int64)
    n = persons.shape[0]
    if n == 0:
        return np.zeros(0, dtype=bool)
    pair_key = persons * np.int64(max(n_groups, 1)) + groups
    pair_codes, pair_uniques = pd.factorize(pair_key)
    pair_codes = np.asarray(pair_codes, dtype=np.int64)
    n_pairs = len(pair_uniques)
    keep = _cap(pair_codes, n_pairs, max_rows, priorities)
    pair_person = np.asarray(pair_uniques, dtype=np.int64) // np.int64(max(n_groups, 1))
    pair_keep = _cap(pair_person, int(pair_person.max()) + 1, max_groups, priorities)
    if not pair_keep.all():
        keep &= pair_keep[pair_codes]
    return keep
