"""The DP tools never parse text as numbers: ``'10'`` is an InputError, not 10."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

import veil.dp.tools as tools
from veil.errors import InputError

TEXT = ["10", "20"] * 500


def _text_inputs() -> list[Any]:
    return [
        np.array(TEXT),  # <U2
        np.array([t.encode() for t in TEXT]),  # |S2
        list(TEXT),
        np.array(TEXT, dtype=object),
        np.array([10, "20"] * 500, dtype=object),  # numbers mixed with a string
        np.array([10.5, None, "20"] * 500, dtype=object),
        pd.Series(TEXT),  # pandas' string dtype
        pd.Series(TEXT, dtype=object),
        pd.Series(TEXT, dtype="category"),
        pd.DataFrame({"a": [10, 20] * 500, "b": TEXT}),
    ]


CALLS = {
    "mean": lambda x: tools.mean(x, epsilon=100, bounds=(0, 100), random_state=0),
    "sum": lambda x: tools.sum(x, epsilon=100, bounds=(0, 100), random_state=0),
    "nanmean": lambda x: tools.nanmean(x, epsilon=100, bounds=(0, 100), random_state=0),
    "median": lambda x: tools.median(x, epsilon=100, bounds=(0, 100), random_state=0),
    "histogram": lambda x: tools.histogram(x, epsilon=100, range=(0, 100), random_state=0),
    "estimate_bounds": lambda x: tools.estimate_bounds(x, epsilon=1, random_state=0),
}


@pytest.mark.parametrize("func", sorted(CALLS))
@pytest.mark.parametrize("index", range(len(_text_inputs())))
def test_text_is_refused(func: str, index: int) -> None:
    data = _text_inputs()[index]
    with pytest.raises(InputError, match="must be numeric"):
        CALLS[func](data)


@pytest.mark.parametrize(
    "data",
    [
        [10, 20] * 500,
        np.array([10, 20.0] * 500, dtype=object),
        np.array([True, 1] * 500, dtype=object),  # 'mixed-integer' for pandas, no text
        pd.Series([10, 20] * 500, dtype="Int64"),
        pd.Series([10, 20] * 500, dtype=object),
    ],
)
def test_numbers_still_work(data: Any) -> None:
    values = np.asarray(pd.Series(list(data)).astype(float))
    got = tools.mean(data, epsilon=100, bounds=(0, 100), random_state=0)
    # Laplace scale 100 / (100 n) = 1e-3: within 0.1 of the true mean with overwhelming odds
    assert abs(got - values.mean()) < 0.1


def test_numbers_with_missing_values_in_nan_functions() -> None:
    data = np.array([10, None, 20.0] * 500, dtype=object)
    got = tools.nanmean(data, epsilon=100, bounds=(0, 100), random_state=0)
    assert abs(got - 15.0) < 0.5
    hist, _ = tools.histogram(
        pd.Series([10, 20] * 500, dtype="Int64"), epsilon=100, bins=2, range=(0, 40)
    )
    assert abs(int(hist.sum()) - 1000) < 50
