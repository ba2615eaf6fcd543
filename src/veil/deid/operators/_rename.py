"""Anonymous column names, with the mapping kept apart from the release."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from veil.deid.operators._base import Operator, OperatorContext, register
from veil.errors import ConfigError, InputError

__all__ = ["RenameColumns"]

MAPPING_FILE = "column_mapping.csv"


@register
class RenameColumns(Operator):
    """Rename columns to ``col_1``, ``col_2``, ... (table-level).

    The mapping (original -> anonymous) goes to ``ctx.artifacts["column_mapping.csv"]`` so it can
    be stored apart from the release.  Names hide what a column means, not the values in it.

    Parameters
    ----------
    prefix
        Prefix of the new names (default ``"col_"``).
    columns
        Only rename these columns (default: all, numbered in table order).

    Examples
    --------
    >>> import pandas as pd
    >>> from veil.deid.operators import OperatorContext, get_operator
    >>> ctx = OperatorContext()
    >>> out = get_operator("rename_columns").apply(pd.DataFrame({"age": [1], "hiv": [0]}), None, ctx)
    >>> list(out.columns), ctx.artifacts["column_mapping.csv"]["original"].tolist()
    (['col_1', 'col_2'], ['age', 'hiv'])
    """

    name = "rename_columns"
    table_level = True

    def __init__(self, prefix: str = "col_", columns: Sequence[str] | None = None) -> None:
        if not isinstance(prefix, str) or not prefix:
            raise ConfigError("operator 'rename_columns': prefix must be non-empty text")
        if columns is not None and (isinstance(columns, str) or not isinstance(columns, Sequence)):
            raise ConfigError("operator 'rename_columns': columns must be a list of names")
        self.prefix = prefix
        self.columns = None if columns is None else list(columns)

    def apply(self, df: pd.DataFrame, column: str | None, ctx: OperatorContext) -> pd.DataFrame:
        targets = list(df.columns) if self.columns is None else self.columns
        missing = [c for c in targets if c not in df.columns]
        if missing:
            raise InputError(f"operator 'rename_columns': no column(s) {missing[:5]} in the table")
        mapping = {c: f"{self.prefix}{i}" for i, c in enumerate(targets, start=1)}
        clash = set(mapping.values()) & (set(df.columns) - set(mapping))
        if clash:
            raise InputError(
                f"operator 'rename_columns': new names clash with existing columns {sorted(clash)[:5]}"
            )
        ctx.artifacts[MAPPING_FILE] = pd.DataFrame(
            {"original": [str(c) for c in mapping], "anonymous": list(mapping.values())}
        )
        return df.rename(columns=mapping)

    def describe(self) -> str:
        return f"columns renamed to {self.prefix}1, {self.prefix}2, ... (mapping in {MAPPING_FILE})"

    def params(self) -> dict[str, Any]:
        p: dict[str, Any] = {"prefix": self.prefix}
        if self.columns is not None:
            p["columns"] = self.columns
        return p
