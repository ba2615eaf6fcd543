"""Verify privacy models on a table as it is: ``check(df, qi=..., k=..., l=..., t=...)``."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from veil.anonymity._class_sizes import ClassSizes, class_sizes
from veil.anonymity._config import (
    check_k_fits,
    check_suppression_limit,
    l_model,
    max_suppressed_records,
    ordered_columns,
    t_model,
)
from veil.anonymity._encode import Grouping, group_columns
from veil.anonymity._models import AverageRisk, KAnonymity, KMap, PrivacyModel
from veil.anonymity._result import to_jsonable
from veil.anonymity._risk import (
    population_fraction,
    qi_class_ids,
    risk_summary,
    stack_population,
)
from veil.anonymity._stats import (
    ClassStats,
    SensitiveStats,
    encode_sensitive,
    text_order_warning,
)
from veil.anonymity._tcloseness import TCloseness
from veil.errors import ConfigError, InputError

__all__ = ["check", "CheckResult"]


def _pairs(spec: Any, what: str) -> list[tuple[str, float]]:
    """Normalize ``{col: v}``, ``(col, v)``, ``[(col, v), ...]`` or ``"col:v"``."""
    if spec is None:
        return []
    if isinstance(spec, Mapping):
        return [(str(c), v) for c, v in spec.items()]
    if isinstance(spec, str):
        spec = [spec]
    if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], str):
        spec = [spec]
    out = []
    for item in spec:
        if isinstance(item, str):
            col, sep, val = item.rpartition(":")
            if not sep or not col:
                raise ConfigError(f"{what} must look like COLUMN:VALUE, got {item!r}")
            try:
                number: float = int(val)
            except ValueError:
                try:  # any float notation: 0.2, .2, 2e-1
                    number = float(val)
                except ValueError:
                    raise ConfigError(
                        f"{what} must look like COLUMN:VALUE with a number as VALUE, got {item!r}"
                    ) from None
            out.append((col, number))
        else:
            col, val = item
            out.append((str(col), val))
    return out


@dataclass(frozen=True)
class _Details:
    """What the report tables are built from; owns its arrays (no reference to the input)."""

    qi: list[str]
    sizes: np.ndarray  # size of every class
    population: np.ndarray | None  # population size of every class (k-map), if known
    order: np.ndarray  # the smallest classes, smallest first
    vidx: np.ndarray  # the first violating classes, smallest first
    # QI values of the classes in ``order``, then ``vidx`` (or a function that decodes them)
    values: dict[str, np.ndarray | Callable[[], np.ndarray]]
    broken: list[str]  # models each class in ``vidx`` breaks
    # n / len(population) when a population table covers the sample (as :func:`risk` derives it)
    sampling_fraction: float | None = None

    def column(self, col: str) -> np.ndarray:
        """QI values of column ``col`` for the classes in ``order``, then ``vidx``."""
        v = self.values[col]
        if callable(v):
            v = self.values[col] = v()  # decoded once, on first access
        return v


@dataclass
class CheckResult:
    """Outcome of :func:`check`.

    The verdict and the per-model counts are computed by :func:`check`; the report tables
    (``smallest``, ``violating``), the class-size histogram and the risk summary are built from
    copied arrays on first access and cached, so a caller who only needs the verdict does not
    pay for them.

    Attributes
    ----------
    holds
        True when every model holds (after at most ``suppression_limit`` records suppressed).
    models
        Per model: description, whether it holds, violating classes and records.
    n_records, n_classes
        Table size and number of equivalence classes.
    n_suppressed, n_violating
        Records that would be suppressed, and classes violating any model.
    smallest
        The smallest classes: QI values and size (ties in a fixed, deterministic order).
    violating
        Violating classes: QI values, size and the models they break.
    class_sizes
        Class-size histogram (classes and records per size bin).
    risk
        Re-identification risk summary (:func:`veil.anonymity.risk`).

    Examples
    --------
    >>> df = pd.DataFrame({"zip": ["1", "1", "2", "3"], "y": ["a", "b", "a", "a"]})
    >>> r = check(df, "zip", k=2, suppression_limit=0.5)
    >>> r.holds, r.n_records, r.n_classes, r.n_suppressed, r.n_violating
    (True, 4, 3, 2, 2)
    >>> r.models[0]["model"], r.models[0]["achieved"], r.models[0]["violating_records"]
    ('k-anonymity(k=2)', 1.0, 2)
    >>> r.violating["zip"].tolist(), r.violating["size"].tolist()
    (['2', '3'], [1, 1])
    >>> r.risk["prosecutor"]["highest"]
    1.0
    """

    holds: bool
    models: list[dict[str, Any]]
    n_records: int
    n_classes: int
    n_suppressed: int
    n_violating: int
    details: _Details = field(repr=False, compare=False)

    @functools.cached_property
    def smallest(self) -> pd.DataFrame:
        d = self.details
        m = d.order.shape[0]
        cols = {c: d.column(c)[:m] for c in d.qi}
        return pd.DataFrame({**cols, "size": d.sizes[d.order]})

    @functools.cached_property
    def violating(self) -> pd.DataFrame:
        d = self.details
        m = d.order.shape[0]
        cols = {c: d.column(c)[m:] for c in d.qi}
        return pd.DataFrame({**cols, "size": d.sizes[d.vidx], "models": d.broken})

    @functools.cached_property
    def risk(self) -> dict[str, Any]:
        d = self.details
        return risk_summary(d.sizes, d.population, sampling_fraction=d.sampling_fraction)

    @property
    def class_sizes(self) -> list[dict[str, Any]]:
        return self.risk["class_sizes"]

    def __bool__(self) -> bool:
        return self.holds

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return to_jsonable(
            {
                "holds": self.holds,
                "models": self.models,
                "records": self.n_records,
                "classes": self.n_classes,
                "suppressed": self.n_suppressed,
                "violating_classes": self.n_violating,
                "smallest": self.smallest.astype(object).to_dict("records"),
                "violating": self.violating.astype(object).to_dict("records"),
                "class_sizes": self.class_sizes,
                "risk": self.risk,
            }
        )

    def report(self, max_rows: int = 10) -> str:
        """Human-readable report."""
        lines = [
            f"{'HOLDS' if self.holds else 'FAILS'}: {_count(self.n_records, 'record', 'records')}, "
            f"{_count(self.n_classes, 'equivalence class', 'equivalence classes')}"
            + (
                f", {_count(self.n_suppressed, 'record', 'records')} would be suppressed"
                if self.n_suppressed
                else ""
            )
        ]
        for m in self.models:
            mark = "ok  " if m["holds"] else "FAIL"
            extra = (
                ""
                if m["holds"] and not m["violating_classes"]
                else f"  ({_count(m['violating_classes'], 'class', 'classes')} / "
                f"{_count(m['violating_records'], 'record', 'records')} violate)"
            )
            ach = "" if m.get("achieved") is None else f"  achieved {m['achieved']:.4g}"
            lines.append(f"  [{mark}] {m['model']}{ach}{extra}")
        smallest = self.smallest.head(max(max_rows, 0))
        if len(smallest):
            with pd.option_context("display.width", 120, "display.max_columns", 20):
                lines.append("smallest classes:")
                lines.append(_indent(smallest.to_string(index=False)))
                if len(self.violating):
                    lines.append(f"violating classes ({self.n_violating}):")
                    lines.append(_indent(self.violating.head(max_rows).to_string(index=False)))
        elif self.n_classes:  # asked for no rows (--show 0): no quasi-identifier values printed
            lines.append("smallest / violating classes: not shown")
        lines.append("class sizes:")
        for b in self.class_sizes:
            if b["classes"]:
                lines.append(
                    f"  {b['size']:>7}: {_count(b['classes'], 'class', 'classes')}, "
                    f"{_count(b['records'], 'record', 'records')}"
                )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.report()


def _indent(text: str) -> str:
    return "\n".join("  " + ln for ln in text.splitlines())


def check(
    df: pd.DataFrame,
    qi: Sequence[str] | str,
    k: int | None = None,
    l: Any = None,  # noqa: E741
    t: Any = None,
    *,
    l_variant: str = "distinct",
    c: float | None = None,
    t_distance: str = "equal",
    hierarchies: Mapping[str, Any] | None = None,
    average_risk: float | None = None,
    population: pd.DataFrame | None = None,
    models: Sequence[PrivacyModel] = (),
    suppression_limit: float = 0.0,
    show: int = 10,
) -> CheckResult:
    """Check whether ``df`` satisfies privacy models (one vectorized pass over classes).

    Parameters
    ----------
    df
        The table (any index: rows are handled by position).
    qi
        Quasi-identifier columns.
    k
        k-anonymity (or k-map with ``population``) parameter.
    l
        l-diversity: ``{column: l}``, ``(column, l)`` or ``"column:l"`` (several allowed).
    t
        t-closeness: ``{column: t}``, ``(column, t)`` or ``"column:t"``.
    l_variant, c
        ``distinct``, ``entropy`` or ``recursive`` (with ``c``).
    t_distance
        ``equal``, ``ordered`` or ``hierarchical`` (give ``hierarchies[column]``).
    hierarchies
        Hierarchies of sensitive columns for hierarchical t-closeness.
    average_risk
        Average re-identification risk threshold.
    population
        Population table for k-map (then ``k`` means k-map as well as k-anonymity).
    models
        Further privacy models.
    suppression_limit
        Share of records, in [0, 1], that may be suppressed (violating classes) while still
        "holding".
    show
        Number of smallest / violating classes reported.

    Raises
    ------
    veil.errors.ConfigError
        No model, a suppression limit outside [0, 1], ``k`` larger than the table, a column both
        quasi-identifier and sensitive.
    veil.errors.InputError
        Not a DataFrame, an empty table, a column not in the table.

    Examples
    --------
    >>> df = pd.DataFrame({"zip": ["1", "1", "2", "2"], "age": [30, 30, 40, 40], "y": list("abaa")})
    >>> r = check(df, ["zip", "age"], k=2, l={"y": 2})
    >>> r.holds, [m["holds"] for m in r.models]
    (False, [True, False])
    """
    if not isinstance(df, pd.DataFrame):
        raise InputError("check expects a pandas DataFrame")
    qi = [qi] if isinstance(qi, str) else list(qi)
    if not qi:
        raise ConfigError("at least one quasi-identifier is needed")
    hierarchies = dict(hierarchies or {})
    all_models: list[PrivacyModel] = []
    if k is not None:
        all_models.append(KAnonymity(k))
        if population is not None:
            all_models.append(KMap(k, population))
    for col, val in _pairs(l, "l"):
        all_models.append(l_model(col, val, l_variant, c))
    for col, val in _pairs(t, "t"):
        all_models.append(t_model(col, float(val), t_distance, hierarchies.get(col)))
    if average_risk is not None:
        all_models.append(AverageRisk(average_risk))
    all_models.extend(models)
    if not all_models:
        raise ConfigError("nothing to check: give k, l, t, average_risk or models")
    tables = {id(m.population): m.population for m in all_models if isinstance(m, KMap)}
    if population is not None:  # the risk estimates must use the table k-map checks against
        tables[id(population)] = population
    if len(tables) > 1:
        raise ConfigError(
            "k-map models (or population=) with different population tables: give one population"
        )
    if tables:  # a KMap passed in models= brings its population (the class sizes it needs)
        population = next(iter(tables.values()))
    suppression_limit = check_suppression_limit(suppression_limit)
    sens = list(dict.fromkeys(m.column for m in all_models if m.column is not None))
    missing = [col for col in [*qi, *sens] if col not in df.columns]
    if missing:
        raise InputError(f"column(s) not in the table: {missing}")
    both = [col for col in sens if col in qi]
    if both:
        raise ConfigError(f"column(s) declared both quasi-identifier and sensitive: {both}")
    n = len(df)
    if n == 0:
        raise InputError("the table is empty")
    check_k_fits(all_models, n)
    qi_cols = [df[col] for col in qi]
    # no model reads a sensitive column or a population: the class sizes are enough (the rows
    # of a class are looked up for the few classes reported)
    light: ClassSizes | None = None
    grouping: Grouping | None = None
    if not sens and population is None:
        light = class_sizes(qi_cols)
        sizes = light.sizes
    else:
        grouping = group_columns(qi_cols)
        sizes = grouping.sizes
    g = sizes.shape[0]
    sensitive = {}
    for col in sens:
        hier = next(
            (
                m.hierarchy
                for m in all_models
                if isinstance(m, TCloseness) and m.column == col and m.hierarchy is not None
            ),
            None,
        )
        sensitive[col] = encode_sensitive(df[col], col, hier)
    for col in ordered_columns(all_models):
        text_order_warning(df[col], col, sensitive[col])
    pop_sizes, fraction = None, None
    stats_by_col: dict[str, SensitiveStats] = {}
    if grouping is not None:
        if population is not None:
            pop_sizes = _population_sizes(df, population, qi, grouping)
            fraction = population_fraction(n, len(population))
        stats_by_col = {
            name: SensitiveStats.from_pairs(col, grouping.labels, col.codes[grouping.rows], g)
            for name, col in sensitive.items()
        }
    stats = ClassStats(sizes, stats_by_col, pop_sizes)
    viol_any = np.zeros(g, dtype=bool)
    per_model = []
    viol_by_model = []
    achieved: dict[int, float | None] = {}
    for m in all_models:
        if m.table_level:
            continue
        v, achieved[id(m)] = m.assess(stats)  # a t-closeness distance computed once
        viol_by_model.append((m, v))
        viol_any |= v
    n_sup = _records(sizes, viol_any) if viol_any.any() else 0
    max_sup = max_suppressed_records(suppression_limit, n)
    keep = ~viol_any if n_sup <= max_sup else np.ones(g, dtype=bool)
    for m in all_models:
        if m.table_level:
            ok = m.holds(stats, keep)
            per_model.append(
                {
                    "model": m.describe(),
                    "holds": ok,
                    "achieved": m.achieved(stats),
                    "violating_classes": 0,
                    "violating_records": 0,
                }
            )
            continue
        v = dict((id(mm), vv) for mm, vv in viol_by_model)[id(m)]
        n_v = int(np.count_nonzero(v))
        per_model.append(
            {
                "model": m.describe(),
                "holds": bool(n_sup <= max_sup) if n_v else True,
                "achieved": achieved[id(m)],
                "violating_classes": n_v,
                "violating_records": _records(sizes, v) if n_v else 0,
            }
        )
    holds = all(p["holds"] for p in per_model)
    show = max(int(show), 0)
    n_viol = int(np.count_nonzero(viol_any))
    order, vidx, at = _shown(light, grouping, viol_any, show, n_viol, n)
    values = {col: _take(ser, at) for col, ser in zip(qi, qi_cols)}
    broken = [", ".join(m.name for m, v in viol_by_model if v[i]) for i in vidx.tolist()]
    return CheckResult(
        holds=holds,
        models=per_model,
        n_records=n,
        n_classes=g,
        n_suppressed=n_sup if n_sup <= max_sup else 0,
        n_violating=n_viol,
        details=_Details(qi, sizes, pop_sizes, order, vidx, values, broken, fraction),
    )


def _shown(
    light: ClassSizes | None,
    grouping: Grouping | None,
    viol_any: np.ndarray,
    show: int,
    n_viol: int,
    n: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``show`` smallest classes, the ``show`` smallest violating ones, and a row of each.

    Both by (size, first row).  When the first ``m = min(show, n_viol)`` smallest classes all
    violate, they are the ``m`` smallest violating classes (no violating class comes before
    them in that order): the usual case, as k-anonymity violations are the smallest classes.
    """
    m = min(show, n_viol)
    if light is not None:
        picked = light.smallest(show)
        if picked is not None:
            order, rows = picked
            if order.shape[0] >= m and viol_any[order[:m]].all():
                return order, order[:m], np.concatenate([rows, rows[:m]])
        grouping = light.grouping()
    assert grouping is not None
    first = grouping.first
    order = _k_smallest(grouping.sizes, first, show, n)
    if order.shape[0] >= m and viol_any[order[:m]].all():
        vidx = order[:m]
    else:
        vidx = _k_smallest(grouping.sizes, first, m, n, viol_any)
    return order, vidx, first[np.concatenate([order, vidx])]


def _count(n: int, one: str, many: str) -> str:
    """``"1 class"``, ``"2 classes"``."""
    return f"{n} {one if n == 1 else many}"


_KEY_ROWS = 1 << 30  # tables up to this many rows order classes by one key (below 2**61)


def _records(sizes: np.ndarray, mask: np.ndarray) -> int:
    """Records in the classes selected by the boolean ``mask`` (a dot product: no gather)."""
    return int(np.dot(sizes, mask.view(np.uint8).astype(np.int64)))


def _k_smallest(
    sizes: np.ndarray, first: np.ndarray, show: int, n: int, among: np.ndarray | None = None
) -> np.ndarray:
    """The ``show`` smallest classes by (size, first row), in that order, in O(classes).

    Only the classes where the boolean ``among`` is true are candidates (default: all; ``show``
    must not exceed their number).  The first rows are distinct and below ``n`` (the number of
    rows, at least every size), so ``size * n + first`` orders the classes by (size, first row)
    with no ties: one partition of that key finds the threshold, and only the ``show`` classes
    at or below it are sorted.
    """
    g = sizes.shape[0]
    if show == 0 or g == 0:
        return np.zeros(0, dtype=np.int64)
    if n > _KEY_ROWS:  # size * n + first could reach the marker of left-out classes
        order = np.lexsort((first, sizes))
        return (order[among[order]] if among is not None else order)[:show]
    key = sizes * n
    key += first
    if among is not None:
        key[~among] = 1 << 62  # above every candidate's key
    if show < g:
        thr = np.partition(key, show - 1)[show - 1]
        sel = np.flatnonzero(key <= thr)  # exactly ``show`` classes: the keys are distinct
    else:
        sel = np.flatnonzero(key < (1 << 62)) if among is not None else np.arange(g)
    return sel[np.argsort(key[sel])]


def _take(s: pd.Series, at: np.ndarray) -> np.ndarray | Callable[[], np.ndarray]:
    """Values of ``s`` at positions ``at``, as a new numpy array or a function returning one.

    Extension arrays are converted to numpy on first access (for Arrow strings the conversion
    costs as much as the take); categorical columns keep only their codes at ``at`` and the
    (immutable) dtype, as decoding goes through the categories (often Arrow strings); Arrow
    columns keep their (immutable) pyarrow data and take on first access, so a caller that
    assigns to the DataFrame afterwards does not change the report.
    """
    if isinstance(s.dtype, np.dtype):
        return s.to_numpy()[at]
    if isinstance(s.dtype, pd.CategoricalDtype):
        codes, dtype = s.array.codes[at], s.dtype
        return lambda: np.asarray(pd.Categorical.from_codes(codes, dtype=dtype))
    data = getattr(s.array, "_pa_array", None)
    if data is not None:  # pandas' Arrow arrays: the pyarrow data is immutable, take it later
        at = at.copy()
        return lambda: np.asarray(pd.array(data.take(at), dtype=s.dtype))
    taken = s.array.take(at)  # a new (small) array of the column's own type
    return lambda: np.asarray(taken)


def _population_sizes(
    df: pd.DataFrame, population: pd.DataFrame, qi: list[str], grouping: Grouping
) -> np.ndarray:
    both = stack_population(df, population, qi)
    bids, bg = qi_class_ids(both, qi)
    n = len(df)
    pop_counts = np.bincount(bids[n:], minlength=bg)
    rep = np.empty(grouping.n_classes, dtype=np.int64)
    rep[grouping.labels] = bids[grouping.rows]
    return pop_counts[rep]
