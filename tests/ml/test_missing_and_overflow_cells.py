"""Cells that are missing or beyond float64 get the typed error their float twin gets.

A pandas nullable column's ``pd.NA`` (``Float64``, ``Int64``, ``boolean``, pyarrow), an
integer or ``Fraction`` beyond float64's range: scikit-learn's conversion raised a bare
``TypeError``/``OverflowError`` for them (the docstring of ``check_array_2d`` promises typed
errors, and callers catch ``InputError``), while the equal table with ``NaN``/``inf`` in that
cell got :class:`~veil.errors.InputError`.  (A dict or date cell keeps numpy's ``TypeError``,
which names its type only: scikit-learn's estimator checks require it.)
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from veil.dp import BudgetAccountant
from veil.errors import InputError
from veil.ml import (
    PCA,
    DecisionTreeClassifier,
    GaussianNB,
    KMeans,
    LinearRegression,
    LogisticRegression,
    StandardScaler,
)

X = np.random.default_rng(11).uniform(0, 1, (30, 2))
Y = (X[:, 0] > 0.5).astype(int)


def _fit(name: str, Xv, acc: BudgetAccountant, y=Y):
    make = {
        "nb": lambda: GaussianNB(bounds=(0, 1), classes=[0, 1], accountant=acc),
        "lr": lambda: LogisticRegression(data_norm=2.0, classes=[0, 1], accountant=acc),
        "lin": lambda: LinearRegression(bounds_X=(0, 1), bounds_y=(0, 1), accountant=acc),
        "km": lambda: KMeans(2, bounds=(0, 1), accountant=acc),
        "pca": lambda: PCA(1, data_norm=2.0, bounds=(0, 1), accountant=acc),
        "ss": lambda: StandardScaler(bounds=(0, 1), accountant=acc),
        "dt": lambda: DecisionTreeClassifier(2, bounds=(0, 1), classes=[0, 1], accountant=acc),
    }[name]
    return make().fit(Xv, y)


NAMES = ["nb", "lr", "lin", "km", "pca", "ss", "dt"]


def _with_cell(cell) -> np.ndarray:
    Xo = X.astype(object)
    Xo[4, 1] = cell
    return Xo


def _nullable(dtype: str) -> pd.DataFrame:
    df = pd.DataFrame(X, columns=["a", "b"]).astype(dtype)
    df.iloc[4, 1] = pd.NA
    return df


def _message(name: str, Xv) -> str:
    acc = BudgetAccountant(epsilon=10.0)
    with pytest.raises(InputError) as info:
        _fit(name, Xv, acc)
    assert acc.total().epsilon == 0.0  # refused before the charge
    return str(info.value)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(
    "make_missing",
    [
        lambda: _nullable("Float64"),
        lambda: _nullable("float64[pyarrow]"),
        lambda: _with_cell(pd.NA),
        lambda: pd.DataFrame({"a": X[:, 0], "b": pd.array([1] * 4 + [None] * 26, "Int64")}),
        lambda: pd.DataFrame({"a": X[:, 0], "b": pd.array([True] * 29 + [None], "boolean")}),
    ],
    ids=["Float64", "pyarrow", "object-NA", "Int64", "boolean"],
)
def test_missing_cell_is_refused_like_nan(name, make_missing):
    assert _message(name, make_missing()) == _message(name, _with_cell(np.nan))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(
    "cell", [10**400, -(10**400), Fraction(10**400, 3)], ids=["int", "-int", "Fraction"]
)
def test_number_beyond_float64_is_refused_like_inf(name, cell):
    assert _message(name, _with_cell(cell)) == _message(name, _with_cell(np.inf))


def test_sequence_label_is_typed():
    y = Y.astype(object)
    y[3] = [1]
    acc = BudgetAccountant(epsilon=10.0)
    with pytest.raises(InputError, match="outside classes"):
        _fit("nb", X, acc, y=y)
    assert acc.total().epsilon == 0.0


@pytest.mark.parametrize("cell", [None, pd.NA, "a", (1,)], ids=["None", "NA", "text", "tuple"])
def test_one_label_outside_classes_is_counted_once(cell):
    """A label that cannot be compared with the classes made every row count as outside
    ("3 label(s) outside classes (30 row(s))" for one person's missing label)."""
    y = Y.astype(object)
    y[3] = cell
    acc = BudgetAccountant(epsilon=10.0)
    with pytest.raises(InputError, match=r"y has 1 label\(s\) outside classes \(1 row\(s\)\)"):
        _fit("nb", X, acc, y=y)
    assert acc.total().epsilon == 0.0
