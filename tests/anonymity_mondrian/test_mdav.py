"""MDAV microaggregation: group sizes, preserved means, loss, untouched columns."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veil.anonymity._config import AnonymizationConfig
from veil.anonymity._mdav import mdav, mdav_anonymize, mdav_groups
from veil.anonymity._models import DistinctLDiversity
from veil.errors import ConfigError, InputError

NUM = ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"]


def check_mdav(df: pd.DataFrame, res, cols: list[str], k: int) -> None:
    rel = res.data
    assert rel.index.equals(df.index)
    others = [c for c in df.columns if c not in cols]
    pd.testing.assert_frame_equal(rel[others], df[others])
    # Independent: rows sharing a published tuple form classes of >= k.
    assert rel.groupby(cols).size().min() >= k
    sizes = np.bincount(res.partitions)
    assert sizes.min() >= k
    # MDAV's fixed-size groups: all k except possibly one group of k .. 2k - 1.
    if len(df) >= k:
        assert (sizes > k).sum() <= 1 and sizes.max() <= 2 * k - 1 or len(df) < 2 * k
    # Every value is its group's mean, so column means are preserved.
    np.testing.assert_allclose(rel[cols].mean(), df[cols].mean(), rtol=1e-9, atol=1e-9)
    means = df[cols].groupby(res.partitions).transform("mean")
    means.index = df.index
    np.testing.assert_allclose(rel[cols].to_numpy(), means.to_numpy(), rtol=1e-12)


@pytest.mark.parametrize("k", [2, 5, 10])
def test_adult_sample(adult_small, k):
    res = mdav(adult_small, NUM, k)
    check_mdav(adult_small, res, NUM, k)
    assert 0 < res.utility["info_loss"] < 1
    assert res.extra["class_sizes"]["min"] >= k
    assert res.summary()["utility"]["info_loss"] == res.utility["info_loss"]


def test_sse_sst_by_hand():
    df = pd.DataFrame({"x": [0.0, 2.0, 10.0, 12.0]})
    res = mdav(df, ["x"], 2)
    assert res.data["x"].tolist() == [1.0, 1.0, 11.0, 11.0]
    z = (df["x"] - df["x"].mean()) / df["x"].std(ddof=0)
    g = z.groupby(res.partitions).transform("mean")
    assert res.utility["sse"] == pytest.approx(((z - g) ** 2).sum())
    assert res.utility["sst"] == pytest.approx(4.0)  # standardized: sum of squares = n
    assert res.utility["info_loss"] == pytest.approx(res.utility["sse"] / 4.0)


def test_groups_are_compact():
    """Two well separated clusters of k points each are recovered exactly."""
    rng = np.random.default_rng(0)
    a = rng.normal(0, 0.1, size=(5, 2))
    b = rng.normal(100, 0.1, size=(5, 2))
    g = mdav_groups(np.vstack([a, b]), 5)
    assert len(set(g[:5])) == 1 and len(set(g[5:])) == 1 and g[0] != g[5]


def test_larger_k_loses_more(adult_small):
    losses = [mdav(adult_small, NUM, k).utility["info_loss"] for k in (2, 5, 20)]
    assert losses[0] < losses[1] < losses[2]


def test_deterministic_and_input_untouched(adult_small):
    before = adult_small.copy(deep=True)
    a = mdav(adult_small, NUM[:3], 4)
    b = mdav(adult_small, NUM[:3], 4)
    pd.testing.assert_frame_equal(a.data, b.data)
    pd.testing.assert_frame_equal(adult_small, before)


def test_dispatch_entry_point(adult_small):
    cfg = AnonymizationConfig(["age", "hours-per-week"], k=3, algorithm="mdav")
    res = mdav_anonymize(adult_small, cfg)
    check_mdav(adult_small, res, ["age", "hours-per-week"], 3)
    assert res.algorithm == "mdav"
    assert res.risk_after["prosecutor"]["highest"] <= 1 / 3
    assert res.risk_before["classes"] == len(adult_small.groupby(["age", "hours-per-week"]))
    bad = AnonymizationConfig(
        ["age"], k=3, models=[DistinctLDiversity("salary", 2)], algorithm="mdav"
    )
    with pytest.raises(ConfigError, match="k-anonymity only"):
        mdav_anonymize(adult_small, bad)


def test_errors(adult_small):
    with pytest.raises(ConfigError):
        mdav(adult_small, NUM, 0)
    with pytest.raises(ConfigError, match="larger than the table"):
        mdav(adult_small, NUM, 10**6)
    with pytest.raises(InputError, match="not numeric"):
        mdav(adult_small, ["age", "race"], 2)
    with pytest.raises(ConfigError, match="not in the table"):
        mdav(adult_small, ["nope"], 2)
    with pytest.raises(ConfigError):
        mdav(adult_small, [], 2)
    bad = adult_small[["age"]].astype(float)
    bad.iloc[3, 0] = np.nan
    with pytest.raises(InputError, match="missing"):
        mdav(bad, ["age"], 2)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.lists(
        st.tuples(st.integers(-50, 50), st.sampled_from([0.0, 1.5, 3.0, 1e6])),
        min_size=1,
        max_size=80,
    ),
    k=st.integers(1, 10),
)
def test_property(data, k):
    df = pd.DataFrame(data, columns=["a", "b"])
    df["tag"] = [f"t{i}" for i in range(len(df))]
    k = min(k, len(df))
    res = mdav(df, ["a", "b"], k)
    check_mdav(df, res, ["a", "b"], k)
