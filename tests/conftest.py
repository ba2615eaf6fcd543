"""Shared test fixtures: paths of the bundled datasets."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATASETS = ROOT / "datasets"


@pytest.fixture(scope="session")
def datasets_dir() -> Path:
    return DATASETS


@pytest.fixture(scope="session")
def insurance_csv() -> Path:
    return DATASETS / "insurance_ke" / "Insurance_data_ke.csv"


@pytest.fixture(scope="session")
def adult_data() -> Path:
    return DATASETS / "adult" / "adult.data"


@pytest.fixture(scope="session")
def adult_hierarchies() -> Path:
    return DATASETS / "adult_hierarchies"
