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
