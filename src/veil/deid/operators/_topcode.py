"""Top and bottom coding of numeric columns."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from veil.deid.operators._base import Operator, OperatorContext, data_derived_key, register
from veil.deid.operators._numeric_out import numeric_result
from veil.deid.operators._util import check_column, numeric_values, replace_column, require_number
from veil.errors import ConfigError, InputError

__all__ = ["TopBottomCode"]


@register
class TopBottomCode(Operator):
    """Replace values above a top code (below a bottom code) by the code itself.

    Hides the extreme values that make outliers easy to single out (Hundepool et al.,
    *Statistical Disclosure Control*, 2012, section 3.4).

    Parameters
    ----------
    top, bottom
        Fixed codes.
    top_percentile, bottom_percentile
        Codes at these percentiles of the column (0-100), used when ``top``/``bottom`` are not
        given.  Percentiles read the data; this is not differentially private.

    Examples
    --------
    >>> import pandas as pd
    >>> from veil.deid.operators import OperatorContext, get_operator
    >>> df = pd.DataFrame({"income": [10, 50, 90, 5000]})
    >>> op = get_operator("top_bottom_code", {"top": 100, "bottom": 20})
    >>> op.apply(df, "income", OperatorContext())["income"].tolist()
    [20, 50, 90, 100]
    """

    name = "top_bottom_code"

    def __init__(
        self,
        top: float | None = None,
        bottom: float | None = None,
        top_percentile: float | None = None,
        bottom_percentile: float | None = None,
    ) -> None:
        if top is not None and top_percentile is not None:
            raise ConfigError("operator 'top_bottom_code': give top or top_percentile, not both")
        if bottom is not None and bottom_percentile is not None:
            raise ConfigError(
                "operator 'top_bottom_code': give bottom or bottom_percentile, not both"
            )
        if all(v is None for v in (top, bottom, top_percentile, bottom_percentile)):
            raise ConfigError("operator 'top_bottom_code' needs top/bottom or percentiles")
        self.top = None if top is None else require_number(self.name, "top", top)
        self.bottom = None if bottom is None else require_number(self.name, "bottom", bottom)
        for nm, p in (("top_percentile", top_percentile), ("bottom_percentile", bottom_percentile)):
            if p is not None and not 0 <= require_number(self.name, nm, p) <= 100:
                raise ConfigError(f"operator 'top_bottom_code': {nm} must be in [0, 100]")
        self.top_percentile = top_percentile
        self.bottom_percentile = bottom_percentile
        if self.top is not None and self.bottom is not None and self.bottom > self.top:
            raise ConfigError("operator 'top_bottom_code': bottom must not exceed top")
        self._last: dict[str, Any] = {}

    def apply(self, df: pd.DataFrame, column: str | None, ctx: OperatorContext) -> pd.DataFrame:
        col = check_column(df, column, self.name)
        s = df[col]
        x = numeric_values(s, self.name)
        # percentiles of the finite values: one cell of inf made the code inf (nothing coded)
        # or NaN (interpolating between inf and -inf: np.clip then blanked the whole column);
        # infinite values lie beyond any finite code and are coded with the rest
        finite = x[np.isfinite(x)]
        top, bottom = self.top, self.bottom
        if (
            self.top_percentile is not None or self.bottom_percentile is not None
        ) and not finite.size:
            raise InputError(f"operator 'top_bottom_code': column {col!r} has no numeric values")
        if self.top_percentile is not None or self.bottom_percentile is not None:
            ctx.warn_once(
                f"column {col!r}: top/bottom coding at a percentile takes the code from the "
                "data, so the release publishes that percentile of the column (at 0 or 100: a "
                "record's exact value), including records the privacy engine suppresses later; "
                "give top/bottom as numbers for a release",
                key=data_derived_key(self, col),
            )
        if self.top_percentile is not None:
            top = float(np.percentile(finite, self.top_percentile))
        if self.bottom_percentile is not None:
            bottom = float(np.percentile(finite, self.bottom_percentile))
        lo = -np.inf if bottom is None else bottom
        hi = np.inf if top is None else top
        y = np.clip(x, lo, hi)
        self._last = {
            "top": top,
            "bottom": bottom,
            "top_coded": int((x > hi).sum()),
            "bottom_coded": int((x < lo).sum()),
        }
        keep_int = all(v is None or float(v).is_integer() for v in (top, bottom))
        return replace_column(df, col, numeric_result(s, y, keep_int))

    def describe(self) -> str:
        parts = []
        if self.top is not None or self.top_percentile is not None:
            parts.append(
                f"top-coded at {self.top if self.top is not None else f'p{self.top_percentile}'}"
            )
        if self.bottom is not None or self.bottom_percentile is not None:
            b = self.bottom if self.bottom is not None else f"p{self.bottom_percentile}"
            parts.append(f"bottom-coded at {b}")
        return ", ".join(parts)

    def params(self) -> dict[str, Any]:
        return {
            k: v
            for k, v in (
                ("top", self.top),
                ("bottom", self.bottom),
                ("top_percentile", self.top_percentile),
                ("bottom_percentile", self.bottom_percentile),
            )
            if v is not None
        }

    def fitted_columns(self, column: str | None) -> list[str]:
        pct = self.top_percentile is not None or self.bottom_percentile is not None
        return [column] if pct and column is not None else []

    def stats(self) -> dict[str, Any]:
        return dict(self._last)
