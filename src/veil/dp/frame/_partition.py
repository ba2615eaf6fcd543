"""Group keys: encoding rows to group codes, public key sets and private partition selection.

*Public keys.*  When the analyst lists the group keys in advance, the set of output rows does
not depend on the data: rows whose key is not listed are dropped and listed keys without rows
appear with pure noise.  No budget is spent on choosing groups.

*Private partition selection.*  When keys are unknown, releasing the keys present in the data
would reveal that somebody with a rare key exists.  After contribution bounding (each person in
at most ``max_groups`` groups) Veil counts distinct persons per group, adds two-sided geometric
(discrete Laplace) noise with per-group budget ``eps / max_groups`` and keeps a group only when
the noisy count reaches the threshold ``tau = 1 + ceil(ln(1 / (delta' (1 + e^-eps'))) / eps')``
with ``delta' = delta / max_groups``: a group holding a single person then survives with
probability at most ``delta'``.  This is the Laplace-thresholding mechanism of Korolova et al.
("Releasing search queries and clicks privately", WWW 2009) and Wilson et al. ("Differentially
private SQL with bounded user contribution", PoPETs 2020); Desfontaines, Voss, Gipson & Mandayam
("Differentially private partition selection", PoPETs 2022) show a slightly better optimal
mechanism for ``max_groups = 1`` -- our threshold is within a few persons of it.

Example
-------
>>> selection_threshold(1.0, 1e-6, 1)
15
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from veil.dp._canon import canonical, factorize_cells, group_key, group_tag
from veil.errors import ConfigError

__all__ = [
    "encode_groups",
    "encode_selected_groups",
    "encode_public",
    "key_frame",
    "key_lookup",
    "selection_threshold",
]


def _factorize(series: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """Codes and uniques of a group column; a nested cell (list, dict, array) gets ``-1``: it
    forms no group and matches no key (:func:`veil.dp._canon.factorize_cells`)."""
    return factorize_cells(series, use_na_sentinel=False)


_MAX_CODE = 2**62  # largest mixed-radix group code built before re-factorizing


def encode_groups(df: pd.DataFrame, by: Sequence[str]) -> tuple[np.ndarray, pd.DataFrame]:
    """Group code of every row and the key table (one row per code).

    Missing values form their own group, as in SQL's GROUP BY.  A row with a nested cell
    (list, dict, array) in a group column has the code ``-1``: it is in no group.
    """
    if not by:
        return np.zeros(len(df), dtype=np.int64), pd.DataFrame(index=range(1))
    return _combine([_factorize(df[c]) for c in by], by, len(df))


def _combine(
    parts: list[tuple[np.ndarray, pd.Index]], by: Sequence[str], n: int
) -> tuple[np.ndarray, pd.DataFrame]:
    """Group codes and key table from per-column ``(codes, uniques)``."""
    if len(parts) == 1:
        codes, uniques = parts[0]
        return codes, pd.DataFrame({by[0]: uniques})
    # rows with a nested cell (code -1) in any column are in no group
    nested = np.logical_or.reduce([codes < 0 for codes, _ in parts])
    if nested.any():
        rows = np.flatnonzero(~nested)
        codes, keys = _combine([(c[rows], u) for c, u in parts], by, rows.size)
        out = np.full(n, -1, dtype=np.int64)
        out[rows] = codes
        return out, keys
    # mixed-radix codes, re-factorized whenever the next radix could overflow int64 (four
    # columns of 60,000 values do): an overflowed code merged groups and decoded to keys that
    # no row has
    combined = np.zeros(n, dtype=np.int64)
    size = 1
    for codes, uniques in parts:
        radix = max(len(uniques), 1)
        if size > _MAX_CODE // radix:
            combined = np.asarray(pd.factorize(combined)[0], dtype=np.int64)
            size = int(combined.max()) + 1 if combined.size else 1
        combined = combined * np.int64(radix) + codes
        size *= radix
    codes = np.asarray(pd.factorize(combined)[0], dtype=np.int64)
    first = _first_rows(codes)
    keys = {
        c: np.asarray(uniques.take(col_codes[first])) for c, (col_codes, uniques) in zip(by, parts)
    }
    return codes, pd.DataFrame(keys)


def _first_rows(codes: np.ndarray) -> np.ndarray:
    """Index of the first row of each code ``0 .. codes.max()`` (codes from a factorization)."""
    first = np.empty(int(codes.max()) + 1 if codes.size else 0, dtype=np.int64)
    first[codes[::-1]] = np.arange(codes.size - 1, -1, -1, dtype=np.int64)
    return first


def _canonical_codes(series: pd.Series) -> tuple[np.ndarray, list[Any]]:
    """Row codes of a column grouped by :func:`veil.dp._canon.group_key`, and the key of each
    code.  Numeric and boolean dtypes need no merge (distinct values have distinct keys); text
    and object columns merge spellings of one value (``'30'`` and ``'30.0'``, ``True`` and
    ``'true'``) with one take over the rows, only when some spellings do coincide."""
    codes, uniques = _factorize(series)  # -1: a nested cell, in no group
    values = np.asarray(uniques, dtype=object).tolist()
    if series.dtype == object and any(_bool_like(v) for v in values):
        codes, values = _split_booleans(series, codes)
    keys = [group_key(v) for v in values]
    ids: dict[Any, int] = {}
    remap = np.fromiter(
        (ids.setdefault(group_tag(k), len(ids)) for k in keys), dtype=np.int64, count=len(keys)
    )
    if len(ids) == len(keys):
        return codes, keys
    merged: list[Any] = [None] * len(ids)
    for k, i in zip(keys, remap.tolist()):
        merged[i] = k
    return np.append(remap, -1)[codes], merged  # code -1 (nested) gathers the -1 appended


def _bool_like(value: Any) -> bool:
    """Whether ``value`` may stand for a boolean in a factorization (``True == 1``)."""
    return isinstance(value, (bool, np.bool_, int, float, np.number)) and value in (0, 1)


def _split_booleans(series: pd.Series, codes: np.ndarray) -> tuple[np.ndarray, list[Any]]:
    """Factorization keeps ``True`` and ``1`` (``False`` and ``0``) together (equal in Python)
    and labels the pair by whichever row comes first; group keys keep them apart, so a row's
    group must not depend on the other rows' order: split each code by "is a boolean"."""
    is_bool = np.fromiter(
        (isinstance(v, (bool, np.bool_)) for v in series.tolist()), dtype=np.int64, count=len(codes)
    )
    rows = np.flatnonzero(codes >= 0)  # not the nested cells (code -1): in no group
    sub, _ = _factorize(pd.Series(codes[rows] * 2 + is_bool[rows]))
    split = np.full(len(codes), -1, dtype=np.int64)
    split[rows] = sub
    return split, series.iloc[rows[_first_rows(sub)]].tolist()


def encode_selected_groups(df: pd.DataFrame, by: Sequence[str]) -> tuple[np.ndarray, pd.DataFrame]:
    """:func:`encode_groups` for private partition selection: rows are grouped, and keys
    released, by per-value group keys (:func:`veil.dp._canon.group_key`).

    Grouping by the raw values would let one person's cell change the other people's groups:
    ``read_csv`` parses ``True``/``true`` (or ``30``/``30.0``) to one value, but keeps them
    apart as text once one person's cell in the column is text; and the released keys would be
    ``'30'`` (text) or ``30`` depending on that cell.  The key columns are built by
    the release with :func:`veil.dp._canon.release_column`, after selection, so that their dtype
    follows the released keys alone (here they are ``object``).
    """
    if not by:
        return encode_groups(df, by)
    parts = []
    for c in by:
        codes, keys = _canonical_codes(df[c])
        uniques = np.empty(len(keys), dtype=object)
        uniques[:] = keys
        parts.append((codes, pd.Index(uniques, dtype=object)))
    return _combine(parts, by, len(df))


_MAX_KEY_COMBINATIONS = 10_000_000  # rows of a {column: [values]} cross product


def key_frame(keys: Any, by: Sequence[str]) -> pd.DataFrame:
    """Validate public keys and return them as a DataFrame with the group columns."""
    if isinstance(keys, pd.DataFrame):
        missing = [c for c in by if c not in keys.columns]
        if missing:
            raise ConfigError(f"keys table lacks the group column(s) {missing}")
        frame = keys.loc[:, list(by)].reset_index(drop=True)
    elif isinstance(keys, Mapping):  # {column: [values]}: every combination (the CLI's --keys)
        missing = [c for c in by if c not in keys]
        extra = [c for c in keys if c not in by]
        if missing or extra:
            raise ConfigError(
                f"keys by column must name exactly the group columns {list(by)}; "
                f"missing {missing}, not grouped by {extra}"
            )
        values = []
        for c in by:
            v = keys[c]
            if isinstance(v, (str, bytes)) or not hasattr(v, "__iter__"):
                raise ConfigError(f"keys of {c!r} must be a list of values, got {v!r}")
            values.append(list(v))
        combos = math.prod(len(v) for v in values)
        if combos > _MAX_KEY_COMBINATIONS:
            raise ConfigError(
                f"keys by column give {combos:,} combinations (more than "
                f"{_MAX_KEY_COMBINATIONS:,}); list the key tuples that exist instead"
            )
        frame = pd.DataFrame(list(itertools.product(*values)), columns=list(by))
    elif len(by) == 1:
        if isinstance(keys, (str, bytes)) or not hasattr(keys, "__iter__"):
            raise ConfigError(f"keys of {by[0]!r} must be a list of values, got {keys!r}")
        frame = pd.DataFrame({by[0]: list(keys)})
    else:
        rows = [tuple(k) for k in keys]
        if any(len(r) != len(by) for r in rows):
            raise ConfigError(f"each key must be a tuple of {len(by)} values ({', '.join(by)})")
        frame = pd.DataFrame(rows, columns=list(by))
    if len(frame) == 0:
        raise ConfigError("keys must list at least one group")
    if frame.duplicated().any():
        dup = frame[frame.duplicated()].head(3).to_dict("records")
        raise ConfigError(f"keys must be unique; duplicated: {dup}")
    return frame


def key_lookup(frame: pd.DataFrame, by: Sequence[str]) -> dict[tuple, int]:
    """Index of each public key row by its cells' canonical forms
    (:func:`veil.dp._canon.canonical`); :class:`ConfigError` when two keys denote one value.

    A function of the public keys alone, so that a plan refuses such keys before any budget
    is charged.
    """
    lookup: dict[tuple, int] = {}
    for i, row in enumerate(frame.loc[:, list(by)].itertuples(index=False, name=None)):
        key = tuple(canonical(v) for v in row)
        if key in lookup:
            j = lookup[key]
            raise ConfigError(
                f"keys {tuple(frame.iloc[j])} and {tuple(frame.iloc[i])} denote the same value "
                "(keys match cells by value: 1, 1.0, '1', True and 'true' are one key)"
            )
        lookup[key] = i
    return lookup


def encode_public(
    df: pd.DataFrame, by: Sequence[str], keys: Any, lookup: dict[tuple, int] | None = None
) -> tuple[np.ndarray, pd.DataFrame]:
    """Codes of rows into a public key list (``-1`` for rows whose key is not listed).

    A row matches a key when their per-value canonical forms (:func:`veil.dp._canon.canonical`)
    are equal: ``True`` matches the keys ``True``, ``'true'`` and ``1`` whether the column was
    read as ``bool`` or, with one person's value missing, ``object``; ``30`` matches ``'30'``
    whether the column holds numbers or text.  A row's match thus depends on its own cells
    only, never on the dtype inferred from the other rows.  The keys are returned as given.
    ``lookup``: :func:`key_lookup` of the keys, when the caller already built it.
    """
    frame = keys if isinstance(keys, pd.DataFrame) and list(keys.columns) == list(by) else None
    frame = key_frame(keys, by) if frame is None else frame
    lookup = key_lookup(frame, by) if lookup is None else lookup
    codes, observed = encode_groups(df, by)
    source = zip(*(np.asarray(observed[c], dtype=object).tolist() for c in by))
    mapping = np.fromiter(
        (lookup.get(tuple(canonical(v) for v in row), -1) for row in source),
        dtype=np.int64,
        count=len(observed),
    )
    # code -1 (a nested cell -- list, dict, array -- in a group column) matches no key: it
    # indexes the -1 appended last, so one gather maps every row
    return np.append(mapping, -1)[codes], frame


def selection_threshold(epsilon: float, delta: float, max_groups: int) -> int:
    """Integer threshold on the noisy distinct-person count of a group (see module notes).

    Parameters
    ----------
    epsilon, delta
        Budget of the selection step (split evenly over ``max_groups`` groups per person).
    max_groups
        Largest number of groups one person contributes to.

    Returns
    -------
    int
        Keep a group when ``persons + Z >= threshold`` with ``Z`` discrete Laplace of scale
        ``max_groups / epsilon``.
    """
    if not (epsilon > 0 and 0 < delta < 1):
        raise ConfigError(
            "private partition selection needs epsilon > 0 and 0 < delta < 1; give delta or "
            "list the public keys"
        )
    eps1 = epsilon / max_groups
    delta1 = delta / max_groups
    p = math.exp(-eps1)
    k = math.ceil(math.log(1.0 / (delta1 * (1.0 + p))) / eps1)
    return 1 + max(k, 0)
