"""Differencing attacks on the report: with the public release, its figures must not give the
values of the records the release hides (suppressed, dropped or masked)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from _leaks import numbers_in

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
    assert SECRET_AGE not in numbers_in(json.dumps(rep["distributions"]) + render_html(rep))


SECRET_INCOME = 98765.43


def _engine_drops_one(income_op: dict) -> tuple[pd.DataFrame, dict]:
    """One record alone in its class (zip 999) with an extreme income; the engine drops it."""
    rng = np.random.default_rng(3)
    n = 400
    df = pd.DataFrame(
        {
            "sex": rng.choice(["F", "M"], n),
            "zip": rng.choice(["100", "101"], n),
            "income": rng.normal(3000, 500, n).round(2),
        }
    )
    df.loc[0, ["sex", "zip", "income"]] = ["F", "999", SECRET_INCOME]
    policy = {
        "columns": {
            "sex": {"role": "quasi", "hierarchy": {"F": ["*"], "M": ["*"]}},
            "zip": {"role": "quasi", "hierarchy": {z: ["*"] for z in ("100", "101", "999")}},
            "income": {"role": "insensitive", "operator": income_op},
        },
        "privacy": {"k": 5, "suppression_limit": 0.01, "algorithm": "optimal"},
    }
    return df, policy


def _candidates(rep: dict, release: pd.DataFrame) -> list[float]:
    """What an attacker gets for the dropped record's income from the operator's published
    aggregate (over the n + 1 records it was given) and the report's before mean / std (over
    the n released ones)."""
    n = len(release)
    loss = rep["information_loss"]["columns"]["income"]
    m, sd = loss["mean_before"], loss["std_before"]
    stats = next(a["stats"] for a in rep["actions"] if a["column"] == "income")
    if m is None:
        return []
    if "params" in stats:  # a fitted normal: loc is the mean of the n + 1 records
        return [stats["params"]["loc"] * (n + 1) - m * n]
    if "threshold" in stats:  # a mean split: the threshold is that mean (also in the labels)
        return [stats["threshold"] * (n + 1) - m * n]
    sd_all = stats["absolute_scale"] / 0.1  # relative noise: 0.1 x the std of n + 1 records
    if sd is None:
        return []
    d = np.sqrt(max(((n + 1) * sd_all**2 - n * sd**2) * (n + 1) / n, 0.0))
    return [m + d, m - d]


@pytest.mark.parametrize(
    "op",
    [
        {"name": "distribution", "candidates": ["norm"]},
        {"name": "noise", "scale": 0.1, "relative": True},
        {"name": "generalize", "split": "mean"},
    ],
    ids=["distribution", "relative-noise", "mean-split"],
)
def test_operator_aggregates_and_before_figures_do_not_give_a_dropped_record(op: dict) -> None:
    """An operator that publishes an aggregate of its column (fitted parameters, a relative
    noise scale, a mean split threshold) ran on the records before the engine dropped one;
    the report's before mean and std are over the released records: together they would give
    the dropped record's exact income."""
    df, policy = _engine_drops_one(op)
    release, rep = apply(df, policy, seed=1)
    assert rep["suppression"]["records_removed_by_privacy"] == 1
    assert 0 not in release.index
    for guess in _candidates(rep, release):
        assert abs(guess - SECRET_INCOME) > 1000
    assert rep["information_loss"]["columns"]["income"]["before_withheld"]
    assert "withheld" in render_html(rep)


@pytest.mark.parametrize(
    "op",
    [{"name": "noise", "scale": 0.1, "relative": True}, {"name": "generalize", "split": "mean"}],
    ids=["relative-noise", "mean-split"],
)
def test_operator_aggregates_keep_before_figures_when_nothing_is_removed_later(op: dict) -> None:
    """With no record removed after the operator, its aggregate and the before figures cover
    the same records: the before mean and std are given (they are then equal to the fit),
    unless the released column is no longer numeric (the mean split's labels): with no after
    figure to compare with, hidden values get no before moments (see test_report.py)."""
    df, policy = _engine_drops_one(op)
    df.loc[0, "zip"] = "100"  # no longer alone: nothing to suppress
    release, rep = apply(df, policy, seed=1)
    assert len(release) == len(df)
    loss = rep["information_loss"]["columns"]["income"]
    if op["name"] == "noise":
        assert loss["mean_before"] == pytest.approx(df["income"].mean())
    else:
        assert loss["mean_after"] is None and loss["mean_before"] is None
    assert "before_withheld" not in loss


def test_suppress_operator_reset_index_keeps_the_report_aligned() -> None:
    """A ``suppress`` operator with ``reset_index`` renumbered the rows before the report
    matched them to the input by label: the before figures then covered the first m input
    rows, the removed record included, and before - release gave its income."""
    rng = np.random.default_rng(3)
    n = 400
    df = pd.DataFrame({"sex": rng.choice(["F", "M"], n), "income": rng.integers(1000, 5000, n)})
    df.loc[5, "income"] = 98765
    op = {"name": "suppress", "condition": "income > 50000", "reset_index": True}
    policy = {"columns": {"sex": {"role": "quasi", "operator": op}, "income": "insensitive"}}
    release, rep = apply(df, policy)
    assert release.index.equals(pd.RangeIndex(n - 1))  # renumbered, as asked
    loss = rep["information_loss"]["columns"]["income"]
    hidden = loss["mean_before"] * len(release) - release["income"].sum()
    assert abs(hidden + release["income"].iloc[-1] - 98765) > 1000
    assert abs(hidden) < 1e-6  # the before figures are those of the released records
    assert loss["changed_share"] == 0.0  # no cell was changed


@pytest.mark.parametrize("n", [1, 3])
def test_empty_release_report_describes_no_removed_record(n: int) -> None:
    """When every record is removed, the report's before figures must not fall back to the
    whole input: with one record they would be its exact income and diagnosis."""
    df = pd.DataFrame(
        {
            "sex": ["F", "M", "F"][:n],
            "ill": ["RAREDISEASE", "flu", "cold"][:n],
            "income": [98765, 2345, 1234][:n],
        }
    )
    policy = {
        "columns": {"sex": "quasi", "ill": "sensitive", "income": "insensitive"},
        "suppress": ["income > 0"],
    }
    release, rep = apply(df, policy)
    assert len(release) == 0 and rep["information_loss"]["records_removed"] == n
    income = rep["information_loss"]["columns"]["income"]
    assert income["mean_before"] is None and income["std_before"] is None
    assert income["distinct_before"] == 0
    for col in ("sex", "ill"):
        assert sum(rep["distributions"][col]["original"]["counts"]) == 0
    text = json.dumps(rep) + render_html(rep)
    assert 98765 not in numbers_in(text) and "RAREDISEASE" not in text


@pytest.mark.parametrize(
    "op",
    ["drop", "redact", {"name": "generalize", "bins": [0, 100000, 200000]}],
    ids=["drop", "redact", "bins"],
)
def test_hidden_column_gets_no_before_moments(op: object) -> None:
    """Two released records and a dropped (or redacted, or binned) salary: the before mean and
    std (ddof = 0) were m -+ sd = both hidden salaries, exactly, in report.json."""
    df = pd.DataFrame({"name": ["a", "b", "c"], "salary": [51234.0, 98765.0, 70001.0]})
    policy = {
        "columns": {"name": "insensitive", "salary": {"role": "sensitive", "operator": op}},
        "suppress": ["name == 'c'"],
    }
    release, rep = apply(df, policy)
    assert len(release) == 2
    loss = rep["information_loss"]["columns"]["salary"]
    assert loss["mean_before"] is None and loss["std_before"] is None
    shown = numbers_in(json.dumps(rep) + render_html(rep))
    assert not {51234.0, 98765.0, 74999.5, 23765.5} & shown  # values, their mean, their std


def test_masked_mode_binned_quasi_identifier_gets_no_before_moments() -> None:
    """``suppressed: mask`` recomputes the quasi-identifiers' before figures over the unmasked
    records; a binned age (released as labels) must still get no before mean or std."""
    rng = np.random.default_rng(7)
    n = 200
    df = pd.DataFrame(
        {"age": rng.integers(18, 90, n), "zip": rng.choice(["1", "2", "3"], n)}
        | {"ill": rng.choice(list("abc"), n)}
    )
    df.loc[0, ["age", "zip"]] = [117, "9"]  # alone in its class: masked
    labels = ["[0, 40)", "[40, 60)", "[60, 120]"]
    policy = {
        "columns": {
            "age": {
                "role": "quasi",
                "operator": {"name": "generalize", "bins": [0, 40, 60, 120]},
                "hierarchy": {lab: ["*"] for lab in labels},
            },
            "zip": {"role": "quasi", "hierarchy": {z: ["*"] for z in "1239"}},
            "ill": "sensitive",
        },
        "privacy": {
            "k": 5,
            "suppression_limit": 0.05,
            "algorithm": "optimal",
            "suppressed": "mask",
        },
    }
    release, rep = apply(df, policy)
    assert rep["anonymity"]["suppressed"] >= 1
    age = rep["information_loss"]["columns"]["age"]
    assert age["mean_before"] is None and age["std_before"] is None
