"""Redaction: replace every value by one constant."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from veil.deid.operators._base import Operator, OperatorContext, register
from veil.deid.operators._util import check_column, from_codes, replace_column
from veil.errors import ConfigError

__all__ = ["Redact"]


@register
class Redact(Operator):
    """Replace every value of the column by a constant.

    Parameters
    ----------
    value
        The replacement text (default ``"[REDACTED]"``).
    keep_missing
        Leave missing values missing (default True), so the release still shows where data was
        absent; set False to hide that too.

    Examples
    --------
    >>> import pandas as pd
    >>> from veil.deid.operators import OperatorContext, get_operator
    >>> df = pd.DataFrame({"note": ["call me", None]})
    >>> out = get_operator("redact", {"value": "X"}).apply(df, "note", OperatorContext())
    >>> out["note"][0], bool(out["note"].isna()[1])
    ('X', True)
    """

    name = "redact"

    def __init__(self, value: Any = "[REDACTED]", keep_missing: bool = True) -> None:
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise ConfigError(f"operator 'redact': value must be text or a number, got {value!r}")
        self.value = value
        self.keep_missing = bool(keep_missing)

    def apply(self, df: pd.DataFrame, column: str | None, ctx: OperatorContext) -> pd.DataFrame:
        col = check_column(df, column, self.name)
        s = df[col]
        codes = np.zeros(len(s), dtype=np.intp)
        if self.keep_missing:
            codes[s.isna().to_numpy()] = -1
        dtype = None if isinstance(self.value, str) else object
        new = from_codes([self.value], codes, s, dtype)
        return replace_column(df, col, new)

    def describe(self) -> str:
        return f"every value replaced by the constant {self.value!r}"

    def params(self) -> dict[str, Any]:
        return {"value": self.value, "keep_missing": self.keep_missing}
