"""Differencing attacks on the report: with the public release, its figures must not give the
values of the records the release hides (suppressed, dropped or masked)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from veil.deid import apply
from veil.report import render_html

SECRET_AGE = 117


def _masked_outlier_table() -> tuple[pd.DataFrame, dict]:
    """Ages from a few common values, and one 117-year-old alone in its class: the engine
    keeps age at level 0 and suppresses that record (1 of 400, within the 1 % limit)."""
    rng = np.random.default_rng(3)
    n = 400
    df = pd.DataFrame(
        {
            "age": rng.choice([30, 40, 50, 60], n),
            "sex": rng.choice(["F", "M"], n),
            "ill": rng.choice(["flu", "cold", "asthma"], n),
        }
    )
    df.loc[0, ["age", "sex"]] = [SECRET_AGE, "F"]
    ages = [30, 40, 50, 60, SECRET_AGE]
    policy = {
        "columns": {
            "age": {"role": "quasi", "hierarchy": {str(a): ["<200", "*"] for a in ages}},
            "sex": {"role": "quasi", "hierarchy": {"F": ["*"], "M": ["*"]}},
            "ill": "sensitive",
        },
        "privacy": {
            "k": 5,
            "suppression_limit": 0.01,
            "algorithm": "optimal",
            "suppressed": "mask",
        },
    }
    return df, policy


def test_masked_record_quasi_identifier_not_recoverable_from_information_loss() -> None:
    """With ``suppressed: mask`` the masked record's age is ``*`` in the release while the
    others' ages are released as they are: a before mean (or std) that counted its input age
    gives it back as mean_before x records - sum of the released ages."""
    df, policy = _masked_outlier_table()
    release, rep = apply(df, policy)
    assert rep["anonymity"]["suppressed"] == 1
    public = pd.to_numeric(release["age"], errors="coerce")
    assert public.isna().sum() == 1 and set(public.dropna()) <= {30, 40, 50, 60}
    age = rep["information_loss"]["columns"]["age"]
    n_public = int(public.notna().sum())
    # the attacker's candidates for the hidden age, from the mean over n or n + 1 records
    for n in (n_public, n_public + 1, len(release)):
        guess = age["mean_before"] * n - public.sum()
        assert abs(guess - SECRET_AGE) > 1
    # the before figures describe the released, unmasked ages: nothing beyond them
    assert age["distinct_before"] == public.nunique()
    assert age["std_before"] == pytest.approx(float(np.std(public.dropna())))
    assert str(SECRET_AGE) not in json.dumps(rep["distributions"]) + render_html(rep)
