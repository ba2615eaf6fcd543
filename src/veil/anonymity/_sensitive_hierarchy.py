"""Sensitive values a reader merges, for columns of leaves (hierarchy) or categories."""

from __future__ import annotations

import numpy as np
import pandas as pd

from veil.anonymity._stats import (
    _booleans_merged,
    _first_of,
    _missing_texts_merged,
    _numbers_merged,
    _text_order,
    number_values,
)
from veil.errors import InputError
from veil.schema._hierarchy import Hierarchy, as_str_values, missing_from_hierarchy

__all__ = ["hierarchy_codes", "texts_read_as"]


def _reader_merged(ustr: np.ndarray, num: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Distinct texts ``ustr`` merged as a reader of the release takes them: ``(key, seen)``,
    the merged value of each text and the texts kept (the first of each value).

    Texts of one number in a column of numbers (``num``: :func:`number_values` of ``ustr``,
    which also gives every text read as missing one key), else texts read as missing and texts
    of one boolean in a column of booleans; ``len(seen) == len(ustr)`` when none merge.

    Texts that differ only in leading/trailing whitespace (``" x"`` and ``"x"``) are one value
    too: a reader that strips cells (``pandas.read_csv(skipinitialspace=True)``, spreadsheet
    imports that trim, a cleaning step's ``str.strip``) reads them alike, and the rules above
    then apply to the stripped texts (``" NA"`` is read as missing, ``"True "`` as a
    boolean).  The keys then follow the stripping reader's order of its values
    (:func:`~veil.anonymity._stats._text_order` of the stripped texts: numeric order for
    numbers, else text order), for the ordered distance's view over them.
    """
    texts = [str(u) for u in ustr]
    stripped = [t.strip() for t in texts]
    if stripped == texts:
        return _merged_as_read(ustr, num)
    scodes, suniq = pd.factorize(np.array(stripped, dtype=object))
    suniq = np.asarray(suniq, dtype=object)
    order, snum = _text_order(suniq)
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    skey, _ = _merged_as_read(suniq[order], None if snum is None else snum[order])
    key = np.asarray(skey, dtype=np.int64)[rank[scodes]]
    m = int(key.max()) + 1
    return key, ustr[_first_of(key, m)]


def _merged_as_read(ustr: np.ndarray, num: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_reader_merged` of texts without leading/trailing whitespace."""
    ident = np.arange(len(ustr), dtype=np.int64)
    if num is not None:
        return _numbers_merged(ident, ustr, num)
    return _booleans_merged(*_missing_texts_merged(ident, ustr))


def hierarchy_codes(
    ser: pd.Series, name: str, hierarchy: Hierarchy
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Level-0 codes of a sensitive column with a hierarchy, its leaves, and ``read_as``.

    Leaves whose written texts a reader takes for one value (texts read as missing, texts of
    one number in a column of numbers, of one boolean in a column of booleans: the rules of
    the text path, applied to the texts the column holds) are one value to l-diversity: with
    leaves ``NA`` and ``null``, a class holding both was counted 2-diverse while pandas'
    default reader reads two missing values.  ``read_as`` is None when no leaves merge.
    """
    tcodes, ustr = as_str_values(ser)
    lut = hierarchy._lookup(ustr)
    if (lut < 0).any():
        raise InputError(missing_from_hierarchy([str(v) for v in ustr[lut < 0]], name))
    codes = lut[tcodes].astype(np.int64)
    labels = np.asarray(hierarchy.labels(0), dtype=object)
    key, _ = _reader_merged(ustr, number_values(ustr))
    parent = np.arange(len(labels), dtype=np.int64)  # union-find over the leaves

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = int(parent[x])
        return x

    first: dict[int, int] = {}
    merged = False
    for k, leaf in zip(np.asarray(key).tolist(), lut.tolist()):
        other = first.setdefault(k, leaf)
        a, b = root(other), root(leaf)
        if a != b:
            parent[max(a, b)] = min(a, b)
            merged = True
    if not merged:
        return codes, labels, None
    roots = np.array([root(i) for i in range(len(labels))], dtype=np.int64)
    return codes, labels, pd.factorize(roots)[0].astype(np.int64)


def texts_read_as(labels: np.ndarray) -> np.ndarray | None:
    """``read_as`` of distinct texts (the categories of an ordered Categorical): texts a reader
    takes for one value (read as missing; one number in a column of numbers; one boolean in a
    column of booleans) share a code, in the texts' order; None when none merge."""
    key, seen = _reader_merged(labels, number_values(labels))
    return None if len(seen) == len(labels) else np.asarray(key, dtype=np.int64)
