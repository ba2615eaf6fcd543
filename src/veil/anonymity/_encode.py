"""Quasi-identifier columns to integer codes, and rows to equivalence classes.

:func:`group_rows` gives the equivalence classes of a table over its quasi-identifiers by
sorting: the column codes are packed in bit fields of one int64 key, then with the row number,
and sorted, so one sort gives the classes (in key order), their sizes, the rows of each class
(ascending) and the first row of each class, with no hashing of the combined key.

:func:`encode_column` returns ``(codes, cardinality)``: ``codes`` is an ``int64`` array with
values in ``0..cardinality-1``; two rows get the same code exactly when their values are equal
and of one kind (:func:`~veil.schema._hierarchy.factorize_typed`: ``True`` and ``1`` differ);
missing values (``None``, ``NaN``, ``pd.NA``, ``NaT``) all share one code of their own.  Which
number a value gets is unspecified (first appearance for text, ``value - min`` for small-range
integers, category order for categoricals): only the grouping is used.

Paths, by storage:

* ``category``: the categorical codes (no hashing at all);
* pyarrow-backed strings (pandas 3's default ``str``): pyarrow's ``dictionary_encode``
  (:func:`encode_columns` runs it for several large columns at once on a small thread pool);
* ``object`` arrays: rows are first grouped by *object identity* (the pointer stored in the
  array, hashed as an ``int64``), then only the distinct objects are compared by value.  Readers
  such as ``pandas.read_csv`` store one object per distinct string of a column, so a text column
  of 30,000 rows holds a few dozen objects and the value hashing is done a few dozen times
  instead of 30,000 (see docs/benchmarks/anonymity.md).  When the first rows already hold many
  distinct objects (strings built one by one, or many distinct values), the values are hashed
  directly.  Grouping by identity is exact: the same object is equal to itself, and equal
  objects with different identities are merged by the value pass;
  no pointer is ever dereferenced (the objects are taken from the array itself);
* numpy integers and booleans: ``value - min`` when the range is small, else pandas' int64
  hash table;
* anything else: ``pandas.factorize``.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from veil._parallel import thread_pool
from veil.anonymity._stats import factorize_int64
from veil.schema._hierarchy import factorize_typed

__all__ = [
    "encode_column",
    "encode_codes",
    "encode_columns",
    "factorize_objects",
    "group_columns",
    "group_rows",
    "Grouping",
]


_PROBE = 1024  # rows whose objects are counted before grouping by identity


def _object_pointers(arr: np.ndarray) -> np.ndarray:
    """The ``PyObject*`` stored in each slot of a C-contiguous 1-d object array, as integers.

    A read-only view of ``arr``'s memory: use it only while ``arr`` is referenced.  The integers
    are only compared, never dereferenced.
    """
    buf = (ctypes.c_ssize_t * arr.shape[0]).from_address(arr.ctypes.data)
    return np.frombuffer(buf, dtype=np.intp)


def _some_positions(inv: np.ndarray, n_labels: int) -> np.ndarray:
    """A row position holding each label, for labels numbered in order of first appearance.

    Labels ``0..max(head)`` all occur in a head of the rows (first-appearance numbering), so
    only the head and the rows holding a later label are scattered.
    """
    pos = np.empty(n_labels, dtype=np.int64)
    m = min(inv.shape[0], 4096)
    head = inv[:m]
    pos[head] = np.arange(m, dtype=np.int64)
    seen = int(head.max()) + 1
    if seen < n_labels:
        late = np.flatnonzero(inv[m:] >= seen) + m
        pos[inv[late]] = late
    return pos


def _factorize_values(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Value codes of an object array (first-appearance order) and the cardinality.

    :func:`~veil.schema._hierarchy.factorize_typed`, the grouping every class-forming part of
    Veil shares: cells of different types are different values (``True``, ``1`` and ``1.0``
    are three), missing values take the last code.
    """
    codes, uniq = factorize_typed(values)  # every missing value -> -1
    if codes.size and codes.min() < 0:
        codes[codes < 0] = len(uniq)
        return codes, len(uniq) + 1
    return codes, len(uniq)


def factorize_objects(arr: np.ndarray) -> tuple[np.ndarray, int]:
    """Codes of a 1-d object array: identity grouping, then value grouping of the distinct objects.

    Gives exactly the codes of factorizing ``arr`` by value (first-appearance order).

    Examples
    --------
    >>> a = np.array(["b", "a", "b", None, float("nan")], dtype=object)
    >>> codes, card = factorize_objects(a)
    >>> codes.tolist(), card
    ([0, 1, 0, 2, 2], 3)
    """
    n = arr.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64), 1
    arr = np.ascontiguousarray(arr)
    ptr = _object_pointers(arr)
    m = min(n, _PROBE)
    seen = len(factorize_int64(ptr[:m])[1])
    if seen * 4 > m:  # many objects: grouping by identity would not help
        return _factorize_values(arr)
    inv, ptrs = factorize_int64(ptr)
    # one object per identity (any of its rows: they hold the same object), in the order of
    # first appearance of the identities
    distinct = arr[_some_positions(inv, ptrs.shape[0])]
    objs = distinct.tolist()
    if len(objs) <= 256 and all(type(v) is str for v in objs) and len(set(objs)) == len(objs):
        return inv, len(objs)  # distinct objects are distinct strings: identity codes are codes
    vcodes, card = _factorize_values(distinct)
    return vcodes[inv], card


def _integer_codes(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Codes of an integer or boolean array: ``value - min`` when the range is small."""
    if values.dtype.kind == "b":
        return values.astype(np.int64), 2
    lo, hi = int(values.min()), int(values.max())
    if hi - lo < max(values.shape[0], 1024):
        if values.dtype == np.uint64:  # subtract before casting (values may exceed int64)
            return (values - np.uint64(lo)).astype(np.int64), hi - lo + 1
        codes = values.astype(np.int64)  # a copy
        codes -= lo
        return codes, hi - lo + 1
    codes, uniq = factorize_int64(values)
    return codes, len(uniq)


def _arrow_codes(s: pd.Series) -> tuple[np.ndarray, int] | None:
    """Codes of a pyarrow-backed column via ``dictionary_encode``; None if not applicable.

    The codes are pyarrow's ``int32`` indices as a (read-only) numpy array.
    """
    try:
        import pyarrow as pa
    except ImportError:  # pragma: no cover - pandas' arrow strings need pyarrow
        return None
    data = getattr(s.array, "_pa_array", None)  # the column's own arrow data (zero-copy)
    if data is None:  # pragma: no cover - private attribute of pandas' arrow arrays
        try:
            data = pa.array(s.array)
        except (TypeError, ValueError, pa.ArrowException):
            return None
    if not (pa.types.is_string(data.type) or pa.types.is_large_string(data.type)):
        return None
    if isinstance(data, pa.ChunkedArray):
        data = data.chunk(0) if data.num_chunks == 1 else data.combine_chunks()
    enc = data.dictionary_encode()  # nulls stay null in the indices
    card = len(enc.dictionary)
    idx = enc.indices
    if idx.null_count:
        idx = idx.fill_null(card)
    return idx.to_numpy(zero_copy_only=False), card + 1


def encode_column(s: pd.Series) -> tuple[np.ndarray, int]:
    """``(codes, cardinality)`` of a column (see the module docstring).

    ``codes`` is always a new ``int64`` array that the caller may modify.

    Examples
    --------
    >>> encode_column(pd.Series(["x", "y", "x"]))[0].tolist()
    [0, 1, 0]
    >>> encode_column(pd.Series(["x", None, "x"], dtype="category"))
    (array([0, 1, 0]), 2)
    """
    codes, card = encode_codes(s)
    return codes.astype(np.int64), card


def encode_codes(s: pd.Series) -> tuple[np.ndarray, int]:
    """Like :func:`encode_column`, but ``codes`` may be any integer dtype and read-only.

    ``codes`` is either a new array or a read-only view (never a writeable view of ``s``), so
    :func:`group_rows` may consume it.

    Saves the widening copy where the storage already holds small integer codes
    (categoricals, Arrow dictionary indices); :func:`group_rows` takes such codes as they are.
    """
    dtype = s.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        n_cat = len(dtype.categories)
        codes = s.array.codes  # a read-only view of the categorical's codes (-1: missing)
        if codes.size and codes.min() < 0:
            codes = codes.astype(np.int64)
            codes[codes < 0] = n_cat
        return codes, n_cat + 1
    if isinstance(dtype, np.dtype) and dtype.kind == "O":
        return factorize_objects(s.to_numpy())
    if isinstance(dtype, np.dtype) and dtype.kind in "iub":  # no missing values possible
        return _integer_codes(s.to_numpy())
    if _is_arrow_text(s):
        got = _arrow_codes(s)
        if got is not None:
            return got
    elif isinstance(dtype, pd.StringDtype):  # python storage: an object array of str inside
        return factorize_objects(s.to_numpy(dtype=object))
    codes, uniq = pd.factorize(s)  # missing -> -1
    codes = np.asarray(codes, dtype=np.int64)
    if codes.size and codes.min() < 0:
        codes[codes < 0] = len(uniq)
    return codes, len(uniq) + 1


def _is_arrow_text(s: pd.Series) -> bool:
    """True for pyarrow-backed string columns (pandas 3's default ``str``, ``string[pyarrow]``)."""
    dtype = s.dtype
    if isinstance(dtype, pd.StringDtype):
        return str(dtype.storage).startswith("pyarrow")
    return isinstance(dtype, pd.ArrowDtype) and dtype.kind in "OSU"


_POOL_MIN_ROWS = 8192  # below this, handing columns to threads costs more than it saves


def encode_columns(columns: Sequence[pd.Series]) -> list[tuple[np.ndarray, int]]:
    """:func:`encode_codes` of each column; Arrow string columns hashed on threads when large.

    pyarrow's ``dictionary_encode`` (the cost on pandas 3's ``str`` columns: about 0.4 ms per
    30,000 rows) releases the GIL, so two or more such columns are handed to a small persistent
    pool; the calling thread encodes the other columns, then takes back (cancels and encodes
    itself) the Arrow columns no worker has started.  The codes do not depend on which thread
    computed them.
    """
    arrow = [
        i for i, s in enumerate(columns) if not isinstance(s.dtype, np.dtype) and _is_arrow_text(s)
    ]
    pool = None
    if len(arrow) >= 2 and len(columns[arrow[0]]) >= _POOL_MIN_ROWS:
        pool = thread_pool()
    if pool is None:
        return [encode_codes(s) for s in columns]
    futures = {i: pool.submit(encode_codes, columns[i]) for i in arrow}
    out: list[tuple[np.ndarray, int] | None] = [
        None if i in futures else encode_codes(s) for i, s in enumerate(columns)
    ]
    for i in reversed(arrow):  # the last submitted are the last a worker would start
        if futures[i].cancel():
            out[i] = encode_codes(columns[i])
    for i in arrow:
        if out[i] is None:
            out[i] = futures[i].result()
    return out  # type: ignore[return-value]


_INT32_SPACE = 1 << 31  # key values 0..2**31-1 fit an int32
_KEY_BITS = 62  # keys stay below 2**62 so that products of a code and a cardinality fit


@dataclass(frozen=True)
class Grouping:
    """Equivalence classes of the rows of a table (classes numbered in key order).

    Attributes
    ----------
    rows
        Row positions sorted by class; ascending within a class.
    starts
        Index in ``rows`` where each class begins.
    sizes
        Number of rows of each class.
    """

    rows: np.ndarray
    starts: np.ndarray
    sizes: np.ndarray

    @property
    def n_classes(self) -> int:
        return int(self.sizes.shape[0])

    @property
    def first(self) -> np.ndarray:
        """First (smallest) row position of each class."""
        return self.rows[self.starts]

    @cached_property
    def labels(self) -> np.ndarray:
        """Class of each row in ``rows`` order (pair with ``rows``; no scatter needed)."""
        return np.repeat(np.arange(self.n_classes, dtype=np.int64), self.sizes)

    def ids(self) -> np.ndarray:
        """Class of each row, by position."""
        out = np.empty(self.rows.shape[0], dtype=np.int64)
        out[self.rows] = self.labels
        return out


def group_rows(cols: list[np.ndarray], cards: list[int], *, consume: bool = False) -> Grouping:
    """Group rows by their codes in ``cols`` (each ``0..card-1``, any integer dtype).

    The arrays are not modified, except ``cols[0]`` when ``consume`` is true and it is a
    writeable ``int64`` array (saves a copy when the caller made the codes).

    Examples
    --------
    >>> g = group_rows([np.array([1, 0, 1, 0]), np.array([0, 0, 0, 1])], [2, 2])
    >>> g.sizes.tolist(), g.first.tolist(), g.ids().tolist()
    ([1, 1, 2], [1, 3, 0], [2, 0, 2, 1])
    """
    n = cols[0].shape[0]
    space = int(cards[0])
    # with narrow codes (categoricals, Arrow indices): int32 while the key fits (half the
    # memory traffic), then int64; int64 codes are combined in int64 (no casts); a new array
    narrow = space <= _INT32_SPACE and all(np.asarray(c).dtype.itemsize <= 4 for c in cols[1:])
    key = np.asarray(cols[0])
    # own: key may be modified (a new array of this function's, or a consumable input)
    own = consume and key.dtype == np.int64 and key.flags.writeable
    for c, card in zip(cols[1:], cards[1:]):
        bits = max(int(card) - 1, 1).bit_length()  # bit fields: shifts and ors are cheapest
        if space << bits >= 1 << _KEY_BITS:  # renumber the combinations seen so far
            key, uniq = factorize_int64(key)
            space, own = uniq.shape[0], True
        dt = np.int32 if narrow and space << bits <= _INT32_SPACE else np.int64
        if own and key.dtype == dt:
            key <<= bits
        else:  # the first shift (or the widening to int64) makes the new array
            key, own = np.left_shift(key, bits, dtype=dt), True
        np.bitwise_or(key, c, out=key, casting="unsafe")  # 0 <= c < card: no value changes
        space <<= bits
    if not own or key.dtype != np.int64:
        key = key.astype(np.int64)
    shift = max(n - 1, 1).bit_length()
    if space > (1 << (_KEY_BITS - shift)):  # key and row number must share one int64
        key, uniq = factorize_int64(key)
        space = uniq.shape[0]
    key <<= shift
    key |= np.arange(n, dtype=np.int64)
    key.sort()
    rows = key & ((1 << shift) - 1)
    key >>= shift
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.not_equal(key[1:], key[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    sizes = np.empty(starts.shape[0], dtype=np.int64)
    np.subtract(starts[1:], starts[:-1], out=sizes[:-1])
    sizes[-1] = n - starts[-1]
    return Grouping(rows, starts, sizes)


def group_columns(columns: Sequence[pd.Series]) -> Grouping:
    """Equivalence classes of the rows over ``columns`` (rows by position; any index).

    Examples
    --------
    >>> g = group_columns([pd.Series([1, 2, 1]), pd.Series(["x", "y", "x"])])
    >>> g.sizes.tolist(), g.ids().tolist()
    ([2, 1], [0, 1, 0])
    """
    encoded = encode_columns(columns)
    # the codes are the encoder's (new or read-only views): the first may be consumed
    return group_rows([c for c, _ in encoded], [card for _, card in encoded], consume=True)
