"""A PrivatePipeline warns when a non-DP step learns from the rows it is fitted on.

``make_private_pipeline(OneHotEncoder(), LogisticRegression(...))`` found the categories in
the data: one person with a new category added a column, so the released model's
``n_features_in_`` and ``coef_`` shape told neighbouring tables apart with certainty, silently
(the budget split covers the DP steps only).  The pipeline cannot make such a step private; it
now says so with a :class:`~veil.errors.PrivacyLeakWarning` (a function of its configuration,
never of the data), and stays silent for public steps (listed categories, stateless ones).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import HuberRegressor
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder
from sklearn.preprocessing import StandardScaler as SkScaler

from veil.errors import PrivacyLeakWarning
from veil.ml import LogisticRegression, StandardScaler, make_private_pipeline


def _leaks(pipe, X, y) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pipe.fit(X, y)
    return [str(w.message) for w in caught if issubclass(w.category, PrivacyLeakWarning)]


def _tables():
    cats = np.array([["a"], ["b"]] * 30)
    y = np.array([0, 1] * 30)
    return (cats, y), (np.vstack([cats, [["c"]]]), np.append(y, 1))  # + one person, new category


def test_a_data_fitted_encoder_shapes_the_model_and_is_warned() -> None:
    (d, y), (d2, y2) = _tables()

    def pipe():
        lr = LogisticRegression(data_norm=2.0, classes=[0, 1], random_state=0)
        return make_private_pipeline(OneHotEncoder(sparse_output=False), lr, epsilon=1.0)

    p, p2 = pipe(), pipe()
    msgs = _leaks(p, d, y)
    _leaks(p2, d2, y2)
    # the leak the warning is about: the released model's width follows the data
    assert p[-1].n_features_in_ == 2 and p2[-1].n_features_in_ == 3
    assert msgs and "onehotencoder_0" in msgs[0]


def test_public_steps_are_not_warned() -> None:
    (d, y), _ = _tables()
    lr = LogisticRegression(data_norm=2.0, classes=[0, 1], random_state=0)
    enc = OneHotEncoder(categories=[["a", "b", "c"]], sparse_output=False)
    pipe = make_private_pipeline(enc, FunctionTransformer(), lr, epsilon=1.0)
    assert _leaks(pipe, d, y) == []
    assert pipe[-1].n_features_in_ == 3  # listed categories: the width is public


@pytest.mark.parametrize(
    "steps, name",
    [
        ([StandardScaler(bounds=(0, 1)), HuberRegressor()], "huberregressor_1"),
        ([ColumnTransformer([("s", SkScaler(), [0])]), StandardScaler(bounds=(0, 1))],
         "columntransformer_0__s"),
    ],
)  # fmt: skip
def test_non_private_models_and_nested_steps_are_named(steps, name) -> None:
    rng = np.random.default_rng(0)
    X, y = rng.uniform(0, 1, (50, 2)), rng.uniform(0, 1, 50)
    msgs = _leaks(make_private_pipeline(*steps, epsilon=1.0), X, y)
    assert msgs and name in msgs[0]


def test_a_column_selector_reading_dtypes_is_warned() -> None:
    """``make_column_selector(dtype_include=np.number)`` picks the columns from the data: one
    person's text cell turns a numeric column into ``object`` and drops it from the model."""
    import pandas as pd
    from sklearn.compose import make_column_selector

    rng = np.random.default_rng(0)
    d = pd.DataFrame({"a": rng.uniform(0, 1, 60), "b": rng.uniform(0, 1, 60)})
    y = (d["a"] > 0.5).to_numpy().astype(int)
    d2 = d.astype({"b": object})
    d2.iloc[3, 1] = "n/a"  # D': one person's cell is text

    def pipe():
        ct = ColumnTransformer(
            [("num", "passthrough", make_column_selector(dtype_include=np.number))]
        )
        lr = LogisticRegression(data_norm=2.0, classes=[0, 1], random_state=0)
        return make_private_pipeline(ct, lr, epsilon=1.0)

    p, p2 = pipe(), pipe()
    msgs, msgs2 = _leaks(p, d, y), _leaks(p2, d2, y)
    assert p[-1].n_features_in_ == 2 and p2[-1].n_features_in_ == 1  # the leak
    assert msgs and msgs == msgs2  # warned on both tables alike (configuration only)
    assert "columntransformer_0__num (columns chosen from the data)" in msgs[0]


def test_columns_listed_by_name_are_not_warned() -> None:
    import pandas as pd

    d = pd.DataFrame({"a": [0.2, 0.8] * 30, "b": [0.1, 0.3] * 30})
    y = np.array([0, 1] * 30)
    ct = ColumnTransformer([("num", "passthrough", ["a", "b"])])
    lr = LogisticRegression(data_norm=2.0, classes=[0, 1], random_state=0)
    assert _leaks(make_private_pipeline(ct, lr, epsilon=1.0), d, y) == []
