"""Differencing attacks on the report's *before* mean and std of a column whose values an
operator changed for some records and left for others (top or bottom coding).

The release shows the records left as they were exactly; the exact before sum minus theirs is
the sum of the changed ones (one top-coded income exactly), and the before std gives a second
equation (two of them exactly).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.deid import apply
from veil.report import render_html

TOP = 200_000
SECRETS = [5_123_457.0, 912_345.0]


def _incomes(secrets: list[float]) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    inc = np.concatenate([rng.integers(20_000, 150_000, 98).astype(float), secrets])
    return pd.DataFrame({"income": inc, "age": rng.integers(20, 60, len(inc))})


def _recovered(mean: float, std: float, known: np.ndarray, n: int, hidden: int) -> list[float]:
    """The hidden values from the before mean and std over ``n`` records, ``known`` released
    as they were (one hidden: the rest of the sum; two: the sum and the sum of squares)."""
    s1 = mean * n - known.sum()
    if hidden == 1:
        return [s1]
    s2 = (std**2 + mean**2) * n - (known**2).sum()
    d = np.sqrt(max(2 * s2 - s1**2, 0.0))
    return [(s1 + d) / 2, (s1 - d) / 2]


@pytest.mark.parametrize("hidden", [1, 2])
def test_top_coded_values_are_not_given_by_the_before_figures(hidden: int) -> None:
    df = _incomes(SECRETS[:hidden])
    policy = {
        "columns": {
            "income": {"role": "sensitive", "operator": {"name": "top_bottom_code", "top": TOP}},
            "age": "insensitive",
        }
    }
    release, rep = apply(df, policy)
    loss = rep["information_loss"]["columns"]["income"]
    released = release["income"].to_numpy(dtype=float)
    assert int((released == TOP).sum()) == hidden
    if loss["mean_before"] is not None:  # the attack, as anyone holding release + report runs it
        guesses = _recovered(
            loss["mean_before"], loss["std_before"], released[released < TOP], len(df), hidden
        )
        for secret in SECRETS[:hidden]:
            assert min(abs(g - secret) for g in guesses) > 1000
    assert loss["before_withheld"] and loss["mean_shift"] is None
    assert "withheld" in render_html(rep)


def test_bottom_coding_too() -> None:
    df = _incomes([]).assign(income=lambda d: d["income"].where(d.index != 5, 1234.0))
    policy = {
        "columns": {
            "income": {
                "role": "sensitive",
                "operator": {"name": "top_bottom_code", "bottom": 10_000},
            },
            "age": "insensitive",
        }
    }
    release, rep = apply(df, policy)
    loss = rep["information_loss"]["columns"]["income"]
    assert loss["mean_before"] is None and loss["std_before"] is None and loss["before_withheld"]


def test_two_records_with_noise() -> None:
    """Two released records: mean and std give both input values, whatever changed them."""
    df = pd.DataFrame({"income": [41_000.0, 97_000.0], "age": [30, 40]})
    policy = {
        "columns": {
            "income": {"role": "sensitive", "operator": {"name": "noise", "scale": 500.0}},
            "age": "insensitive",
        }
    }
    _, rep = apply(df, policy)
    loss = rep["information_loss"]["columns"]["income"]
    assert loss["mean_before"] is None and loss["std_before"] is None


def test_untouched_and_fully_noised_columns_keep_their_before_figures() -> None:
    df = _incomes(SECRETS[:1])
    policy = {
        "columns": {
            "income": {"role": "sensitive", "operator": {"name": "noise", "scale": 500.0}},
            "age": "insensitive",
        }
    }
    _, rep = apply(df, policy)
    cols = rep["information_loss"]["columns"]
    assert cols["age"]["mean_before"] == pytest.approx(df["age"].mean())
    assert cols["income"]["mean_before"] == pytest.approx(df["income"].mean())
    assert "before_withheld" not in cols["age"] and "before_withheld" not in cols["income"]


def test_masked_mode_quasi_identifier_top_coded() -> None:
    """``suppressed: mask``: the quasi-identifiers' before figures are recomputed over the
    records that are not masked; one of those was top-coded (133 -> 100), the others at 100
    were 100 already: the before mean gave 133."""
    rng = np.random.default_rng(3)
    n = 400
    df = pd.DataFrame(
        {
            "age": rng.choice([30, 40, 50, 60], n),
            "sex": rng.choice(["F", "M"], n),
            "ill": rng.choice(["flu", "cold", "asthma"], n),
        }
    )
    df.loc[0, ["age", "sex"]] = [117, "F"]  # alone at (100, F) once coded: masked
    df.loc[1:4, ["age", "sex"]] = [100, "M"]
    df.loc[5, ["age", "sex"]] = [133, "M"]  # coded to 100, released (class of 5)
    ages = [30, 40, 50, 60, 100]
    policy = {
        "columns": {
            "age": {
                "role": "quasi",
                "hierarchy": {str(a): ["<200", "*"] for a in ages},
                "operator": {"name": "top_bottom_code", "top": 100},
            },
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
    release, rep = apply(df, policy)
    public = pd.to_numeric(release["age"], errors="coerce")
    assert public.isna().sum() == 1 and public.loc[5] == 100
    age = rep["information_loss"]["columns"]["age"]
    if age["mean_before"] is not None:
        guess = age["mean_before"] * int(public.notna().sum()) - public.drop(index=5).sum()
        assert abs(guess - 133) > 1
    assert age["before_withheld"]


@pytest.mark.parametrize("as_text", [False, True])
def test_input_histogram_does_not_show_the_values_beyond_the_top_code(as_text: bool) -> None:
    """The input side of the report's distribution drew the incomes above the top code in bins
    of at least k records, the (k + 1)-th largest exactly as an edge, and the release side was
    drawn on those edges: the report showed what top coding hides."""
    rng = np.random.default_rng(1)
    above = rng.integers(TOP + 1, 900_000, 30).astype(float)
    inc = np.concatenate([rng.integers(20_000, 150_000, 200).astype(float), above])
    df = pd.DataFrame({"income": inc, "age": rng.integers(20, 60, len(inc))})
    if as_text:
        df["income"] = df["income"].map(lambda v: f"{v:.0f}").astype(object)
    policy = {
        "columns": {
            "income": {"role": "sensitive", "operator": {"name": "top_bottom_code", "top": TOP}},
            "age": "insensitive",
        }
    }
    _, rep = apply(df, policy)
    dist = rep["distributions"]["income"]
    for side in ("original", "release"):
        d = dist[side]
        if d["kind"] == "numeric":
            assert max(d["edges"]) <= TOP
        else:
            assert all(
                not lab.replace(".", "").isdigit() or float(lab) <= TOP for lab in d["labels"]
            )
    html = render_html(rep)
    for v in above:
        assert f"{v:.0f}" not in html and f"{v:,.0f}" not in html
