from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from veil.errors import InsecureRandomWarning

ADULT_COLS = [
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
]
NUMERIC = ["age", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
LO = np.array([17.0, 1.0, 0.0, 0.0, 1.0])
HI = np.array([90.0, 16.0, 100000.0, 4356.0, 99.0])


@pytest.fixture(autouse=True)
def _quiet_seeded_rng():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InsecureRandomWarning)
        yield


@pytest.fixture(scope="session")
def adult_xy(adult_data):
    """Adult numeric features scaled to [0, 1] with public bounds, and the income label."""
    df = pd.read_csv(adult_data, header=None, names=ADULT_COLS, skipinitialspace=True)
    X = (df[NUMERIC].to_numpy(float) - LO) / (HI - LO)
    y = df["income"].str.startswith(">50K").to_numpy().astype(int)
    return X, y


def _assert_ratio_within_eps(a: np.ndarray, b: np.ndarray, eps: float) -> None:
    """Monte Carlo audit of two equal-size samples of a release on neighbouring datasets.

    The outputs are cut into 8 buckets at their pooled quantiles; for every bucket the
    Clopper-Pearson lower bound of its probability under one dataset must stay below e^eps
    times the upper bound under the other (alpha = 1e-6, Bonferroni over buckets and both
    directions).  The two samples must also differ (KS p < 1e-3), so the audit has power.
    """
    from scipy import stats

    runs = len(a)
    assert len(b) == runs
    edges = np.quantile(np.concatenate([a, b]), np.linspace(0, 1, 9))
    edges[0], edges[-1] = -np.inf, np.inf
    ca, _ = np.histogram(a, edges)
    cb, _ = np.histogram(b, edges)
    alpha = 1e-6 / (2 * len(ca))
    for x, z in ((ca, cb), (cb, ca)):
        lo = np.nan_to_num(stats.beta.ppf(alpha, x, runs - x + 1))  # lower bound, P(bucket | D)
        hi = stats.beta.ppf(1 - alpha, z + 1, runs - z)  # upper bound under the other
        assert np.all(lo <= np.exp(eps) * hi)
    assert stats.ks_2samp(a, b).pvalue < 1e-3  # the releases do differ: the audit has power


@pytest.fixture
def assert_ratio_within_eps():
    """The bucketed Clopper-Pearson privacy-loss audit (:func:`_assert_ratio_within_eps`)."""
    return _assert_ratio_within_eps
