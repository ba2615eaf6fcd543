"""Record suppression: drop the rows matching a condition."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from veil.deid.operators._base import Operator, OperatorContext, register
from veil.deid.operators._condition import Condition, parse_condition
from veil.errors import ConfigError

__all__ = ["Suppress"]


@register
class Suppress(Operator):
    """Drop every record matching a condition (table-level record suppression).

    Record suppression as in Samarati & Sweeney (1998): removing the few records that would
    otherwise force heavy generalization (e.g. the very old, or a rare region).

    Conditions use a small safe language (comparisons, ``in`` / ``not in`` lists, ``and`` /
    ``or`` / ``not``, ``isna(col)`` / ``notna(col)``; see :mod:`veil.deid.operators._condition`);
    nothing is passed to ``eval``.  Several conditions are combined with *or*.

    Parameters
    ----------
    condition
        One condition or a list of them, e.g. ``"Age < 30"`` or
        ``["Age < 30", "County in ['Lamu', 'Isiolo']"]``.
    reset_index
        Renumber the remaining rows 0..n-1 (default False: keep the original labels).  In
        ``veil.apply`` the release is renumbered at the end, so that the report still matches
        each released record to its input row.

    Examples
    --------
    >>> import pandas as pd
    >>> from veil.deid.operators import OperatorContext, get_operator
    >>> df = pd.DataFrame({"Age": [25, 40, 61]})
    >>> get_operator("suppress", {"condition": "Age < 30"}).apply(df, None, OperatorContext())["Age"].tolist()
    [40, 61]
    """

    name = "suppress"
    table_level = True

    def __init__(self, condition: str | list[str], reset_index: bool = False) -> None:
        conds = [condition] if isinstance(condition, str) else condition
        if not isinstance(conds, list) or not conds:
            raise ConfigError("operator 'suppress': condition must be text or a list of texts")
        self.conditions: list[Condition] = [parse_condition(c) for c in conds]
        self.reset_index = bool(reset_index)
        self.last_removed: int | None = None

    def mask(self, df: pd.DataFrame) -> np.ndarray:
        """Boolean mask of the rows to remove."""
        drop = np.zeros(len(df), dtype=bool)
        for cond in self.conditions:
            drop |= cond.evaluate(df)
        return drop

    def apply(self, df: pd.DataFrame, column: str | None, ctx: OperatorContext) -> pd.DataFrame:
        drop = self.mask(df)
        self.last_removed = int(drop.sum())
        out = df.loc[~drop]
        if self.reset_index and not ctx.keep_labels:  # veil.apply renumbers the release
            out = out.reset_index(drop=True)
        return out.copy(deep=False)

    def describe(self) -> str:
        text = " or ".join(c.text for c in self.conditions)
        done = f" ({self.last_removed} removed)" if self.last_removed is not None else ""
        return f"records where {text} removed{done}"

    def params(self) -> dict[str, Any]:
        return {"condition": [c.text for c in self.conditions], "reset_index": self.reset_index}

    def stats(self) -> dict[str, Any]:
        return {} if self.last_removed is None else {"records_removed": self.last_removed}
