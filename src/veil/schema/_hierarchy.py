"""Generalization hierarchies (value generalization trees, as in ARX and Sweeney 2002).

A hierarchy maps every original value (level 0) to progressively more general labels, one per
level, usually ending in ``"*"``.  Internally it is a set of integer-code tables: for each level
``l`` an ``int32`` array mapping the level-0 code of a value to its level-``l`` code, plus the
labels of each level.  The anonymity engine works only on these codes.

References
----------
L. Sweeney, "Achieving k-anonymity privacy protection using generalization and suppression",
IJUFKS 10(5), 2002.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from veil.errors import InputError
from veil.schema._text_values import load_text_yaml, number_text

__all__ = [
    "Hierarchy",
    "as_str_values",
    "factorize_str_array",
    "factorize_typed",
    "lookup_texts",
    "missing_from_hierarchy",
]


def _scalar_str(v: Any) -> str:
    """String form used to match a value against a hierarchy (17 and 17.0 -> "17")."""
    if isinstance(v, str):
        return v
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (float, np.floating)):
        f = float(v)
        if math.isnan(f):
            return "nan"
        if f.is_integer() and abs(f) < 2**53:
            return str(int(f))
        return repr(f)
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if v is None or v is pd.NA or v is pd.NaT:
        return "nan"
    return str(v)


try:  # pandas' string hash table: pd.factorize without its O(n) "all strings?" inference
    from pandas._libs.hashtable import StringHashTable as _StringHashTable
except ImportError:  # pragma: no cover - depends on the pandas build
    _StringHashTable = None


def _str_table(arr: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """pandas' string hash table on an object array: ``-1`` for every cell that is not a str."""
    if _StringHashTable is None or arr.dtype != object or arr.ndim != 1 or not len(arr):
        return None
    try:
        uniq, codes = _StringHashTable(len(arr)).factorize(arr)
    except (TypeError, ValueError):  # pragma: no cover - private API changed
        return None
    return np.asarray(codes).astype(np.int64, copy=False), np.asarray(uniq, dtype=object)


def factorize_str_array(arr: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Fast path for object arrays holding only str; None when anything else is present."""
    got = _str_table(arr)
    if got is None or got[0].min() < 0:  # missing or non-str values: take the general path
        return None
    return got


#: pandas.api.types.infer_dtype kinds whose equal cells are written alike (1 and np.int64(1))
_ONE_KIND = frozenset({"string", "bytes", "integer", "floating", "boolean", "decimal", "complex"})


def _kind(t: type) -> str:
    """The kind of a cell type: Python's and numpy's booleans, integers, floats, texts alike."""
    for kind, base in (
        ("bool", (bool, np.bool_)),  # before int: bool is an int
        ("int", (int, np.integer)),
        ("float", (float, np.floating)),
        ("str", str),
    ):
        if issubclass(t, base):
            return kind
    return f"{t.__module__}.{t.__qualname__}"


def factorize_typed(values: Any) -> tuple[np.ndarray, Any]:
    """``pandas.factorize`` (missing -> ``-1``, first-appearance order) telling kinds apart.

    The one grouping of cell values shared by every part of :mod:`veil.anonymity` and
    :mod:`veil.report` that forms equivalence classes.  In an ``object`` column, cells of
    different kinds (booleans, integers, floats, texts, or any other type) are different
    values: Python's ``True == 1 == 1.0`` would otherwise merge ``True``, ``1`` and ``1.0`` into
    one class that the written release shows as two or three (a class of 5 checked as k = 5 was
    released as ``True`` x3 and ``1`` x2).  Splitting by kind can only make classes smaller
    than a reader of the release sees them (``1`` and ``'1'`` print alike), the safe direction
    for a class size.  Equal cells of one kind are one value; they are written alike
    (``1`` and ``np.int64(1)``; ``0.0`` / ``-0.0`` and ``Decimal("1")`` / ``Decimal("1.0")``,
    which Python and pandas hold equal too, because :func:`veil.io.write` writes them with
    one text: ``veil.io._signed_zero``).  Columns
    of any other dtype hold one kind and are factorized by :func:`pandas.factorize` as they are.

    Returns ``(codes, uniques)``: ``int64`` codes and, for ``object`` input, an ``object`` array
    holding one original cell per code (else pandas' uniques).  Paths: only ``str`` and
    missing cells, pandas' string hash table (as :func:`factorize_str_array`); one kind
    (``infer_dtype``, in C), a plain :func:`pandas.factorize`; mixed kinds, the slow path, by
    ``(kind, value)``.

    Examples
    --------
    >>> codes, uniq = factorize_typed(np.array([True, 1, 1.0, True, None], dtype=object))
    >>> codes.tolist(), uniq.tolist()
    ([0, 1, 2, 0, -1], [True, 1, 1.0])
    """
    arr = values.to_numpy() if isinstance(values, pd.Series) and values.dtype == object else values
    if not (isinstance(arr, np.ndarray) and arr.dtype == object and arr.ndim == 1):
        codes, uniq = pd.factorize(values, use_na_sentinel=True)
        return np.asarray(codes, dtype=np.int64), uniq
    kind = None
    if not (len(arr) and isinstance(arr[0], str)):  # text columns start with text, or not at all
        kind = pd.api.types.infer_dtype(arr, skipna=True)
    if kind in (None, "string"):
        got = _str_table(arr)
        if got is not None:
            neg = got[0] < 0
            if not neg.any() or pd.isna(arr[neg]).all():  # only str and missing cells
                return got
        kind = pd.api.types.infer_dtype(arr, skipna=True) if kind is None else kind
    if kind not in _ONE_KIND:
        cells = arr.tolist()
        missing = pd.isna(arr).tolist()
        types = {type(v) for v, m in zip(cells, missing, strict=True) if not m}
        kinds = {t: _kind(t) for t in types}
        if len(set(kinds.values())) > 1:  # mixed kinds
            typed = np.empty(arr.shape[0], dtype=object)  # 1-d: the cells are tuples
            typed[:] = [
                None if m else (kinds[type(v)], v) for v, m in zip(cells, missing, strict=True)
            ]
            codes, keys = pd.factorize(typed)
            uniq = np.empty(len(keys), dtype=object)
            uniq[:] = [key[1] for key in keys]
            return np.asarray(codes, dtype=np.int64), uniq
    codes, uniq = pd.factorize(arr)
    return np.asarray(codes, dtype=np.int64), np.asarray(uniq, dtype=object)


def lookup_texts(
    index: Mapping[str, int], texts: Iterable[str], stripped: dict[Any, int] | None = None
) -> tuple[np.ndarray, dict[Any, int] | None]:
    """Code of each text in ``index`` (``-1``: not there), by the hierarchies' matching rule.

    The exact text, else the text without surrounding blanks against the keys without theirs
    (the first key wins), else, for the text of a number or boolean cell (``"1.5"``,
    ``"1000"``, ``"True"``), the key written as the same number (``1.50``, ``1e3``, ``true``:
    :func:`~veil.schema._text_values.number_text`; ``01301`` is no number, :func:`veil.io.read`
    keeps such a column as text; a number written twice with two different codes matches
    neither).  ``stripped`` holds the two fallback indexes when already built (numbers under
    ``(True, text)`` keys); it is returned (built only when some text needed it) for the next
    call.

    Examples
    --------
    >>> index = {"a": 0, " b": 1, "1.50": 2, "01301": 3}
    >>> codes, _ = lookup_texts(index, ["a", "b ", "1.5", "1301"])
    >>> codes.tolist()
    [0, 1, 2, -1]
    """
    out = []
    for t in texts:
        j = index.get(t)
        if j is None:
            if stripped is None:
                stripped = {}
                for v, c in index.items():
                    stripped.setdefault(v.strip(), c)
            j = stripped.get(t.strip(), -1)
            if j < 0 and number_text(t) == t.strip():
                if (True, None) not in stripped:  # the numbers' index, on the first need
                    stripped[(True, None)] = -1
                    stripped.update({(True, k): c for k, c in _number_index(index).items()})
                j = stripped.get((True, t.strip()), -1)
        out.append(j)
    return np.asarray(out, dtype=np.int64), stripped


def _number_index(index: Mapping[str, int]) -> dict[str, int]:
    """Code of each key written as a number or boolean, under the text of that number
    (:func:`~veil.schema._text_values.number_text`); ``-1`` for a number written twice with
    two different codes (it matches neither)."""
    out: dict[str, int] = {}
    for v, c in index.items():
        num = number_text(v)
        if num is not None and out.setdefault(num, c) != c:
            out[num] = -1
    return out


def as_str_values(values: Any) -> tuple[np.ndarray, np.ndarray]:
    """Factorize ``values`` by their text and return ``(codes, uniques_as_str)``.

    Each distinct value (:func:`factorize_typed`: ``True`` and ``1`` are two) is written by the
    hierarchy's matching rule (``17.0`` -> ``"17"``), then values written alike (``17``,
    ``17.0`` and ``"17"``) share one code: the codes are those of the text the release shows,
    so ``uniques_as_str`` holds no duplicate.  Missing values get their own code and the string
    ``"nan"``.  Only the distinct values are converted to strings, so this is O(n) hashing plus
    O(distinct) Python work.

    Examples
    --------
    >>> codes, ustr = as_str_values(pd.Series([True, 1, 1.0, "1", None], dtype=object))
    >>> codes.tolist(), ustr.tolist()
    ([0, 1, 1, 1, 2], ['True', '1', 'nan'])
    """
    arr = values.to_numpy() if isinstance(values, pd.Series) and values.dtype == object else values
    if not isinstance(arr, np.ndarray):
        arr = pd.Series(values, copy=False)
    fast = factorize_str_array(arr) if isinstance(arr, np.ndarray) else None
    if fast is not None:  # only str, no missing value: distinct texts already, nothing to write
        return fast
    codes, uniques = factorize_typed(arr)
    ustr = np.array([_scalar_str(u) for u in np.asarray(uniques, dtype=object)], dtype=object)
    scodes, sun = pd.factorize(ustr)
    if len(sun) < len(ustr):  # distinct values written alike (17 and "17"): one value
        codes = np.where(codes < 0, codes, scodes[codes])
        ustr = np.asarray(sun, dtype=object)
    if (codes < 0).any():
        ustr = np.append(ustr, np.array(["nan"], dtype=object))
        codes = np.where(codes < 0, len(ustr) - 1, codes)
    return codes, ustr


def missing_from_hierarchy(missing: list[str], column: Any = None) -> str:
    """One-line error for data values absent from a hierarchy: counted, never quoted.

    The values come from the user's data (a rare ZIP code, a diagnosis) and errors end up in
    logs, so the message gives their number and how to list them on purpose
    (:meth:`Hierarchy.missing`).  Empty cells are matched as ``'nan'``: that one is named,
    since it is a missing cell rather than a value.
    """
    where = f" of column {column!r}" if column is not None else ""
    col = repr(column) if column is not None else "col"
    hint = " (empty cells are matched as 'nan': fill or drop them)" if "nan" in missing else ""
    return (
        f"{len(missing)} distinct value(s){where} missing from {'its' if where else 'the'} "
        f"hierarchy{hint}; add them "
        f"to the hierarchy file (values not shown: errors end up in logs; "
        f"Hierarchy.from_file(...).missing(df[{col}]) lists them)"
    )


class Hierarchy:
    """A value generalization hierarchy.

    Parameters
    ----------
    rows
        One sequence per original value: ``[value, level1, level2, ..., top]``.  All rows must
        have the same length; each level must be a function of the previous one (a tree).

    Attributes
    ----------
    height : int
        Number of levels, including level 0 (the original values).
    values : list of str
        The level-0 values.

    Examples
    --------
    >>> h = Hierarchy.from_mapping({"17": ["15-19", "*"], "18": ["15-19", "*"], "23": ["20-24", "*"]})
    >>> h.height
    3
    >>> h.generalize([17, 23], 1).tolist()
    ['15-19', '20-24']
    """

    __slots__ = ("_labels", "_maps", "_index", "_strip_index", "_level_maps")

    def __init__(self, rows: Iterable[Sequence[Any]]) -> None:
        cleaned: list[list[str]] = []
        for i, row in enumerate(rows):
            cells = [_scalar_str(c).strip() for c in row]
            while cells and cells[-1] == "":
                cells.pop()
            if not cells:
                continue
            if any(c == "" for c in cells):
                raise InputError(f"hierarchy row {i + 1} has an empty cell: {cells!r}")
            cleaned.append(cells)
        if not cleaned:
            raise InputError("hierarchy is empty")
        width = len(cleaned[0])
        for i, cells in enumerate(cleaned):
            if len(cells) != width:
                raise InputError(
                    f"hierarchy rows have different lengths: row 1 has {width} levels, "
                    f"row {i + 1} ({cells[0]!r}) has {len(cells)}"
                )
        # de-duplicate level-0 values (identical rows are fine, conflicting ones are not)
        seen: dict[str, list[str]] = {}
        for cells in cleaned:
            prev = seen.get(cells[0])
            if prev is None:
                seen[cells[0]] = cells
            elif prev != cells:
                raise InputError(
                    f"hierarchy value {cells[0]!r} appears twice with different levels"
                )
        table = list(seen.values())
        labels: list[np.ndarray] = []
        maps: list[np.ndarray] = []
        for level in range(width):
            col = [r[level] for r in table]
            codes, uniq = pd.factorize(pd.Series(col, dtype=object), sort=False)
            labels.append(np.asarray(uniq, dtype=object))
            maps.append(np.asarray(codes, dtype=np.int32))
        for level in range(1, width):
            lo, hi = maps[level - 1], maps[level]
            parent = np.full(len(labels[level - 1]), -1, dtype=np.int64)
            parent[lo] = hi
            bad = np.flatnonzero(parent[lo] != hi)
            if bad.size:
                v = labels[level - 1][lo[bad[0]]]
                raise InputError(
                    f"hierarchy is not a tree: label {v!r} at level {level - 1} generalizes to "
                    f"more than one label at level {level}"
                )
        self._labels = labels
        self._maps = maps
        self._index = {v: i for i, v in enumerate(labels[0])}
        self._strip_index: dict[Any, int] | None = None
        self._level_maps: dict[tuple[int, int], np.ndarray] = {}

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_csv(
        cls, path: str | Path, *, sep: str | None = None, encoding: str | None = None
    ) -> Hierarchy:
        """Read an ARX-style hierarchy CSV: one row per value, levels left to right, no header.

        The delimiter (``,`` or ``;``) is sniffed when ``sep`` is None.

        Examples
        --------
        >>> import tempfile, os
        >>> p = os.path.join(tempfile.mkdtemp(), "sex.csv")
        >>> _ = open(p, "w").write("Male;*\\nFemale;*\\n")
        >>> Hierarchy.from_csv(p).values
        ['Male', 'Female']
        """
        p = Path(path)
        try:
            text = p.read_bytes().decode(encoding or "utf-8-sig")
        except FileNotFoundError:
            raise InputError(f"hierarchy file not found: {p}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read hierarchy file {p}: {exc}") from None
        if sep is None:
            first = next((ln for ln in text.splitlines() if ln.strip()), "")
            sep = ";" if first.count(";") > first.count(",") else ","
        rows = list(csv.reader(io.StringIO(text), delimiter=sep))
        try:
            return cls(rows)
        except InputError as exc:
            raise InputError(f"{p}: {exc}") from None

    @classmethod
    def from_mapping(cls, mapping: Mapping[Any, Sequence[Any]]) -> Hierarchy:
        """Build from ``{value: [level1, level2, ..., top]}``."""
        if not isinstance(mapping, Mapping):
            raise InputError("hierarchy mapping must be a dict of value -> list of levels")
        rows = []
        for k, v in mapping.items():
            if isinstance(v, (str, bytes)) or not isinstance(v, Sequence):
                v = [v]
            rows.append([k, *v])
        return cls(rows)

    @classmethod
    def from_frame(cls, df: pd.DataFrame) -> Hierarchy:
        """Build from a DataFrame: one row per value, columns are the levels left to right."""
        if not isinstance(df, pd.DataFrame):
            raise InputError("Hierarchy.from_frame expects a pandas DataFrame")
        return cls(df.astype(object).itertuples(index=False, name=None))

    @classmethod
    def from_yaml(cls, path: str | Path) -> Hierarchy:
        """Read a YAML hierarchy: a mapping ``value: [level1, ..., top]`` or a list of rows.

        A top-level ``hierarchy:`` key around either form is accepted.  Every value is the text
        written: YAML 1.1 would read ZIP code ``01301`` as the octal number 705, ``No`` as
        False, ``1.50`` as 1.5 and ``12:30`` as 750, none of which is the cell of the data.

        Examples
        --------
        >>> import tempfile, os
        >>> p = os.path.join(tempfile.mkdtemp(), "zip.yaml")
        >>> _ = open(p, "w").write("01301: [013**, '*']\\nNo: [N*, '*']\\n1.50: [1.x, '*']\\n")
        >>> Hierarchy.from_yaml(p).values
        ['01301', 'No', '1.50']
        """
        import yaml

        p = Path(path)
        try:
            data = load_text_yaml(p.read_text(encoding="utf-8-sig"))
        except FileNotFoundError:
            raise InputError(f"hierarchy file not found: {p}") from None
        except (OSError, yaml.YAMLError) as exc:
            raise InputError(f"cannot read hierarchy file {p}: {exc}") from None
        if isinstance(data, Mapping) and set(data) == {"hierarchy"}:
            data = data["hierarchy"]
        if isinstance(data, Mapping):
            return cls.from_mapping(data)
        if isinstance(data, list):
            return cls(data)
        raise InputError(f"{p}: a hierarchy must be a mapping value -> levels or a list of rows")

    @classmethod
    def from_file(cls, path: str | Path) -> Hierarchy:
        """Read a ``.csv``/``.tsv`` or ``.yaml``/``.yml`` hierarchy file by extension."""
        suffix = Path(path).suffix.lower()
        if suffix in (".yaml", ".yml"):
            return cls.from_yaml(path)
        if suffix == ".tsv":
            return cls.from_csv(path, sep="\t")
        return cls.from_csv(path)

    @classmethod
    def from_intervals(
        cls, values: Iterable[Any], widths: Sequence[float], *, origin: float = 0, top: str = "*"
    ) -> Hierarchy:
        """Interval hierarchy for numeric values: level ``i`` groups values in
        ``[origin + j w, origin + (j + 1) w[`` with ``w = widths[i - 1]``, then ``top``.

        Each width must be a multiple of the previous one (so that intervals nest).

        Examples
        --------
        >>> h = Hierarchy.from_intervals([17, 23, 38], [5, 10])
        >>> h.generalize([17, 38], 2).tolist()
        ['[10, 20[', '[30, 40[']
        """
        ws = [float(w) for w in widths]
        if not ws or any(w <= 0 for w in ws):
            raise InputError("interval widths must be positive numbers")
        for a, b in zip(ws, ws[1:]):
            if abs(b / a - round(b / a)) > 1e-9:
                raise InputError(f"interval width {b:g} is not a multiple of {a:g}")
        nums = sorted({float(v) for v in values if v is not None and v == v})
        if not nums:
            raise InputError("no numeric values to build an interval hierarchy from")

        def fmt(x: float) -> str:
            return str(int(x)) if float(x).is_integer() else f"{x:g}"

        rows = []
        for v in nums:
            row: list[Any] = [v]
            for w in ws:
                lo = origin + np.floor((v - origin) / w) * w
                row.append(f"[{fmt(lo)}, {fmt(lo + w)}[")
            rows.append([*row, top])
        return cls(rows)

    @classmethod
    def flat(cls, values: Iterable[Any], top: str = "*") -> Hierarchy:
        """Two-level hierarchy: each value, then ``top`` (keep or suppress the column)."""
        uniq = dict.fromkeys(_scalar_str(v) for v in values)
        return cls([[v, top] for v in uniq])

    # ------------------------------------------------------------------ properties
    @property
    def height(self) -> int:
        """Number of levels, including level 0."""
        return len(self._labels)

    @property
    def values(self) -> list[str]:
        """Level-0 (original) values, as strings."""
        return list(self._labels[0])

    def __len__(self) -> int:
        return len(self._labels[0])

    def __repr__(self) -> str:
        top = ", ".join(map(str, self._labels[-1][:3]))
        return f"Hierarchy({len(self)} values, height={self.height}, top=[{top}])"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Hierarchy):
            return NotImplemented
        return self.height == other.height and all(
            np.array_equal(a[m], b[n])
            for a, m, b, n in zip(self._labels, self._maps, other._labels, other._maps)
        )

    __hash__ = None  # type: ignore[assignment]

    def _check_level(self, level: int) -> int:
        if not isinstance(level, (int, np.integer)) or not 0 <= int(level) < self.height:
            raise InputError(f"hierarchy level must be in 0..{self.height - 1}, got {level!r}")
        return int(level)

    # ------------------------------------------------------------------ integer-code tables
    def labels(self, level: int) -> np.ndarray:
        """Labels of ``level`` (object array of str, indexed by level-``level`` code)."""
        return self._labels[self._check_level(level)].copy()

    def codes(self, level: int) -> np.ndarray:
        """``int32`` array mapping a level-0 code to its level-``level`` code."""
        return self._maps[self._check_level(level)].copy()

    def n_labels(self, level: int) -> int:
        """Number of distinct labels at ``level``."""
        return len(self._labels[self._check_level(level)])

    def level_map(self, src: int, dst: int) -> np.ndarray:
        """``int32`` array mapping a level-``src`` code to its level-``dst`` code (src <= dst)."""
        src, dst = self._check_level(src), self._check_level(dst)
        if src > dst:
            raise InputError(f"cannot map level {src} down to level {dst}")
        key = (src, dst)
        m = self._level_maps.get(key)
        if m is None:
            m = np.zeros(len(self._labels[src]), dtype=np.int32)
            m[self._maps[src]] = self._maps[dst]
            self._level_maps[key] = m
        return m

    def leaf_counts(self, level: int) -> np.ndarray:
        """Number of level-0 values under each label of ``level``."""
        level = self._check_level(level)
        return np.bincount(self._maps[level], minlength=len(self._labels[level]))

    def encode(self, values: Any, *, column: str | None = None) -> np.ndarray:
        """Level-0 codes (``int32``) of ``values``; InputError counting the missing values."""
        codes, ustr = as_str_values(values)
        lut = self._lookup(ustr)
        if (lut < 0).any():
            raise InputError(missing_from_hierarchy([str(v) for v in ustr[lut < 0]], column))
        return lut[codes].astype(np.int32, copy=False)

    def _lookup(self, ustr: np.ndarray) -> np.ndarray:
        out, self._strip_index = lookup_texts(self._index, ustr, self._strip_index)
        return out

    def missing(self, values: Any) -> list[str]:
        """Distinct values (as str, in order of appearance) that the hierarchy does not contain."""
        _, ustr = as_str_values(values)
        lut = self._lookup(ustr)
        return [str(v) for v in ustr[lut < 0]]

    def generalize(self, values: Any, level: int) -> np.ndarray:
        """Generalize ``values`` to ``level``; returns an object array of str.

        Raises
        ------
        InputError
            When values are missing from the hierarchy (counted, not named: see
            :func:`missing_from_hierarchy`).
        """
        level = self._check_level(level)
        codes = self.encode(values)
        return self._labels[level][self._maps[level][codes]]

    def to_frame(self) -> pd.DataFrame:
        """The hierarchy as a DataFrame (one row per value, one column per level)."""
        return pd.DataFrame(
            {f"level_{i}": lab[m] for i, (lab, m) in enumerate(zip(self._labels, self._maps))}
        )
