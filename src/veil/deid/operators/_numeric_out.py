"""Putting numeric results back into a column with a sensible dtype."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["numeric_result"]


def numeric_result(original: pd.Series, values: np.ndarray, keep_integer: bool) -> pd.Series:
    """Series of ``values`` like ``original``: integers stay integers when ``keep_integer``."""
    is_int = pd.api.types.is_integer_dtype(original.dtype) and not pd.api.types.is_bool_dtype(
        original.dtype
    )
    if keep_integer and is_int:
        miss = np.isnan(values)
        rounded = np.rint(np.where(miss, 0.0, values))
        if miss.any() or isinstance(original.dtype, pd.api.extensions.ExtensionDtype):
            arr = pd.array(rounded.astype(np.int64), dtype="Int64")
            arr[miss] = pd.NA
            return pd.Series(arr, index=original.index, name=original.name)
        return pd.Series(rounded.astype(original.dtype), index=original.index, name=original.name)
    return pd.Series(values, index=original.index, name=original.name, dtype=np.float64)
