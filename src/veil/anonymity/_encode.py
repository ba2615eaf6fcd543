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
  no pointer is ever dereferenced (the objects are taken from the array itself).  The identity
  of each row is read from a small table indexed by the pointer's offset from the lowest one
  (one slot per possible address: no hashing), or, when the objects lie far apart in memory,
  from a multiplicative hash checked against the row's own pointer (``_identity_codes``);
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


_TABLE_MIN_ROWS = 3072  # columns this long read identities from an address table
_SLOTS_MIN = 1 << 16  # address tables (one byte a slot) up to this many slots at any size,
_SLOTS_PER_ROW = 16  # up to this many slots a row,
_SLOTS_MAX = 1 << 20  # and never more (zeroing the table must stay cheaper than hashing)
# odd multipliers of the hashed slots (Fibonacci hashing, then more from splitmix64's constants)
_MULTIPLIERS = (0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB, 0xD6E8FEB86659FD93)


def _identity_codes(ptr: np.ndarray, probe: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Identity codes of every row (first-appearance order) from a table indexed by address.

    ``probe`` holds the distinct pointers of the first rows, in order of first appearance.
    With ``d = ptr - min(ptr)`` (unsigned) and ``s`` the number of low bits clear in the bitwise
    or of all the ``d`` (the common alignment), every ``d`` is an exact multiple of ``2**s`` and
    below ``2**s * size`` with ``size = (or >> s) + 1``:

    * when ``size`` is small, ``d >> s`` numbers the addresses one to one, so a ``uint8`` table
      of ``size`` slots holding the probe identities' labels gives every row its identity by one
      read: exact, as two rows share a slot only when they hold the same pointer;
    * otherwise (objects far apart in memory; seen at once when the probe's own objects are),
      a multiplicative hash of the pointer that separates the probe identities indexes a small
      table, and every row's pointer is compared with the pointer stored in its slot (a hash
      verified row by row: exact too).

    Rows whose object did not occur in the probe (an empty slot, or a failed comparison) are
    factorized apart and numbered after the probe's identities, as their first appearance comes
    after every probe identity's.  Returns the codes of ``factorize_int64(ptr)`` (any integer
    dtype) and a row holding each of the identities not in the probe (None if there are none).
    """
    n, seen = ptr.shape[0], probe.shape[0]
    limit = min(max(_SLOTS_PER_ROW * n, _SLOTS_MIN), _SLOTS_MAX)
    u, pu = ptr.view(np.uint64), probe.view(np.uint64)
    exact = int(pu.max() - pu.min()) >> 4 < limit  # else the probe alone spans too wide a range
    if exact:
        lo = u.min()
        d = u - lo  # 0 <= d < 2**64: one value per pointer
        orv = int(np.bitwise_or.reduce(d))
        shift = (orv & -orv).bit_length() - 1 if orv else 0  # the low bits every d has clear
        size = (orv >> shift) + 1  # every d <= orv, so d >> shift < size
        exact = size <= limit
    if exact:
        np.right_shift(d, np.uint64(shift), out=d)  # in place: unsigned shifts are the fast ones
        slots = (pu - lo) >> np.uint64(shift)
    else:  # about two slots per pair of probe identities: most multipliers separate them all
        bits = min(max(10, (2 * seen * seen).bit_length()), 20)
        size = 1 << bits
        for mult in _MULTIPLIERS:
            slots = (pu * np.uint64(mult)) >> np.uint64(64 - bits)  # modulo 2**64
            if np.unique(slots).shape[0] == seen:
                break
        else:  # no multiplier separates the probe: hash every pointer
            inv, uniq = factorize_int64(ptr)
            late = _some_positions(inv, uniq.shape[0])[seen:] if uniq.shape[0] > seen else None
            return inv, late
        d = u * np.uint64(mult)
        np.right_shift(d, np.uint64(64 - bits), out=d)
    lut = np.zeros(size, dtype=np.min_scalar_type(seen))  # uint8 for up to 255 identities
    lut[slots.view(np.intp)] = np.arange(1, seen + 1)
    codes = lut.take(d.view(np.intp))  # 1..seen, 0 in an empty slot (an object not in the probe)
    if exact:
        late = np.flatnonzero(codes == 0) if codes.min() == 0 else None
    else:  # empty slots hold probe[0], which no row of theirs holds (its own slot is full)
        keys = np.full(size, probe[0], dtype=np.int64)
        keys[slots.view(np.intp)] = probe
        ok = keys.take(d.view(np.intp)) == ptr
        late = None if ok.all() else np.flatnonzero(~ok)
    if late is None:
        codes -= 1
        return codes, None
    inv, uniq = factorize_int64(ptr[late])
    if seen + uniq.shape[0] >= np.iinfo(codes.dtype).max:
        codes = codes.astype(np.int64)
    codes[late] = inv + (seen + 1)
    codes -= 1
    return codes, late[_some_positions(inv, uniq.shape[0])]


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

    Gives exactly the codes of factorizing ``arr`` by value (first-appearance order), as an
    integer array of any dtype (``uint8`` for a long column of few strings), and the cardinality.

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
    head, probe = factorize_int64(ptr[:m])
    if probe.shape[0] * 4 > m:  # many objects: grouping by identity would not help
        return _factorize_values(arr)
    if n == m:  # the probe was the whole column
        inv, at = head, _some_positions(head, probe.shape[0])
    elif n < _TABLE_MIN_ROWS or ptr.itemsize != 8:  # short (one hash table costs less), or
        # 32-bit addresses (the table works on 64-bit ones)
        inv, ptrs = factorize_int64(ptr)
        at = _some_positions(inv, ptrs.shape[0])
    else:
        inv, late = _identity_codes(ptr, probe)
        at = _some_positions(head, probe.shape[0])
        if late is not None:
            at = np.concatenate([at, late])
    # one object per identity (any of its rows: they hold the same object), in the order of
    # first appearance of the identities
    distinct = arr[at]
    objs = distinct.tolist()
    if len(objs) <= 256 and all(type(v) is str for v in objs) and len(set(objs)) == len(objs):
        return inv, len(objs)  # distinct objects are distinct strings: identity codes are codes
    vcodes, card = _factorize_values(distinct)
    return vcodes.take(inv), card  # take: a fancy index by uint8 codes is 3x slower


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
        return idx.fill_null(card).to_numpy(zero_copy_only=False), card + 1
    # no missing value: no code for it (a narrower key in group_rows, same classes and order)
    return idx.to_numpy(zero_copy_only=False), max(card, 1)


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
        return codes, max(n_cat, 1)  # no missing value: no code for it
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
    key, space, own = combined_key(cols, cards, consume=consume)
    return group_key(key, space, own=own)


def combined_key(
    cols: list[np.ndarray], cards: list[int], *, consume: bool = False
) -> tuple[np.ndarray, int, bool]:
    """``(key, space, own)``: one integer key a row, equal exactly when the rows' codes are.

    The codes are packed in bit fields (the first column the most significant), in ``int32``
    while the key fits and every code array is narrow, else ``int64``; past 2**62 the
    combinations seen so far are renumbered.  ``0 <= key < space``.  ``own``: the key is a new
    array (or the consumed ``cols[0]``, see :func:`group_rows`), not a view of an input.
    """
    space = int(cards[0])
    # with narrow codes (categoricals, Arrow indices, object identities): int32 while the key
    # fits (half the memory traffic), then int64; int64 codes are combined in int64 (no casts)
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
    return key, space, own


def group_key(key: np.ndarray, space: int, *, own: bool = False) -> Grouping:
    """The classes of the rows by their :func:`combined_key` (modified when ``own``).

    The key and the row number share one ``int64`` (renumbered first if they do not fit), so
    one sort gives the classes (in key order), the rows of each (ascending) and the sizes.
    """
    n = key.shape[0]
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
    np.right_shift(key.view(np.uint64), np.uint64(shift), out=key.view(np.uint64))  # key >= 0;
    # numpy's in-place shift is vectorized for unsigned integers only (7x faster here)
    starts, sizes = _runs(key)
    return Grouping(rows, starts, sizes)


def _runs(srt: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and length of each run of equal values of a sorted, non-empty array."""
    n = srt.shape[0]
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.not_equal(srt[1:], srt[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    sizes = np.empty(starts.shape[0], dtype=np.int64)
    np.subtract(starts[1:], starts[:-1], out=sizes[:-1])
    sizes[-1] = n - starts[-1]
    return starts, sizes


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
