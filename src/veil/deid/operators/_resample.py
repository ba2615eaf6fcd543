"""Resampling a categorical column from its own empirical distribution."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from veil.deid.operators._base import Operator, OperatorContext, register
from veil.deid.operators._util import check_column, factorize_cells, replace_column

__all__ = ["Resample"]


@register
class Resample(Operator):
    """Replace each value by an independent draw from the column's empirical distribution.

    Keeps the column's marginal distribution (in expectation) and breaks its link with every
    other column and with the person: a synthetic column.  Correlations with other columns are
    lost.  Uses ``ctx.rng``.  This is the bootstrap draw of Efron (1979) applied to one
    attribute (a simple form of synthetic data, cf. Rubin 1993).

    Parameters
    ----------
    include_missing
        Treat missing as one more category, drawn with its frequency (default True); when
        False, missing cells stay missing and the others are drawn among non-missing values.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from veil.deid.operators import OperatorContext, get_operator
    >>> df = pd.DataFrame({"county": ["Nairobi"] * 3 + ["Kisumu"]})
    >>> out = get_operator("resample").apply(df, "county", OperatorContext(rng=np.random.default_rng(1)))
    >>> set(out["county"]) <= {"Nairobi", "Kisumu"}
    True
    """

    name = "resample"

    def __init__(self, include_missing: bool = True) -> None:
        self.include_missing = bool(include_missing)

    def apply(self, df: pd.DataFrame, column: str | None, ctx: OperatorContext) -> pd.DataFrame:
        col = check_column(df, column, self.name)
        s = df[col]
        codes, uniques = factorize_cells(s)  # rows are taken: the cells stay as they were
        k = len(uniques)
        codes = np.where(codes < 0, k, codes)  # missing -> category k
        counts = np.bincount(codes, minlength=k + 1).astype(np.float64)
        if self.include_missing:
            target = np.arange(len(s))
        else:
            target = np.flatnonzero(codes < k)
            counts[k] = 0.0
        # one representative row per category: taking rows keeps the column's exact dtype
        present, first_row = np.unique(codes, return_index=True)
        rep = np.zeros(k + 1, dtype=np.int64)
        rep[present] = first_row
        rows = np.arange(len(s))
        if counts.sum() > 0 and len(target):
            cdf = np.cumsum(counts / counts.sum())
            last = int(np.flatnonzero(counts)[-1])
            cdf[last:] = 1.0  # no draw beyond the last non-empty category (rounding)
            draws = np.searchsorted(cdf, ctx.rng.random(len(target)), side="right")
            rows[target] = rep[draws]
        new = s.take(rows).set_axis(s.index)
        return replace_column(df, col, new)

    def fitted_columns(self, column: str | None) -> list[str]:
        # the draws come from the empirical distribution of every row it is given: a value
        # held only by a record removed later can be copied into the release
        return [] if column is None else [column]

    def describe(self) -> str:
        return "resampled from its own empirical distribution (links to other columns removed)"

    def params(self) -> dict[str, Any]:
        return {"include_missing": self.include_missing}
