"""Generalization: bins, value hierarchies, date truncation, postcode prefixes, binary split."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from veil.deid._keys import shown
from veil.deid.operators._base import Operator, OperatorContext, data_derived_key, register
from veil.deid.operators._bins import (
    assign_bins,
    bin_edges,
    check_edges,
    interval_labels,
    out_of_range_message,
    split_labels,
)
from veil.deid.operators._util import (
    canonical_str,
    check_column,
    from_codes,
    map_uniques,
    numeric_values,
    replace_column,
    require_choice,
    require_int,
    resolve_path,
)
from veil.errors import ConfigError, InputError
from veil.schema._hierarchy import missing_from_hierarchy

__all__ = ["Generalize", "truncate_dates"]

_DATE_FORMATS = {
    "day": "%Y-%m-%d",
    "month": "%Y-%m",
    "year": "%Y",
}
_DATE_LEVELS = ("day", "month", "quarter", "year", "decade")


def truncate_dates(values: pd.Series | np.ndarray, to: str, column: Any = None) -> np.ndarray:
    """Truncate dates to ``day``, ``month``, ``quarter``, ``year`` or ``decade`` (object of str).

    Examples
    --------
    >>> truncate_dates(np.array(["2021-05-17", "1984-11-02"], dtype=object), "month").tolist()
    ['2021-05', '1984-11']
    >>> truncate_dates(np.array(["1984-11-02"], dtype=object), "decade").tolist()
    ['1980s']
    """
    arr = pd.Series(values, dtype=object) if not isinstance(values, pd.Series) else values
    if pd.api.types.is_datetime64_any_dtype(arr.dtype):
        dt = pd.DatetimeIndex(arr)
    else:
        try:
            dt = pd.DatetimeIndex(pd.to_datetime(arr, errors="coerce", format="ISO8601"))
        except (ValueError, TypeError):
            dt = pd.DatetimeIndex(pd.to_datetime(arr, errors="coerce", format="mixed"))
        n_bad = int((dt.isna() & arr.notna().to_numpy()).sum())
        if n_bad:  # counted, never quoted: errors end up in logs
            raise InputError(
                f"operator 'generalize': {n_bad} value(s) of column {column!r} are not "
                "dates; clean the column or read it with a date format (ISO 8601 works)"
            )
    if to in _DATE_FORMATS:
        out = dt.strftime(_DATE_FORMATS[to])
    else:
        years = np.asarray(dt.year.fillna(0), dtype=np.int64)
        if to == "quarter":
            quarters = np.asarray(dt.quarter.fillna(0), dtype=np.int64)
            out = [f"{y}-Q{q}" for y, q in zip(years, quarters)]
        else:
            out = [f"{(y // 10) * 10}s" for y in years]
    res = np.asarray(out, dtype=object)
    res[np.asarray(dt.isna())] = None
    return res


@register
class Generalize(Operator):
    """Replace values by coarser ones (Samarati & Sweeney 1998, full-domain generalization).

    Exactly one mode is chosen by the parameters:

    - ``bins``: a number of bins (``strategy`` ``equal_width`` or ``quantile``) or a list of
      edges, like ``pd.cut``; labels are interval texts such as ``[30, 50)`` (``right: true``
      gives ``(30, 50]``), or your own ``labels``.  ``out_of_range`` (``error``/``missing``)
      says what happens to values outside custom edges.
    - ``hierarchy`` (CSV/TSV/YAML path relative to the policy, or a mapping value -> levels)
      with ``level``; ``level`` alone uses the column's hierarchy from the policy
      (``ctx.hierarchies``).  See :class:`veil.schema.Hierarchy`.
    - ``date``: truncate dates to ``day``, ``month``, ``quarter``, ``year`` or ``decade``.
    - ``keep``: keep the first ``keep`` characters of a code (postcodes) and replace the rest
      by ``pad`` (default ``"*"``; ``""`` drops them).
    - ``split``: ``mean`` or ``median``: two groups ``< t`` and ``>= t``.

    Examples
    --------
    >>> import pandas as pd
    >>> from veil.deid.operators import OperatorContext, get_operator
    >>> df = pd.DataFrame({"Age": [23, 37, 64], "zip": ["02139", "02142", "10001"]})
    >>> op = get_operator("generalize", {"bins": [0, 30, 50, 120]})
    >>> op.apply(df, "Age", OperatorContext())["Age"].tolist()
    ['[0, 30)', '[30, 50)', '[50, 120]']
    >>> get_operator("generalize", {"keep": 3}).apply(df, "zip", OperatorContext())["zip"].tolist()
    ['021**', '021**', '100**']
    """

    name = "generalize"

    def __init__(
        self,
        bins: int | Sequence[float] | None = None,
        strategy: str = "equal_width",
        labels: Sequence[str] | None = None,
        right: bool = False,
        out_of_range: str = "error",
        hierarchy: str | Mapping[str, Any] | None = None,
        level: int | None = None,
        date: str | None = None,
        keep: int | None = None,
        pad: str = "*",
        split: str | None = None,
    ) -> None:
        modes = {
            "bins": bins is not None,
            "hierarchy": hierarchy is not None or level is not None,
            "date": date is not None,
            "keep": keep is not None,
            "split": split is not None,
        }
        chosen = [m for m, on in modes.items() if on]
        if len(chosen) != 1:
            raise ConfigError(
                "operator 'generalize' needs exactly one of bins, hierarchy/level, date, keep, "
                f"split; got {chosen or 'none'}"
            )
        self.mode = chosen[0]
        self.strategy = require_choice(self.name, "strategy", strategy, ("equal_width", "quantile"))
        self.right = bool(right)
        self.out_of_range = require_choice(
            self.name, "out_of_range", out_of_range, ("error", "missing")
        )
        self.bins: int | list[float] | None = None
        self.labels = list(labels) if labels is not None else None
        if self.mode == "bins":
            if isinstance(bins, (int, np.integer)) and not isinstance(bins, bool):
                self.bins = require_int(self.name, "bins", bins, minimum=1)
            elif isinstance(bins, Sequence) and not isinstance(bins, str):
                try:
                    edges = np.asarray([float(b) for b in bins])
                except (TypeError, ValueError):
                    raise ConfigError("operator 'generalize': bins must be numbers") from None
                check_edges(edges)
                self.bins = [float(b) for b in edges]
                if self.labels is not None and len(self.labels) != len(edges) - 1:
                    raise ConfigError(
                        f"operator 'generalize': {len(edges) - 1} bins need as many labels, "
                        f"got {len(self.labels)}"
                    )
            else:
                raise ConfigError(
                    f"operator 'generalize': bins must be a count or a list of edges, got {shown(bins)}"
                )
        self.hierarchy_spec = hierarchy
        if self.mode == "hierarchy":
            if level is None:
                raise ConfigError("operator 'generalize': a hierarchy needs a level")
            if hierarchy is not None and not isinstance(hierarchy, (str, Mapping)):
                raise ConfigError(
                    "operator 'generalize': hierarchy must be a file path or a mapping"
                )
        self.level = None if level is None else require_int(self.name, "level", level)
        self.date = None if date is None else require_choice(self.name, "date", date, _DATE_LEVELS)
        self.keep = None if keep is None else require_int(self.name, "keep", keep)
        if not isinstance(pad, str) or len(pad) > 1:
            raise ConfigError(
                f"operator 'generalize': pad must be one character or '', got {shown(pad)}"
            )
        self.pad = pad
        self.split = (
            None if split is None else require_choice(self.name, "split", split, ("mean", "median"))
        )
        self._hierarchy: Any = None
        self._last: dict[str, Any] = {}

    # ------------------------------------------------------------------ helpers
    def _load_hierarchy(self, column: str, ctx: OperatorContext) -> Any:
        from veil.schema import Hierarchy

        spec = self.hierarchy_spec
        if spec is None:
            h = ctx.hierarchies.get(column)
            if h is None:
                raise ConfigError(
                    f"operator 'generalize': level given for column {column!r} but no hierarchy "
                    "(add hierarchy: FILE to the operator or the column)"
                )
        elif isinstance(spec, Mapping):
            h = Hierarchy.from_mapping(spec)
        else:
            h = Hierarchy.from_file(resolve_path(spec, ctx.base_dir))
        assert self.level is not None
        if self.level >= h.height:
            raise ConfigError(
                f"operator 'generalize': level {self.level} too high for the hierarchy of "
                f"{column!r} (levels 0..{h.height - 1})"
            )
        return h

    def _bins(self, s: pd.Series, col: str, ctx: OperatorContext) -> pd.Series:
        x = numeric_values(s, self.name)
        edges = bin_edges(x, self.bins, self.strategy)  # type: ignore[arg-type]
        if isinstance(self.bins, (int, np.integer)):
            what = "quantiles" if self.strategy == "quantile" else "minimum and maximum"
            ctx.warn_once(
                f"column {col!r}: bins: {int(self.bins)} takes its edges from the data, so the "
                f"release's labels publish the column's {what} (a record's exact value at the "
                "ends), including records the privacy engine suppresses later; give explicit "
                "edges (bins: [0, 20, 40, ...]) for a release",
                key=data_derived_key(self, col),
            )
        idx = assign_bins(x, edges, self.right)
        if (idx == -2).any() and self.out_of_range == "error":
            raise InputError(out_of_range_message(x, idx, col, edges))
        labels = self.labels if self.labels is not None else interval_labels(edges, self.right)
        if len(labels) != len(edges) - 1:
            raise ConfigError(
                f"operator 'generalize': {len(edges) - 1} bins need as many labels, got {len(labels)}"
            )
        self._last = {"edges": [float(e) for e in edges]}
        return self._from_index(s, idx, labels)

    def _from_index(self, s: pd.Series, idx: np.ndarray, labels: list[str]) -> pd.Series:
        return from_codes(labels, np.where(idx < 0, -1, idx), s)

    def _split(self, s: pd.Series) -> pd.Series:
        x = numeric_values(s, self.name)
        # the threshold of the finite values: one cell of inf made the mean inf (everyone else
        # '< inf'), inf and -inf made it NaN ('< nan'); infinite values fall on their side
        finite = x[np.isfinite(x)]
        if finite.size == 0:
            raise InputError(f"operator 'generalize': column {s.name!r} has no numeric values")
        t = float(np.mean(finite) if self.split == "mean" else np.median(finite))
        idx = np.where(np.isnan(x), -1, (x >= t).astype(np.int64))
        self._last = {"threshold": t}
        return self._from_index(s, idx, split_labels(t))

    def _prefix(self, uniques: np.ndarray) -> list[str]:
        k = self.keep or 0
        out = []
        for v in uniques:
            t = canonical_str(v)
            out.append(t[:k] + self.pad * max(len(t) - k, 0))
        return out

    # ------------------------------------------------------------------ Operator API
    def apply(self, df: pd.DataFrame, column: str | None, ctx: OperatorContext) -> pd.DataFrame:
        col = check_column(df, column, self.name)
        s = df[col]
        if self.mode == "bins":
            new = self._bins(s, col, ctx)
        elif self.mode == "split":
            new = self._split(s)
        elif self.mode == "keep":
            new = map_uniques(s, self._prefix)
        elif self.mode == "date":
            if pd.api.types.is_datetime64_any_dtype(s.dtype):
                res = truncate_dates(s, self.date or "year", col)
                new = pd.Series(res, index=s.index, name=col, dtype=object)
            else:
                new = map_uniques(s, lambda u: truncate_dates(u, self.date or "year", col))
        else:
            h = self._load_hierarchy(col, ctx)
            level = self.level or 0

            def gen(u: np.ndarray) -> np.ndarray:
                miss = h.missing(u)
                if miss:
                    raise InputError(missing_from_hierarchy(miss, col))
                return np.asarray(h.generalize(u, level), dtype=object)

            new = map_uniques(s, gen)
        return replace_column(df, col, new)

    def describe(self) -> str:
        if self.mode == "bins":
            if isinstance(self.bins, list):
                return f"generalized into {len(self.bins) - 1} bins with edges {self.bins}"
            return f"generalized into {self.bins} {self.strategy.replace('_', '-')} bins"
        if self.mode == "hierarchy":
            return f"generalized to level {self.level} of its hierarchy"
        if self.mode == "date":
            return f"dates truncated to the {self.date}"
        if self.mode == "keep":
            return f"only the first {self.keep} characters kept"
        return f"split in two at the {self.split}"

    def params(self) -> dict[str, Any]:
        p: dict[str, Any] = {"mode": self.mode}
        if self.mode == "bins":
            p.update(bins=self.bins, strategy=self.strategy, right=self.right)
            if self.labels is not None:
                p["labels"] = self.labels
        elif self.mode == "hierarchy":
            p["level"] = self.level
            if isinstance(self.hierarchy_spec, str):
                p["hierarchy"] = self.hierarchy_spec
        elif self.mode == "date":
            p["date"] = self.date
        elif self.mode == "keep":
            p.update(keep=self.keep, pad=self.pad)
        else:
            p["split"] = self.split
        return p

    def fitted_columns(self, column: str | None) -> list[str]:
        fitted = self.mode == "split" or (
            self.mode == "bins" and isinstance(self.bins, (int, np.integer))
        )
        return [column] if fitted and column is not None else []

    def stats(self) -> dict[str, Any]:
        if self.mode == "bins" and isinstance(self.bins, list):
            return {}  # the edges are the policy's, already in describe()
        return dict(self._last)
