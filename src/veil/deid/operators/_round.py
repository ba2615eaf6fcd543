"""Rounding to a base or to significant digits."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from veil.deid.operators._base import Operator, OperatorContext, register
from veil.deid.operators._numeric_out import numeric_result
from veil.deid.operators._util import (
    check_column,
    numeric_values,
    replace_column,
    require_choice,
    require_int,
    require_number,
)
from veil.errors import ConfigError

__all__ = ["Round"]


@register
class Round(Operator):
    """Round numbers to a multiple of ``base`` or to ``significant`` digits.

    Parameters
    ----------
    base
        Round to the nearest multiple of this (e.g. 5 for ages, 1000 for incomes).
    significant
        Keep this many significant digits instead (e.g. 2: 12 345 -> 12 000).
    mode
        ``nearest`` (default, halves to even), ``floor`` or ``ceil``.

    Examples
    --------
    >>> import pandas as pd
    >>> from veil.deid.operators import OperatorContext, get_operator
    >>> df = pd.DataFrame({"income": [12_345, 987]})
    >>> get_operator("round", {"significant": 2}).apply(df, "income", OperatorContext())["income"].tolist()
    [12000, 990]
    """

    name = "round"

    def __init__(
        self, base: float | None = None, significant: int | None = None, mode: str = "nearest"
    ) -> None:
        if (base is None) == (significant is None):
            raise ConfigError("operator 'round' needs exactly one of base or significant")
        self.base = None if base is None else require_number(self.name, "base", base, positive=True)
        self.significant = (
            None
            if significant is None
            else require_int(self.name, "significant", significant, minimum=1)
        )
        self.mode = require_choice(self.name, "mode", mode, ("nearest", "floor", "ceil"))

    def apply(self, df: pd.DataFrame, column: str | None, ctx: OperatorContext) -> pd.DataFrame:
        col = check_column(df, column, self.name)
        s = df[col]
        x = numeric_values(s, self.name)
        fn = {"nearest": np.rint, "floor": np.floor, "ceil": np.ceil}[self.mode]
        if self.base is not None:
            unit = np.full_like(x, self.base)
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                mag = np.floor(np.log10(np.abs(x)))
            mag = np.where(np.isfinite(mag), mag, 0.0)
            unit = 10.0 ** (mag - (self.significant or 1) + 1)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            y = fn(x / unit) * unit
        y = np.where((unit > 0) & np.isfinite(y), y, x)  # subnormal inputs: leave as they are
        # tidy binary noise such as 0.30000000000000004 when the unit is a power of ten; only
        # where 12 decimals are below float64's precision anyway (np.round scales by 1e12: a
        # value near 1e300 came back as inf)
        tidy = (unit < 1) & (np.abs(y) < 1e15)
        y[tidy] = np.round(y[tidy], 12)
        keep_int = self.base is None or float(self.base).is_integer()
        return replace_column(df, col, numeric_result(s, y, keep_int))

    def describe(self) -> str:
        if self.base is not None:
            return f"rounded ({self.mode}) to a multiple of {self.base:g}"
        return f"rounded ({self.mode}) to {self.significant} significant digits"

    def params(self) -> dict[str, Any]:
        p: dict[str, Any] = {"mode": self.mode}
        if self.base is not None:
            p["base"] = self.base
        else:
            p["significant"] = self.significant
        return p
