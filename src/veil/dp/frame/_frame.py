"""``PrivateFrame``: differentially private group-by queries over a pandas DataFrame.

Example
-------
>>> import pandas as pd, warnings
>>> from veil.dp import BudgetAccountant
>>> from veil.dp.frame import PrivateFrame
>>> df = pd.DataFrame({"pid": [1, 1, 2, 3], "county": ["a", "b", "a", "b"],
...                    "age": [30, 41, 52, 63]})
>>> acc = BudgetAccountant(epsilon=2.0)
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore")          # seeded = reproducible, not secure
...     pf = PrivateFrame(df, privacy_unit="pid", accountant=acc, random_state=1)
>>> out = pf.groupby("county", keys=["a", "b"]).agg(
...     n="count", avg_age=("age", "mean", (18, 100)), epsilon=1.0)
>>> list(out.columns), acc.total()[0]
(['county', 'n', 'avg_age'], 1.0)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from veil._checks import positive_int
from veil.dp._canon import (
    canonical,
    factorize_cells,
    missing_cells,
    real_dtype,
    real_float,
)
from veil.dp._rng import BitSource, resolve_rng
from veil.dp.frame._plan import QueryPlan
from veil.dp.frame._spec import Agg, parse_agg
from veil.errors import ConfigError, InputError

__all__ = ["PrivateFrame", "GroupedFrame"]


def _default_accountant() -> Any:
    from veil.dp import BudgetAccountant

    return BudgetAccountant.load_default(None)


class PrivateFrame:
    """A DataFrame wrapped for differentially private aggregate queries.

    Parameters
    ----------
    df
        The private table.  It is never modified and never returned.
    privacy_unit
        Column identifying the person each row belongs to.  Neighbouring datasets differ by
        *all* rows of one person.  ``None`` means every row is a different person (say so in
        your release notes: people with several rows are then protected less).  Rows whose
        id is missing, or nested (a list, dict or array), are ignored.  Ids are compared by
        value, not by spelling or dtype (``999``, ``999.0``, ``'999'`` and ``'0999'`` are one
        person): give distinct persons ids that differ in value, since two persons merged
        into one are each protected only at twice the epsilon (group privacy).
    accountant
        A :class:`veil.dp.BudgetAccountant` charged once per query; ``None`` uses the default
        accountant at the time of each query (diffprivlib's rule), ``False`` disables
        accounting (tests, dry runs).
    bounds
        Default clamping bounds per column, ``{"age": (18, 100)}``; an aggregation may give its
        own.  Missing bounds are an error, never read from the data; bounds of a column that is
        not in the table are an error too (a typo would leave the intended column unbounded).
    max_groups, max_rows
        Default contribution bounds: groups per person, rows per person and group (both 1).
        Only meaningful with a ``privacy_unit``.
    mechanism
        ``"laplace"`` (pure epsilon-DP: exact discrete Laplace for counts, floating-point-safe
        Laplace for sums) or ``"gaussian"`` (needs delta).
    integer_columns
        Columns whose quantiles select among the integers between the bounds (permute-and-flip;
        values are rounded), a public declaration.  ``None`` (default): no column, every
        quantile is continuous.  The dtype is never consulted: a type *inferred from the data*
        (``read_csv``) turns to float when one person's value is missing or fractional, and the
        release would then reveal it (an integer-valued median versus one that is almost surely
        not); ``veil query`` takes the list from ``--integer``.
    random_state
        ``None`` (secure generator).  A seed makes the noise reproducible and insecure (tests).

    Notes
    -----
    Contribution bounding and partition selection follow Wilson et al., "Differentially
    Private SQL with Bounded User Contribution" (PoPETs 2020).

    Examples
    --------
    More in the module docstring and ``docs/dp_queries.md``.

    >>> from veil.dp import BudgetAccountant
    >>> df = pd.DataFrame({"pid": [1, 1, 2, 3], "age": [30, 41, 52, 63]})
    >>> acc = BudgetAccountant(epsilon=1.0)
    >>> pf = PrivateFrame(df, privacy_unit="pid", accountant=acc, bounds={"age": (18, 100)})
    >>> out = pf.where("age >= 40").agg(n="count", avg_age=("age", "mean"), epsilon=0.5)
    >>> out.columns.tolist(), acc.total()  # one noisy row: values not shown
    (['n', 'avg_age'], (epsilon=0.5, delta=0.0))
    >>> pf.agg(n="count", epsilon=0.75)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    veil.errors.BudgetError: Privacy spend of (0.75,0.0) not permissible; ...
    """

    def __init__(
        self,
        df: pd.DataFrame,
        privacy_unit: str | None = None,
        *,
        accountant: Any = None,
        bounds: Mapping[str, tuple[float, float]] | None = None,
        max_groups: int = 1,
        max_rows: int = 1,
        mechanism: str = "laplace",
        integer_columns: Sequence[str] | None = None,
        random_state: Any = None,
    ) -> None:
        if not isinstance(df, pd.DataFrame):
            raise InputError(f"PrivateFrame needs a pandas DataFrame, got {type(df).__name__}")
        if df.columns.duplicated().any():  # df[name] would be a table, not a column
            dup = list(dict.fromkeys(df.columns[df.columns.duplicated()]))
            raise InputError(f"the table repeats column name(s) {', '.join(map(repr, dup[:5]))}")
        if privacy_unit is not None and privacy_unit not in df.columns:
            raise ConfigError(f"privacy unit column {privacy_unit!r} is not in the table")
        self._df = df
        self.privacy_unit = privacy_unit
        self.max_groups = positive_int(max_groups, "max_groups")
        self.max_rows = positive_int(max_rows, "max_rows")
        if privacy_unit is None and (self.max_groups > 1 or self.max_rows > 1):
            raise ConfigError(
                "max_groups/max_rows need a privacy_unit column; without one each row is a "
                "person and contributes one row to one group"
            )
        self.bounds = dict(bounds or {})
        unknown = [c for c in self.bounds if c not in df.columns]
        if unknown:  # most likely a typo: the intended column would then lack its bounds
            raise ConfigError(f"bounds for {unknown[0]!r}: no column {unknown[0]!r} in the table")
        if isinstance(integer_columns, str):  # set("age") would be {"a", "g", "e"}
            integer_columns = [integer_columns]
        self.integer_columns: set[str] = set(integer_columns or ())
        unknown = [c for c in self.integer_columns if c not in df.columns]
        if unknown:
            raise ConfigError(f"integer column {unknown[0]!r} is not in the table")
        self.mechanism = mechanism
        self._accountant = accountant  # None: the default accountant, looked up per query
        self._rng: BitSource = resolve_rng(random_state)
        self._mask: np.ndarray | None = None
        self._person_cache: np.ndarray | None = None

    def __repr__(self) -> str:
        unit = self.privacy_unit or "row"
        rows = "?" if self._mask is None else "filtered"
        return f"PrivateFrame(columns={len(self._df.columns)}, privacy_unit={unit!r}, rows={rows})"

    @property
    def columns(self) -> list[str]:
        """Column names (public schema)."""
        return [str(c) for c in self._df.columns]

    @property
    def accountant(self) -> Any:
        """The budget accountant charged by queries (``False`` when disabled)."""
        return _default_accountant() if self._accountant is None else self._accountant

    # ------------------------------------------------------------------ transformations
    def where(self, condition: str | np.ndarray | pd.Series) -> PrivateFrame:
        """Rows satisfying a condition (a stable transformation: costs no budget).

        Parameters
        ----------
        condition
            A SQL condition (``"age > 20 AND sex = 'F'"``, three-valued logic: NULL rows are
            dropped) or a boolean array/Series aligned with the table, each entry computed
            from its own row (a mask that reads other rows, ``df.age > df.age.mean()``, is
            no stable transformation and breaks the guarantee).

        Returns
        -------
        PrivateFrame
            Shares the table, accountant and generator; filters compose with AND.
        """
        if isinstance(condition, str):
            from veil.dp.sql import evaluate, parse_condition

            mask = evaluate(parse_condition(condition), self._df)
        else:
            if isinstance(condition, pd.Series):
                if not condition.index.equals(self._df.index):
                    raise ConfigError("the boolean condition's index does not match the table")
                condition = condition.to_numpy()
            mask = np.asarray(condition)
            if mask.dtype != bool or mask.shape != (len(self._df),):
                raise ConfigError(f"condition must be a boolean array of length {len(self._df)}")
        new = object.__new__(PrivateFrame)
        new.__dict__.update(self.__dict__)
        new._mask = mask if self._mask is None else (self._mask & mask)
        return new

    def groupby(
        self,
        by: str | Sequence[str],
        *,
        keys: Any = None,
        max_groups: int | None = None,
        max_rows: int | None = None,
    ) -> GroupedFrame:
        """Group by one or more columns.

        Parameters
        ----------
        by
            Group column name(s).
        keys
            Public group keys: a list of values (one column), of tuples (several), a
            ``{column: [values]}`` mapping (every combination, as ``veil query --keys``) or a
            DataFrame.  Listed keys without data appear with noise; other keys are dropped.
            ``None`` selects the keys privately (needs ``delta > 0``).
        max_groups, max_rows
            Contribution bounds for this query (default: the frame's).

        Returns
        -------
        GroupedFrame
        """
        cols = [by] if isinstance(by, str) else list(by)
        if not cols:
            raise ConfigError("groupby needs at least one column")
        for c in cols:
            if c not in self._df.columns:
                raise ConfigError(f"group column {c!r} is not in the table")
            if c == self.privacy_unit:
                raise ConfigError("grouping by the privacy unit would release per-person values")
        if len(set(cols)) != len(cols):
            raise ConfigError(f"group columns repeat: {cols}")
        return GroupedFrame(self, cols, keys, max_groups, max_rows)

    def plan(
        self,
        *,
        epsilon: float,
        delta: float = 0.0,
        mechanism: str | None = None,
        neighbouring: str = "add_remove",
        **aggs: Any,
    ) -> QueryPlan:
        """Plan an ungrouped query (one output row); see :meth:`GroupedFrame.plan`.

        ``neighbouring="replace"`` switches to diffprivlib's bounded DP (one row replaced, the
        row count public): counts are exact and sums use sensitivity ``hi - lo`` instead of
        ``max(|lo|, |hi|)``.  Only for tables without privacy unit, filter or missing values.
        """
        grouped = GroupedFrame(self, [], None, None, None)
        return grouped.plan(
            epsilon=epsilon, delta=delta, mechanism=mechanism, neighbouring=neighbouring, **aggs
        )

    def agg(
        self,
        *,
        epsilon: float,
        delta: float = 0.0,
        mechanism: str | None = None,
        neighbouring: str = "add_remove",
        **aggs: Any,
    ) -> pd.DataFrame:
        """Run an ungrouped query (one output row); see :meth:`plan`."""
        return self.plan(
            epsilon=epsilon, delta=delta, mechanism=mechanism, neighbouring=neighbouring, **aggs
        ).execute()

    def sql(
        self,
        query: str,
        *,
        epsilon: float,
        delta: float = 0.0,
        keys: Any = None,
        mechanism: str | None = None,
        with_ci: bool = False,
        candidates: Mapping[str, Sequence[float]] | None = None,
    ) -> pd.DataFrame:
        """Run a query of Veil's SQL subset (see :mod:`veil.dp.sql`); charges the budget once.

        ``candidates``: public candidates per column for its quantiles
        (:func:`~veil.dp.sql.plan_sql`).

        Example
        -------
        ``pf.sql("SELECT county, AVG(age) FROM data WHERE sex = 'F' GROUP BY county",
        epsilon=1.0, keys={"county": ["a", "b"]})`` (bounds from ``PrivateFrame(bounds=...)``).
        """
        from veil.dp.sql import plan_sql

        plan = plan_sql(
            self,
            query,
            epsilon=epsilon,
            delta=delta,
            keys=keys,
            mechanism=mechanism,
            candidates=candidates,
        )
        return plan.execute(with_ci=with_ci)

    # ------------------------------------------------------------------ internals
    def _charge(self, epsilon: float, delta: float) -> None:
        acc = self.accountant
        if acc is False:
            return
        acc.spend(epsilon, delta)  # raises BudgetError before anything is computed

    def _row_index(self) -> np.ndarray | None:
        return None if self._mask is None else np.flatnonzero(self._mask)

    def _person_codes(self, rows: np.ndarray | None) -> np.ndarray | None:
        if self.privacy_unit is None:
            return None
        if self._person_cache is None:
            self._person_cache = _unit_codes(self._df[self.privacy_unit])
        codes = self._person_cache
        return codes if rows is None else codes[rows]

    def _check_column(self, column: str) -> None:
        if column not in self._df.columns:
            raise ConfigError(f"column {column!r} is not in the table")
        if column == self.privacy_unit:
            raise ConfigError(f"cannot aggregate the privacy unit column {column!r}")
        # no refusal by dtype: one person's text cell turns a read_csv column of numbers into
        # text, so refusing SUM of a text column failed on one table and released on its
        # neighbour; non-numeric dtypes are read cell by cell instead (see _values)

    def _is_integer(self, column: str) -> bool:
        # declared only: a dtype inferred from the data would leak through the release's support
        return column in self.integer_columns

    def _values(self, column: str, rows: np.ndarray | None, numeric: bool = True) -> np.ndarray:
        s = self._df[column]
        if s.dtype == np.float64:  # numpy float64: a view, no copy
            arr = s.to_numpy()
        elif real_dtype(s.dtype):
            arr = s.to_numpy(dtype=np.float64, na_value=np.nan)
        elif numeric:  # object / text / categorical / other: each cell's own number
            arr = _cell_numbers(s)
        else:  # COUNT(col) only: every non-missing cell counts
            arr = np.where(missing_cells(s), np.nan, 0.0)  # Decimal('sNaN') too
        return arr if rows is None else arr[rows]


def _cell_numbers(s: pd.Series) -> np.ndarray:
    """A non-numeric column as float64, each cell from its own canonical value
    (:func:`veil.dp._canon.canonical`): numbers and text that reads as a number (``'30'``,
    ``' 30.0'``) are that number, booleans and ``'true'`` / ``'false'`` are 1 / 0, anything
    else (other text, timestamps, missing) is NaN, i.e. missing.

    A column of numbers is read as text once one person's cell is text (``read_csv``); reading
    every cell by itself keeps the other persons' values, and whether the query runs at all,
    independent of that cell.  A column of text (and missing cells) alone is factorized, each
    distinct text read once; other columns are cached by ``(type, value)``, never by equality
    alone (``1`` and ``True``, or ``1`` and ``Decimal(1)``, are equal to Python but are
    different cells).
    """
    if pd.api.types.infer_dtype(s, skipna=True) == "string":  # equal texts: one cell value
        codes, uniques = pd.factorize(s)  # missing -> -1, the table's last slot (NaN)
        table = np.array([*map(_cell_number, uniques.tolist()), math.nan], dtype=np.float64)
        return table[codes]
    cache: dict[tuple[type, Any], float] = {}
    out = np.empty(len(s), dtype=np.float64)
    for i, v in enumerate(s.array):
        try:
            key = (type(v), v)
            hit = cache.get(key)
        except TypeError:  # unhashable cell
            key, hit = None, None
        if hit is None:
            hit = _cell_number(v)
            if key is not None:
                cache[key] = hit
        out[i] = hit
    return out


def _cell_number(value: Any) -> float:
    """One cell's canonical value as a float (NaN unless a number; see :func:`_cell_numbers`)."""
    c = canonical(value)
    # an int beyond float64 is +-inf: clamped to the bounds like any value
    return real_float(c) if isinstance(c, (int, float)) else math.nan


def _unit_codes(ids: pd.Series) -> np.ndarray:
    """Person code of every row (-1: missing id, no person), by each id's canonical value.

    ``pd.factorize`` keeps ``999`` and ``'999'`` apart (and ``'5'`` and ``'5.0'`` in a text
    column), so one person's rows under both forms counted as two persons and moved twice the
    groups the noise is calibrated for; and which forms a column holds depends on its dtype,
    which ``read_csv`` infers from all the ids (one other person's text id keeps every id as
    text).  Ids are therefore persons by :func:`veil.dp._canon.canonical` (``999``, ``999.0``,
    ``'999'``, ``' 999.0'`` one person; ``True`` and ``1`` too): a map of each id alone, and
    merging forms only ever merges persons, which the contribution bounds then cover together.
    Two *distinct* persons with such ids (``'0999'`` and ``'999'``) are one unit, so adding one
    of them may change the other's bounded rows: each is protected at twice the epsilon (two
    steps of add/remove), which ``privacy_unit`` documents.
    Refusing mixed types instead was an error on one table and a release on its neighbour.
    """
    codes, uniques = factorize_cells(ids)  # a nested id (list, dict): -1, no person
    if pd.api.types.is_numeric_dtype(ids.dtype) or pd.api.types.is_bool_dtype(ids.dtype):
        return codes  # one value, one form
    seen: dict[Any, int] = {}
    remap = np.fromiter(
        (seen.setdefault(canonical(u), len(seen)) for u in np.asarray(uniques, dtype=object)),
        dtype=np.int64,
        count=len(uniques),
    )
    # code -1 (missing or nested id: no person) gathers the -1 appended, also when no id
    # exists at all (indexing an empty remap raised IndexError after the charge)
    return np.append(remap, -1)[codes]


def _check_ci_names(outputs: Sequence[str], others: Sequence[str]) -> None:
    """Refuse an output or group column called ``<output>_ci``: ``with_ci`` adds that column
    for each output, and two columns of one name would mislabel a statistic as an interval."""
    names = set(outputs) | set(others)
    for name in outputs:
        if f"{name}_ci" in names:
            raise ConfigError(
                f"output name {name + '_ci'!r} is also the name of the confidence-interval "
                f"column of output {name!r}; choose another name"
            )


class GroupedFrame:
    """A :class:`PrivateFrame` grouped by columns; build a plan or release with :meth:`agg`.

    Examples
    --------
    >>> df = pd.DataFrame({"county": ["a", "b", "a", "b"], "age": [30, 41, 52, 63]})
    >>> pf = PrivateFrame(df, accountant=False, bounds={"age": (18, 100)})
    >>> grouped = pf.groupby("county", keys=["a", "b", "c"])  # public keys
    >>> grouped
    GroupedFrame(by=['county'], public_keys=True)
    >>> out = grouped.agg(n="count", median_age=("age", "median"), epsilon=1.0)
    >>> out["county"].tolist(), out.columns.tolist()  # "c" has no data: noise only
    (['a', 'b', 'c'], ['county', 'n', 'median_age'])
    """

    def __init__(
        self,
        frame: PrivateFrame,
        by: list[str],
        keys: Any,
        max_groups: int | None,
        max_rows: int | None,
    ) -> None:
        self._frame = frame
        self.by = by
        self.keys = keys
        self.max_groups = frame.max_groups if max_groups is None else max_groups
        self.max_rows = frame.max_rows if max_rows is None else max_rows
        self.max_groups = positive_int(self.max_groups, "max_groups")
        self.max_rows = positive_int(self.max_rows, "max_rows")
        if frame.privacy_unit is None and (self.max_groups > 1 or self.max_rows > 1):
            raise ConfigError("max_groups/max_rows need a privacy_unit column")

    def __repr__(self) -> str:
        return f"GroupedFrame(by={self.by}, public_keys={self.keys is not None})"

    def plan(
        self,
        *,
        epsilon: float,
        delta: float = 0.0,
        mechanism: str | None = None,
        selection_fraction: float = 0.25,
        neighbouring: str = "add_remove",
        **aggs: Any,
    ) -> QueryPlan:
        """Calibrate a query without touching the budget or the data values.

        Parameters
        ----------
        epsilon, delta
            Total budget of the query (all groups, all outputs).
        mechanism
            ``"laplace"`` or ``"gaussian"`` (default: the frame's).
        selection_fraction
            Share of epsilon spent on private partition selection (when keys are not public).
        neighbouring
            ``"add_remove"`` (default: adding or removing one person's rows) or ``"replace"``
            (ungrouped queries only, see :meth:`PrivateFrame.plan`).
        **aggs
            ``name=spec`` with spec ``"count"``, ``(column, func)``,
            ``(column, func, (lower, upper))``, ``(column, "quantile", (lower, upper), q)`` or
            an :class:`Agg`.

        Returns
        -------
        QueryPlan
        """
        if not aggs:
            raise ConfigError("give at least one aggregation, e.g. n='count'")
        frame = self._frame
        parsed: dict[str, Agg] = {}
        for name, spec in aggs.items():
            agg = parse_agg(name, spec)
            if agg.column is not None:
                frame._check_column(agg.column)
                agg = agg.with_bounds(frame.bounds.get(agg.column))
                if agg.needs_bounds and agg.bounds is None:
                    raise ConfigError(
                        f"{agg.func} of column {agg.column!r} needs bounds: give "
                        f"({agg.column!r}, {agg.func!r}, (lower, upper)) or "
                        f"bounds={{{agg.column!r}: (lower, upper)}}"
                    )
            if name in self.by:
                raise ConfigError(f"output name {name!r} clashes with a group column")
            parsed[name] = agg
        _check_ci_names(list(parsed), self.by)
        if isinstance(delta, float) and math.isnan(delta):
            raise ConfigError("delta must be a number")
        return QueryPlan(
            frame,
            self.by,
            self.keys,
            parsed,
            epsilon=epsilon,
            delta=delta,
            mechanism=mechanism or frame.mechanism,
            max_groups=self.max_groups,
            max_rows=self.max_rows,
            selection_fraction=selection_fraction,
            neighbouring=neighbouring,
        )

    def agg(
        self,
        *,
        epsilon: float,
        delta: float = 0.0,
        mechanism: str | None = None,
        selection_fraction: float = 0.25,
        **aggs: Any,
    ) -> pd.DataFrame:
        """Plan and execute in one step (charges the accountant once).

        Example
        -------
        ``pf.groupby("county", keys=["a", "b"]).agg(n="count", epsilon=0.5)``
        """
        return self.plan(
            epsilon=epsilon,
            delta=delta,
            mechanism=mechanism,
            selection_fraction=selection_fraction,
            **aggs,
        ).execute()

    def count(self, *, epsilon: float, delta: float = 0.0) -> pd.DataFrame:
        """Noisy row count per group (output column ``count``)."""
        return self.agg(count="count", epsilon=epsilon, delta=delta)
