"""Per-equivalence-class statistics computed in one vectorized pass from integer class ids.

See the design note in :mod:`veil.anonymity._models`.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from veil.errors import InputError
from veil.schema._hierarchy import Hierarchy, as_str_values

__all__ = [
    "SensitiveColumn",
    "SensitiveStats",
    "ClassStats",
    "encode_sensitive",
    "text_order_warning",
    "number_values",
    "group_keys",
    "factorize_int64",
]

try:  # pandas' int64 hash table: same algorithm as pd.factorize without its per-call overhead
    from pandas._libs.hashtable import Int64HashTable as _Int64HashTable
except ImportError:  # pragma: no cover - depends on the pandas build
    _Int64HashTable = None


def factorize_int64(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(inverse, uniques)`` of an int64 array, uniques in order of first appearance."""
    keys = np.ascontiguousarray(keys, dtype=np.int64)
    if _Int64HashTable is not None:
        try:
            uniq, inv = _Int64HashTable(max(len(keys), 1)).factorize(keys)
            return np.asarray(inv, dtype=np.int64), np.asarray(uniq, dtype=np.int64)
        except (TypeError, ValueError):  # pragma: no cover - private API changed
            pass
    inv, uniq = pd.factorize(keys, sort=False)
    return np.asarray(inv, dtype=np.int64), np.asarray(uniq, dtype=np.int64)


def group_keys(keys: np.ndarray, key_space: int | None = None) -> tuple[np.ndarray, int]:
    """Map integer ``keys`` to dense group ids ``0..g-1`` (in order of first key value).

    Uses a dense ``bincount`` table when the key space is small, otherwise hashing.
    Returns ``(inverse, n_groups)``.
    """
    n = keys.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64), 0
    if key_space is not None and key_space <= 4 * n + 256:
        present = np.zeros(key_space, dtype=np.int64)
        present[keys] = 1
        ids = np.cumsum(present) - 1
        return ids[keys], int(ids[-1] + 1)
    inv, uniq = factorize_int64(keys)
    return inv, len(uniq)


@dataclass(frozen=True)
class SensitiveColumn:
    """A sensitive column encoded as integer value codes for the whole table.

    Attributes
    ----------
    name
        Column name.
    codes
        ``int64`` code of each row's value (``0..n_values-1``).  Codes follow the value order
        (numeric order for numeric columns and for text columns of numbers: ``text_numbers``;
        string order otherwise) or, when ``hierarchy`` is set, the hierarchy's level-0 codes.
    labels
        The value of each code, as str.
    global_freq
        Distribution of the values in the whole table (t-closeness reference), sums to 1.
    numeric
        Numeric values of each code when the column is numeric (ordered distance), else None.
    hierarchy
        Hierarchy of the values for hierarchical-distance t-closeness, else None.
    read_as
        For each code, the code of the value a reader of the written release may take it for
        (texts read as missing, texts of one number or of one boolean:
        :func:`encode_sensitive`); None when every code is a value of its own.  l-diversity counts these coarser values
        (:meth:`as_read`: fewer, less diverse values, the stricter count); t-closeness keeps
        the written texts (merging values can only bring a class's distribution closer to the
        table's, so the finer view is the stricter one) and, with the ordered distance on
        ``text_numbers``, the larger of the distances over the texts and over ``as_read``.
    text_numbers
        True for a text column whose texts are all numbers (missing cells aside): its codes
        follow the numeric order (:func:`encode_sensitive`), as a reader who reads the column
        back as numbers orders it.
    written_as
        Like ``read_as``, for a text column holding both missing cells and the text ``""``:
        the release writes the missing cells as ``""``, so a reader of its texts sees one value
        (:meth:`as_written`; the ordered distance takes the larger, as for ``read_as``).

    Examples
    --------
    >>> col = encode_sensitive(pd.Series(["flu", "cold", "flu", "flu"]), "disease")
    >>> col.labels.tolist(), col.codes.tolist(), col.global_freq.tolist()
    (['cold', 'flu'], [1, 0, 1, 1], [0.25, 0.75])
    >>> col.n_values, col.numeric is None
    (2, True)

    Texts read as missing (``''``, ``'NA'``), and texts of one number in a column of numbers,
    are one value to l-diversity (``as_read``), each its own to t-closeness; the numbers are in
    numeric order, the texts read as missing last:

    >>> col = encode_sensitive(pd.Series(["0.1", "0.10", "", "NA", "2"]), "s")
    >>> col.labels.tolist(), col.read_as.tolist(), col.text_numbers
    (['0.1', '0.10', '2', '', 'NA'], [0, 0, 1, 2, 2], True)
    >>> col.as_read.labels.tolist(), col.as_read.codes.tolist()
    (['0.1', '2', ''], [0, 0, 2, 2, 1])
    """

    name: str
    codes: np.ndarray
    labels: np.ndarray
    global_freq: np.ndarray
    numeric: np.ndarray | None = None
    hierarchy: Hierarchy | None = None
    read_as: np.ndarray | None = None
    text_numbers: bool = False
    written_as: np.ndarray | None = None

    @property
    def n_values(self) -> int:
        return len(self.labels)

    @cached_property
    def as_read(self) -> SensitiveColumn:
        """The column over the values a reader may see (``read_as`` applied); self without."""
        return self._merged(self.read_as)

    @cached_property
    def as_written(self) -> SensitiveColumn:
        """The column over the texts the release shows (``written_as`` applied); self without."""
        return self._merged(self.written_as)

    def _merged(self, to: np.ndarray | None) -> SensitiveColumn:
        if to is None:
            return self
        m = int(to.max()) + 1
        codes = to[self.codes]
        freq = np.bincount(codes, minlength=m).astype(np.float64) / max(len(codes), 1)
        return SensitiveColumn(self.name, codes, self.labels[_first_of(to, m)], freq)


def _first_of(to: np.ndarray, m: int) -> np.ndarray:
    """Position of the first entry of ``to`` equal to each of ``0..m-1``."""
    first = np.full(m, -1, dtype=np.int64)
    first[to[::-1]] = np.arange(len(to) - 1, -1, -1)
    return first


def _is_ordered_categorical(ser: pd.Series) -> bool:
    return isinstance(ser.dtype, pd.CategoricalDtype) and bool(ser.dtype.ordered)


def _text_order(
    ustr: np.ndarray, missing_cells: bool = False
) -> tuple[np.ndarray, np.ndarray | None]:
    """The order of a text column's distinct texts for the ordered distance, and the number of
    each text (:func:`number_values`) when it is the numeric order (None: the text order).

    ``missing_cells``: the last text is that of the missing cells (``"nan"``, appended by
    :func:`as_str_values`); the release shows them as the empty text (what :func:`veil.io.write`
    and :meth:`pandas.DataFrame.to_csv` write), so they take the place of ``""`` in the order,
    just after a written ``""`` (a text reader ordered them among the ``n`` texts before: not
    the order of the file it reads).  The file shows a missing cell and a written ``""`` alike;
    they stay two neighbouring values here (not merged: a release written with another missing
    marker shows them apart).

    When every text is a number or read as missing (:func:`number_values`: pandas' default CSV
    reader then reads the column back as numbers), the texts follow their numbers (``"9"`` before
    ``"10"``), texts of one number (``"1"``, ``"1.0"``) next to each other in text order, and the
    texts read as missing last, in text order (pandas sorts missing values last).  Otherwise the
    text order (lexicographic).
    """
    text = ustr.astype(str)
    if missing_cells:
        text[-1] = ""
    num = number_values(ustr)
    if num is None:
        return np.argsort(text, kind="stable"), None
    missing = np.isnan(num)
    value = np.where(missing, 0.0, num) + 0.0  # -0.0 and 0.0 are one number
    return np.lexsort((text, value, missing)), num


def text_order_warning(
    values: pd.Series, name: str, encoded: SensitiveColumn | None = None
) -> None:
    """Warn that the ordered t-closeness distance will order ``values`` as text.

    Called once per :func:`veil.anonymity.check` / :func:`veil.anonymity.anonymize` call for a
    non-numeric sensitive column that is not an ordered pandas Categorical and whose texts are
    not all numbers (those are ordered as numbers: :func:`_text_order`).  ``encoded``: the
    column's :func:`encode_sensitive` (without a hierarchy), which already says whether its
    texts are numbers (saves a second pass over the column).
    """
    ser = pd.Series(values, copy=False)
    numeric = pd.api.types.is_numeric_dtype(ser.dtype) and not pd.api.types.is_bool_dtype(ser.dtype)
    if numeric or _is_ordered_categorical(ser):
        return
    if encoded is not None and encoded.hierarchy is None:
        numbers = encoded.text_numbers
    else:
        numbers = number_values(as_str_values(ser)[1]) is not None
    if numbers:  # texts of numbers: numeric order
        return
    warnings.warn(
        f"t-closeness with the ordered distance on non-numeric column {name!r}: its values are "
        "ordered as text (lexicographically), which is rarely their real order. To give their "
        "order, make the column an ordered pandas Categorical, e.g. df[col] = "
        "pd.Categorical(df[col], categories=[...], ordered=True), or code the values as "
        "numbers; or use the equal or hierarchical distance. (A column whose texts are all "
        "numbers is ordered as numbers.)",
        UserWarning,
        stacklevel=3,
    )


#: Texts that CSV readers take for a missing value: pandas' defaults, and Veil's ``?``
#: (:data:`veil.io.DEFAULT_MISSING`).  A written release cannot show these apart from a
#: missing cell (written empty, or as the input's missing marker).
READ_AS_MISSING = frozenset(
    {"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN"}
    | {"<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null", "?"}
)


def _missing_texts_merged(codes: np.ndarray, ustr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Merge the texts of :data:`READ_AS_MISSING` into one value, written ``"nan"``.

    :func:`as_str_values` gives missing cells the text ``"nan"``; a reader of the written
    release also takes ``""``, ``"NA"``, ``"?"``, ... for missing values, so they are one
    sensitive value (a class holding only ``""`` and missing cells was counted as 2-diverse
    while the file shows one value).
    """
    texts = ustr.tolist()
    if READ_AS_MISSING.isdisjoint(texts):  # the common case, in one C-level set pass
        return codes, ustr
    hit = np.fromiter((u in READ_AS_MISSING for u in texts), dtype=bool, count=len(texts))
    if hit.sum() < 2:
        return codes, ustr
    keep = ~hit
    first = int(np.flatnonzero(hit)[0])
    keep[first] = True
    new_code = np.cumsum(keep) - 1
    remap = np.where(hit, new_code[first], new_code)
    labels = ustr[keep].copy()
    labels[new_code[first]] = "nan"
    return remap[codes], labels


def number_values(ustr: np.ndarray) -> np.ndarray | None:
    """The number each text stands for when every text is a number or read as missing, else None.

    The rule of pandas' default CSV reader, which reads such a column back as numbers
    (:func:`pandas.to_numeric`: ``"0.10"``, ``"1e-1"`` and ``".1"`` are 0.1, ``"1"`` and
    ``"1.0"`` are 1, ``"inf"`` is infinity); the texts of :data:`READ_AS_MISSING` (missing
    cells are written ``"nan"``) get NaN and do not make the column a text column.  None when
    some other text is not a number, or no text is one.

    Examples
    --------
    >>> number_values(np.array(["10", "9", "0.10", "nan"], dtype=object)).tolist()
    [10.0, 9.0, 0.1, nan]
    >>> number_values(np.array(["10", "9", "x"], dtype=object)) is None
    True
    """
    # text columns: one Python float() call decides (few texts are read as missing)
    first = next((u for u in ustr if u not in READ_AS_MISSING), None)
    if first is None:
        return None
    try:
        float(str(first))
    except ValueError:
        return None
    present = ~pd.Series(ustr, dtype=object).isin(READ_AS_MISSING).to_numpy()
    if not present.any():
        return None
    num = pd.to_numeric(pd.Series(ustr[present], dtype=object), errors="coerce")
    if num.isna().any():  # some text is not a number: the column is read as text
        return None
    out = np.full(len(ustr), np.nan)
    out[present] = num.to_numpy(dtype=np.float64)
    return out


def _numbers_merged(
    codes: np.ndarray, ustr: np.ndarray, num: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """In a column whose texts are all numbers, texts of one number are one value.

    A reader of the written release reads such a column back as numbers (pandas' default
    reader: ``"0.10"``, ``"0.1"``, ``"1e-1"`` are all 0.1; ``"1"`` and ``"1.0"`` are 1), so a
    class holding ``"0.10"`` and ``"0.1"`` shows one value, not two.  Missing cells (the
    one text of :data:`READ_AS_MISSING` left by :func:`_missing_texts_merged`: ``"nan"``, or
    ``""``, ``"NA"``, ... when it is the only one) stay their own value, and do not make the
    column a text column: ``"1"``, ``"1.0"`` and ``""`` are read as 1, 1 and a missing value
    (:func:`number_values`; ``num``: its result when already known, which also merges every
    text read as missing into one value).
    """
    if len(ustr) < 2:
        return codes, ustr
    if num is None:
        num = number_values(ustr)
    if num is None:
        return codes, ustr
    present = ~np.isnan(num)
    key = np.empty(len(ustr), dtype=object)
    key[present] = num[present] + 0.0  # -0.0 and 0.0 are one key
    key[~present] = "nan"
    return _merged_by_key(codes, ustr, key)


def _merged_by_key(
    codes: np.ndarray, ustr: np.ndarray, key: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Texts with one ``key`` (the value a reader takes them for) as one value, written as the
    first of them; ``(codes, ustr)`` as they are when every key is a text's own."""
    remap, uniq = pd.factorize(key)
    if len(uniq) == len(ustr):
        return codes, ustr
    first = _first_of(remap, len(uniq))  # first text of each key
    return remap[codes].astype(np.int64), ustr[first]


#: Texts pandas' default CSV reader takes for ``True`` / ``False`` (in a column of these only).
_BOOLEAN_TEXTS = {"True": "true", "TRUE": "true", "true": "true"} | {
    "False": "false",
    "FALSE": "false",
    "false": "false",
}


def _booleans_merged(codes: np.ndarray, ustr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """In a column whose texts are all booleans, texts of one boolean are one value.

    pandas' default reader reads a column of ``"True"``, ``"true"``, ``"TRUE"``, ``"False"``,
    ... (and missing cells) back as booleans, so a class holding ``"True"`` and ``"true"``
    shows one value, not two.  Any other text makes it a text column (texts kept apart).
    """
    if not 2 <= len(ustr) <= len(_BOOLEAN_TEXTS) + 1:  # at most one text read as missing
        return codes, ustr
    texts = [str(u) for u in ustr]
    if not all(t in _BOOLEAN_TEXTS or t in READ_AS_MISSING for t in texts):
        return codes, ustr
    key = np.array([_BOOLEAN_TEXTS.get(t, "nan") for t in texts], dtype=object)
    return _merged_by_key(codes, ustr, key)


def encode_sensitive(
    values: pd.Series | np.ndarray, name: str = "", hierarchy: Hierarchy | None = None
) -> SensitiveColumn:
    """Encode a sensitive column (see :class:`SensitiveColumn`).

    Codes follow the hierarchy's level-0 order when ``hierarchy`` is given, else the numeric
    order of a numeric column, the category order of an *ordered* pandas Categorical (unused
    categories left out), the numeric order of a text column whose texts are all numbers
    (:func:`_text_order`), or the text order of the values.

    Examples
    --------
    >>> s = encode_sensitive(pd.Series([3, 1, 3, 2]), "x")
    >>> s.codes.tolist(), s.labels.tolist()
    ([2, 0, 2, 1], ['1', '2', '3'])
    >>> c = pd.Categorical(["high", "low", "mid"], categories=["low", "mid", "high"], ordered=True)
    >>> s = encode_sensitive(pd.Series(c), "risk")
    >>> s.codes.tolist(), s.labels.tolist()
    ([2, 0, 1], ['low', 'mid', 'high'])

    Texts of numbers are ordered as the numbers (not ``"10" < "9"``), texts of one number
    next to each other, missing cells last:

    >>> s = encode_sensitive(pd.Series(["9", "10", "1.0", "", "1"]), "income")
    >>> s.labels.tolist(), s.text_numbers, s.as_read.labels.tolist()
    (['1', '1.0', '9', '10', ''], True, ['1', '9', '10', ''])
    """
    from veil.anonymity._sensitive_hierarchy import _reader_merged, hierarchy_codes, texts_read_as

    ser = pd.Series(values, copy=False)
    numeric = read_as = None
    if hierarchy is not None:  # read_as: leaves, categories a reader takes for one value
        codes, labels, read_as = hierarchy_codes(ser, name, hierarchy)
    elif _is_ordered_categorical(ser):
        if ser.isna().any():
            raise InputError(f"sensitive column {name!r} has missing values")
        cat = ser.cat.remove_unused_categories()
        codes = np.asarray(cat.cat.codes, dtype=np.int64)
        labels = np.array([str(c) for c in cat.cat.categories], dtype=object)
        read_as = texts_read_as(labels)
    elif pd.api.types.is_numeric_dtype(ser.dtype) and not pd.api.types.is_bool_dtype(ser.dtype):
        if ser.isna().any():
            raise InputError(
                f"sensitive column {name!r} has {int(ser.isna().sum())} missing value(s): a "
                "numeric column's values are ordered and missing has no place among them; drop "
                "or impute those records, or give the column as text (astype(str)) so that "
                "missing counts as one more value (then not with ordered-distance t-closeness)"
            )
        codes, uniq = pd.factorize(ser, sort=True)
        numeric = np.asarray(uniq, dtype=np.float64)
        codes = np.asarray(codes, dtype=np.int64)
        labels = np.array([str(u) for u in as_str_values(uniq)[1]], dtype=object)
    else:
        codes, ustr = as_str_values(ser)
        # missing cells: the last text, "nan" (a cheap test first: most columns have none)
        missing_cells = bool(len(ustr)) and ustr[-1] == "nan" and bool(ser.isna().any())
        order, num = _text_order(ustr, missing_cells)
        text_numbers = num is not None
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        codes = rank[codes].astype(np.int64)
        labels = ustr[order]
        read_as, seen = _reader_merged(labels, None if num is None else num[order])
        n = len(codes)
        freq = np.bincount(codes, minlength=len(labels)).astype(np.float64) / max(n, 1)
        if len(seen) == len(labels):  # every written text is a value of its own to a reader
            read_as = None
        written_as = None
        empty = np.flatnonzero(ustr[:-1] == "") if missing_cells else ()
        if len(empty):  # missing cells are written "": one value with that text in the file
            key = np.arange(len(labels), dtype=np.int64)
            key[rank[len(ustr) - 1]] = rank[empty[0]]
            written_as = pd.factorize(key)[0].astype(np.int64)  # the order kept
        return SensitiveColumn(
            name,
            codes,
            labels,
            freq,
            read_as=read_as,
            text_numbers=text_numbers,
            written_as=written_as,
        )
    n = len(codes)
    freq = np.bincount(codes, minlength=len(labels)).astype(np.float64)
    freq /= max(n, 1)
    return SensitiveColumn(name, codes, labels, freq, numeric, hierarchy, read_as=read_as)


@dataclass
class SensitiveStats:
    """Sparse class x value counts of one sensitive column.

    ``cls``, ``val`` and ``cnt`` list every non-zero ``(class, value)`` pair, sorted by class
    then value.
    """

    column: SensitiveColumn
    cls: np.ndarray
    val: np.ndarray
    cnt: np.ndarray

    @classmethod
    def from_pairs(
        cls,
        column: SensitiveColumn,
        class_ids: np.ndarray,
        values: np.ndarray,
        n_classes: int,
        weights: np.ndarray | None = None,
    ) -> SensitiveStats:
        m = column.n_values
        key = class_ids.astype(np.int64) * m + values
        space = n_classes * m
        if space <= max(4 * key.shape[0], 1 << 20):
            c = np.bincount(key, weights=weights, minlength=space)
            nz = np.flatnonzero(c)
            cnt = c[nz]
        else:
            nz, inv = np.unique(key, return_inverse=True)
            cnt = np.bincount(inv.ravel(), weights=weights, minlength=len(nz))
        return cls(column, nz // m, nz % m, np.rint(cnt).astype(np.int64))

    def distinct(self, n_classes: int) -> np.ndarray:
        """Number of distinct values per class."""
        return np.bincount(self.cls, minlength=n_classes)

    def as_read(self) -> SensitiveStats:
        """The counts over the values a reader may see (:attr:`SensitiveColumn.read_as`).

        ``self`` when every written text is a value of its own (the common case).
        """
        return self._merged(self.column.read_as, self.column.as_read)

    def as_written(self) -> SensitiveStats:
        """The counts over the texts the release shows (:attr:`SensitiveColumn.written_as`)."""
        return self._merged(self.column.written_as, self.column.as_written)

    def _merged(self, to: np.ndarray | None, col: SensitiveColumn) -> SensitiveStats:
        if to is None:
            return self
        m = col.n_values
        key = self.cls * m + to[self.val]
        nz, inv = np.unique(key, return_inverse=True)
        cnt = np.bincount(inv.ravel(), weights=self.cnt, minlength=len(nz))
        return SensitiveStats(col, nz // m, nz % m, np.rint(cnt).astype(np.int64))


@dataclass
class ClassStats:
    """Statistics of every equivalence class, as needed by the privacy models.

    Attributes
    ----------
    sizes
        ``int64`` number of records in each class.
    sensitive
        Per sensitive column, the sparse class x value counts.
    population
        Population size of each class (k-map), when a population table is known.

    Examples
    --------
    Records 0-2 form class 0 and records 3-4 class 1:

    >>> y = encode_sensitive(pd.Series(["a", "a", "b", "b", "b"]), "y")
    >>> stats = ClassStats.from_codes(np.array([0, 0, 0, 1, 1]), sensitive={"y": y})
    >>> stats.n_classes, stats.n_records, stats.sizes.tolist()
    (2, 5, [3, 2])
    >>> stats.sensitive["y"].distinct(stats.n_classes).tolist()  # distinct values per class
    [2, 1]
    """

    sizes: np.ndarray
    sensitive: dict[str, SensitiveStats] = field(default_factory=dict)
    population: np.ndarray | None = None

    @property
    def n_classes(self) -> int:
        return int(self.sizes.shape[0])

    @property
    def n_records(self) -> int:
        return int(self.sizes.sum())

    @classmethod
    def from_codes(
        cls,
        class_ids: np.ndarray,
        n_classes: int | None = None,
        *,
        weights: np.ndarray | None = None,
        sensitive: Mapping[str, SensitiveColumn] | None = None,
        rows: np.ndarray | None = None,
        population: np.ndarray | None = None,
    ) -> ClassStats:
        """Compute the statistics from the class id of each record (one bincount pass each).

        Parameters
        ----------
        class_ids
            Class id (``0..n_classes-1``) of each record considered.
        n_classes
            Number of classes (default ``max(class_ids) + 1``).
        weights
            Optional multiplicity of each record (for tables of distinct tuples).
        sensitive
            Encoded sensitive columns, with codes for the *whole* table.
        rows
            Positions, in the whole table, of the records ``class_ids`` refers to (default: all).
        population
            Population class sizes (k-map), passed through.

        Examples
        --------
        >>> st = ClassStats.from_codes(np.array([0, 0, 1]))
        >>> st.sizes.tolist()
        [2, 1]
        """
        class_ids = np.asarray(class_ids, dtype=np.int64)
        if n_classes is None:
            n_classes = int(class_ids.max()) + 1 if class_ids.size else 0
        if weights is None:
            sizes = np.bincount(class_ids, minlength=n_classes).astype(np.int64)
        else:
            sizes = np.rint(np.bincount(class_ids, weights=weights, minlength=n_classes)).astype(
                np.int64
            )
        sens: dict[str, SensitiveStats] = {}
        for name, col in (sensitive or {}).items():
            vals = col.codes if rows is None else col.codes[rows]
            sens[name] = SensitiveStats.from_pairs(col, class_ids, vals, n_classes, weights)
        return cls(sizes, sens, population)
