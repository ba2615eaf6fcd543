"""Verify privacy models on a table as it is: ``check(df, qi=..., k=..., l=..., t=...)``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from veil.anonymity._config import l_model, t_model
from veil.anonymity._lattice import combine_keys
from veil.anonymity._models import AverageRisk, KAnonymity, KMap, PrivacyModel, TCloseness
from veil.anonymity._result import to_jsonable
from veil.anonymity._risk import risk_summary
from veil.anonymity._stats import ClassStats, encode_sensitive, group_keys
from veil.errors import ConfigError, InputError
from veil.schema._hierarchy import factorize_str_array

__all__ = ["check", "CheckResult", "class_ids"]


def class_ids(df: pd.DataFrame, qi: Sequence[str]) -> tuple[np.ndarray, int]:
    """Equivalence class of each row by position (works for any index); ``(ids, n_classes)``."""
    cols, cards = [], []
    for c in qi:
        s = df[c]
        if isinstance(s.dtype, pd.CategoricalDtype):
            codes = s.cat.codes.to_numpy().astype(np.int64)
            n_cat = len(s.cat.categories)
            codes = np.where(codes < 0, n_cat, codes)
            card = n_cat + 1
        elif s.dtype == object and (fast := factorize_str_array(s.to_numpy())) is not None:
            codes, uniq = fast
            card = len(uniq)
        else:
            codes, uniq = pd.factorize(s)  # NaN -> -1 (faster than use_na_sentinel=False)
            codes = np.asarray(codes, dtype=np.int64)
            card = len(uniq) + 1
            if codes.size and codes.min() < 0:
                codes[codes < 0] = len(uniq)
        cols.append(codes)
        cards.append(card)
    key, space = combine_keys(cols, cards)
    return group_keys(key, space)


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
                out.append((col, float(val) if "." in val else int(val)))
            except ValueError:
                raise ConfigError(f"{what} must look like COLUMN:VALUE, got {item!r}") from None
        else:
            col, val = item
            out.append((str(col), val))
    return out


@dataclass
class CheckResult:
    """Outcome of :func:`check`.

    Attributes
    ----------
    holds
        True when every model holds (after at most ``suppression_limit`` records suppressed).
    models
        Per model: description, whether it holds, violating classes and records.
    n_records, n_classes
        Table size and number of equivalence classes.
    smallest
        The smallest classes: QI values and size.
    violating
        Violating classes: QI values, size and the models they break.
    class_sizes
        Class-size histogram (classes and records per size bin).
    risk
        Re-identification risk summary (:func:`veil.anonymity.risk`).
    """

    holds: bool
    models: list[dict[str, Any]]
    n_records: int
    n_classes: int
    n_suppressed: int
    n_violating: int
    smallest: pd.DataFrame
    violating: pd.DataFrame
    class_sizes: list[dict[str, Any]]
    risk: dict[str, Any] = field(default_factory=dict)

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
            f"{'HOLDS' if self.holds else 'FAILS'}: {self.n_records} records, "
            f"{self.n_classes} equivalence classes"
            + (f", {self.n_suppressed} records would be suppressed" if self.n_suppressed else "")
        ]
        for m in self.models:
            mark = "ok  " if m["holds"] else "FAIL"
            extra = (
                ""
                if m["holds"] and not m["violating_classes"]
                else f"  ({m['violating_classes']} classes / {m['violating_records']} records violate)"
            )
            ach = "" if m.get("achieved") is None else f"  achieved {m['achieved']:.4g}"
            lines.append(f"  [{mark}] {m['model']}{ach}{extra}")
        with pd.option_context("display.width", 120, "display.max_columns", 20):
            lines.append("smallest classes:")
            lines.append(_indent(self.smallest.head(max_rows).to_string(index=False)))
            if len(self.violating):
                lines.append(f"violating classes ({self.n_violating}):")
                lines.append(_indent(self.violating.head(max_rows).to_string(index=False)))
        lines.append("class sizes:")
        for b in self.class_sizes:
            if b["classes"]:
                lines.append(f"  {b['size']:>7}: {b['classes']} classes, {b['records']} records")
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
        Share of records that may be suppressed (violating classes) while still "holding".
    show
        Number of smallest / violating classes reported.

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
    ids, g = class_ids(df, qi)
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
    pop_sizes = None
    if population is not None:
        pop_sizes = _population_sizes(df, population, qi, ids, g)
    stats = ClassStats.from_codes(ids, g, sensitive=sensitive, population=pop_sizes)
    sizes = stats.sizes
    viol_any = np.zeros(g, dtype=bool)
    per_model = []
    viol_by_model = []
    for m in all_models:
        if m.table_level:
            continue
        v = m.violating(stats)
        viol_by_model.append((m, v))
        viol_any |= v
    n_sup = int(sizes[viol_any].sum())
    max_sup = int(np.floor(suppression_limit * n + 1e-9))
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
        per_model.append(
            {
                "model": m.describe(),
                "holds": bool(n_sup <= max_sup) if v.any() else True,
                "achieved": m.achieved(stats),
                "violating_classes": int(v.sum()),
                "violating_records": int(sizes[v].sum()),
            }
        )
    holds = all(p["holds"] for p in per_model)
    order = np.lexsort((np.arange(g), sizes))[:show]
    vidx = np.flatnonzero(viol_any)
    vidx = vidx[np.lexsort((vidx, sizes[vidx]))][:show]
    wanted = np.union1d(order, vidx)
    # first row of each wanted class (rows are scanned once, classes looked up in a small table)
    slot = np.full(g, -1, dtype=np.int64)
    slot[wanted] = np.arange(wanted.size)
    hit = slot[ids]
    pos = np.flatnonzero(hit >= 0)
    first = np.empty(wanted.size, dtype=np.int64)
    first[hit[pos[::-1]]] = pos[::-1]

    def rows_of(classes: np.ndarray, **extra: Any) -> pd.DataFrame:
        at = first[slot[classes]]
        cols: dict[str, Any] = {col: np.asarray(df[col].array.take(at)) for col in qi}
        return pd.DataFrame({**cols, "size": sizes[classes], **extra})

    smallest = rows_of(order)
    violating = rows_of(
        vidx, models=[", ".join(m.name for m, v in viol_by_model if v[i]) for i in vidx]
    )
    risk = risk_summary(sizes, pop_sizes)
    return CheckResult(
        holds=holds,
        models=per_model,
        n_records=n,
        n_classes=g,
        n_suppressed=n_sup if n_sup <= max_sup else 0,
        n_violating=int(viol_any.sum()),
        smallest=smallest,
        violating=violating,
        class_sizes=risk["class_sizes"],
        risk=risk,
    )


def _population_sizes(
    df: pd.DataFrame, population: pd.DataFrame, qi: list[str], ids: np.ndarray, g: int
) -> np.ndarray:
    miss = [col for col in qi if col not in population.columns]
    if miss:
        raise InputError(f"population table lacks quasi-identifier column(s) {miss}")
    both = pd.concat([df[qi].astype(str), population[qi].astype(str)], ignore_index=True)
    bids, bg = class_ids(both, qi)
    n = len(df)
    pop_counts = np.bincount(bids[n:], minlength=bg)
    rep = np.empty(g, dtype=np.int64)
    rep[ids] = bids[:n]
    return pop_counts[rep]
