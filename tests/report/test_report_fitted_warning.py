"""Data-fitted operators run before the privacy engine: what they publish can carry the values
of the records it then suppresses.  The run's report must say so (and only then)."""

from __future__ import annotations

import pandas as pd
import pytest

from veil.deid import apply

SECRET = 98765


def _run(op: dict, k: int, seed: int = 1, **privacy: str) -> tuple[pd.DataFrame, dict]:
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
        "privacy": {"k": k, "suppression_limit": 0.2, "algorithm": "optimal", **privacy},
    }
    return apply(df, policy, seed=seed)


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
        assert any((_run(op, k=2, seed=s)[0]["inc"] == SECRET).any() for s in range(20))


def test_no_engine_suppression_no_note() -> None:
    _, report = _run({"name": "resample"}, k=1)
    assert not [w for w in report["warnings"] if "privacy engine then" in w]
    _, report = _run({"name": "round", "base": 10}, k=2)  # fixed parameters: nothing fitted
    assert not [w for w in report["warnings"] if "privacy engine then" in w]


def test_masked_records_flag_the_fitted_operator_too() -> None:
    """With ``suppressed: mask`` the engine keeps the record but masks its quasi-identifiers;
    a percentile code fitted on that QI before still publishes its exact value (117)."""
    ages = [30, 31, 32, 33, 50, 51, 52, 53, 117]
    df = pd.DataFrame({"age": ages, "x": range(9)})
    bands = {a: "<40" if a < 40 else "40-99" if a < 100 else ">=100" for a in ages}
    hierarchy = {str(a): [bands[a], "*"] for a in ages}
    policy = {
        "version": 1,
        "default_role": "insensitive",
        "columns": {
            "age": {
                "role": "quasi",
                "hierarchy": hierarchy,
                "operator": {"name": "top_bottom_code", "top_percentile": 100},
            },
        },
        "privacy": {"k": 4, "suppression_limit": 0.2, "algorithm": "optimal", "suppressed": "mask"},
    }
    release, report = apply(df, policy, seed=1)
    masked = release["age"].astype(str) == "*"
    assert masked.sum() == 1 and len(release) == 9  # 117, alone in >=100
    assert report["actions"][0]["stats"]["top"] == 117  # the attack: its masked age, published
    notes = [w for w in report["warnings"] if "privacy engine then" in w]
    assert len(notes) == 1 and "'top_bottom_code'" in notes[0] and "including the 1" in notes[0]


def test_masked_records_other_columns_are_released_no_note() -> None:
    # masking hides the quasi-identifiers only: a code fitted on a released column says
    # nothing the release does not (the masked record's inc is in it)
    op = {"name": "top_bottom_code", "top_percentile": 100}
    release, report = _run(op, k=2, suppressed="mask")
    assert (release["g"].astype(str) == "*").sum() == 1 and SECRET in release["inc"].tolist()
    assert not [w for w in report["warnings"] if "privacy engine then" in w]
