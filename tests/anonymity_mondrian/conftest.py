"""Fixtures of the Mondrian / MDAV / classification-utility tests: Adult and its hierarchies."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from veil.schema import Hierarchy

ADULT_COLUMNS = [
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
    "salary",
]
ADULT_QI = [
    "age",
    "education",
    "marital-status",
    "native-country",
    "race",
    "sex",
    "workclass",
    "occupation",
]
HIERARCHY_FILES = {
    "education": "education",
    "marital-status": "marital",
    "native-country": "country",
    "race": "race",
    "sex": "sex",
    "workclass": "workclass",
    "occupation": "occupation",
}


def load_adult(path: Path) -> pd.DataFrame:
    """The 30,162 complete rows of adult.data."""
    df = pd.read_csv(path, header=None, names=ADULT_COLUMNS, skipinitialspace=True, na_values="?")
    return df.dropna().reset_index(drop=True)


@pytest.fixture(scope="session")
def adult_full(adult_data: Path) -> pd.DataFrame:
    return load_adult(adult_data)


@pytest.fixture(scope="session")
def adult_small(adult_full: pd.DataFrame) -> pd.DataFrame:
    """A fixed 3,000-row sample with a non-default index (labels, not positions)."""
    sample = adult_full.sample(3000, random_state=7)
    sample.index = [f"r{i}" for i in sample.index]
    return sample


@pytest.fixture(scope="session")
def adult_hier(adult_hierarchies: Path) -> dict[str, Hierarchy]:
    return {
        col: Hierarchy.from_csv(adult_hierarchies / f"{name}.csv")
        for col, name in HIERARCHY_FILES.items()
    }
