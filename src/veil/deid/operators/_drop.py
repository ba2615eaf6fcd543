"""Attribute suppression: remove a column from the release."""

from __future__ import annotations

import pandas as pd

from veil.deid.operators._base import Operator, OperatorContext, register
from veil.deid.operators._util import check_column

__all__ = ["Drop"]


@register
class Drop(Operator):
    """Remove the column (attribute suppression).

    The safest treatment of a direct identifier that the release does not need.

    Examples
    --------
    >>> import pandas as pd
    >>> from veil.deid.operators import OperatorContext, get_operator
    >>> df = pd.DataFrame({"name": ["Ann", "Bo"], "age": [31, 45]})
    >>> list(get_operator("drop").apply(df, "name", OperatorContext()).columns)
    ['age']
    """

    name = "drop"

    def apply(self, df: pd.DataFrame, column: str | None, ctx: OperatorContext) -> pd.DataFrame:
        col = check_column(df, column, self.name)
        return df.drop(columns=[col])

    def describe(self) -> str:
        return "column removed (attribute suppression)"
