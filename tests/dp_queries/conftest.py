"""Fixtures of the DP-query tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytestmark = pytest.mark.filterwarnings("ignore::veil.errors.InsecureRandomWarning")


@pytest.fixture()
def people() -> pd.DataFrame:
    """600 rows of 150 persons over 4 counties, ages with missing values, odd index."""
    rng = np.random.default_rng(12345)
    n = 600
    df = pd.DataFrame(
        {
            "pid": rng.integers(0, 150, n),
            "county": rng.choice(["north", "south", "east", "west"], n),
            "sex": rng.choice(["F", "M"], n),
            "age": rng.integers(10, 95, n).astype(float),
            "income": rng.normal(40_000, 15_000, n),
        },
        index=np.arange(n) * 3 + 1000,
    )
    df.loc[df.index[::11], "age"] = np.nan
    return df


@pytest.fixture()
def table(tmp_path: Path) -> Path:
    """A small CSV of 8 rows, 7 persons (pid 1 has two rows), for the CLI tests."""
    df = pd.DataFrame(
        {
            "pid": [1, 1, 2, 3, 4, 5, 6, 7],
            "county": ["a", "a", "b", "a", "b", "a", "b", "a"],
            "age": [25, 33, 47, 51, 19, 70, 38, 44],
            "sex": ["F", "F", "F", "F", "M", "F", "F", "M"],
        }
    )
    path = tmp_path / "people.csv"
    df.to_csv(path, index=False)
    return path
