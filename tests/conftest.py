"""Shared test fixtures: paths of the bundled datasets; a fresh default privacy accountant."""

from __future__ import annotations

import sys
from collections.abc import Iterator
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


@pytest.fixture(autouse=True)
def _fresh_default_accountant(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test starts without a default ``BudgetAccountant``, as a new process does.

    Every DP call without ``accountant=`` records its spend on the process's default
    accountant, and each spend copies the list of earlier ones: on an xdist worker the spends
    of all the tests it ran before piled up (hundreds of thousands), so a test's duration
    depended on its worker and on the order (an audit of 40,000 draws took 26 s alone and
    140 s in the suite), and a test reading the default's spends would see other tests'.
    veil.dp is not imported here (tests check what importing veil loads).
    """
    accountant = sys.modules.get("veil.dp._accountant")
    if accountant is not None:
        monkeypatch.setattr(accountant.BudgetAccountant, "_default", None)
    yield
