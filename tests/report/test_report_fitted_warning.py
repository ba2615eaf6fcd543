"""Data-fitted operators run before the privacy engine: what they publish can carry the values
of the records it then suppresses.  The run's report must say so (and only then)."""

from __future__ import annotations

import pandas as pd
import pytest

from veil.deid import apply

SECRET = 98765


def _run(op: dict, k: int) -> tuple[pd.DataFrame, dict]:
    df = pd.DataFrame(
        {"g": ["A"] * 4 + ["B"] * 4 + ["C"], "inc": [10, 20, 30, 40, 15, 25, 35, 45, SECRET]}
    )
    policy = {
        "version": 1,
        "default_role": "insensitive",
        "columns": {
            "g": {"role": "quasi", "hierarchy": {"A": ["*"], "B": ["*"], "C": ["*"]}},
            "inc": {"role": "insensitive", "operator": op},
        },
        "privacy": {"k": k, "suppression_limit": 0.2, "algorithm": "optimal"},
    }
    return apply(df, policy, seed=1)


@pytest.mark.parametrize(
    "op",
    [
        {"name": "resample"},
        {"name": "top_bottom_code", "top_percentile": 100},
        {"name": "generalize", "bins": 3},
    ],
    ids=["resample", "percentile", "bin-count"],
)
def test_fitted_operator_before_engine_suppression_is_flagged(op: dict) -> None:
    release, report = _run(op, k=2)
    assert len(release) == 8  # C, a class of one, was suppressed
    notes = [w for w in report["warnings"] if "privacy engine then" in w]
    assert len(notes) == 1 and f"'{op['name']}'" in notes[0] and "including the 1" in notes[0]
    if op["name"] == "resample":
        # the attack the note is about: across seeds, the suppressed record's value can be
        # copied into the release by the resampling draw
        assert any((apply_seed(s) == SECRET).any() for s in range(20))


def apply_seed(seed: int) -> pd.Series:
    df = pd.DataFrame(
        {"g": ["A"] * 4 + ["B"] * 4 + ["C"], "inc": [10, 20, 30, 40, 15, 25, 35, 45, SECRET]}
    )
    policy = {
        "version": 1,
        "default_role": "insensitive",
        "columns": {
            "g": {"role": "quasi", "hierarchy": {"A": ["*"], "B": ["*"], "C": ["*"]}},
            "inc": {"role": "insensitive", "operator": {"name": "resample"}},
        },
        "privacy": {"k": 2, "suppression_limit": 0.2, "algorithm": "optimal"},
    }
    return apply(df, policy, seed=seed)[0]["inc"]


def test_no_engine_suppression_no_note() -> None:
    _, report = _run({"name": "resample"}, k=1)
    assert not [w for w in report["warnings"] if "privacy engine then" in w]
    _, report = _run({"name": "round", "base": 10}, k=2)  # fixed parameters: nothing fitted
    assert not [w for w in report["warnings"] if "privacy engine then" in w]
