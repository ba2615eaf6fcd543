"""The "What was done to each column" table names what the k-anonymity engine did.

A quasi-identifier the engine generalized (optimal search) or recoded (Mondrian) used to read
"kept as is" while every one of its cells had changed; policy bin edges were printed twice.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from veil.deid import apply
from veil.report import render_html


def _actions(html: str, column: str) -> str:
    table = html[html.index("What was done to each column") :]
    row = re.search(rf"<tr><td>{re.escape(column)}</td>(.*?)</tr>", table, re.S)
    assert row is not None, column
    return re.findall(r"<td[^>]*>(.*?)</td>", row.group(1), re.S)[1]


def _table(seed: int = 0, n: int = 300) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(18, 90, n),
            "zip": rng.choice(["1001", "1002", "2001", "2002"], n),
            "sex": rng.choice(["F", "M"], n),
            "ill": rng.choice(["a", "b", "c"], n),
        }
    )


def _hier() -> dict[str, dict[str, list[str]]]:
    ages = {str(a): [f"{a // 10 * 10}-{a // 10 * 10 + 9}", "*"] for a in range(18, 90)}
    zips = {z: [z[:2] + "**", "*"] for z in ("1001", "1002", "2001", "2002")}
    return {"age": ages, "zip": zips, "sex": {"F": ["*"], "M": ["*"]}}


def test_optimal_search_levels_are_named_and_level_zero_is_kept() -> None:
    df = _table()
    policy = {
        "columns": {
            "age": {"role": "quasi", "hierarchy": _hier()["age"]},
            "zip": {"role": "quasi", "hierarchy": _hier()["zip"]},
            "sex": {"role": "quasi", "hierarchy": _hier()["sex"]},
            "ill": "sensitive",
        },
        "privacy": {"k": 5, "algorithm": "optimal"},
    }
    release, report = apply(df, policy, seed=1)
    node = report["anonymity"]["node"]
    html = render_html(report)
    for col, level in node.items():
        text = _actions(html, col)
        if level:
            assert f"k-anonymity engine: generalized to level {level} of its hierarchy" in text
            assert "kept as is" not in text
        else:
            assert "kept as is" in text and "engine" not in text
    assert any(node.values())  # the test exercises a generalized column
    generalized = [c for c, lv in node.items() if lv]
    assert all(
        (release[c].astype(str) != df.loc[release.index, c].astype(str)).any() for c in generalized
    )
    assert "kept as is" in _actions(html, "ill")


def test_mondrian_recoding_is_named() -> None:
    df = _table(2)
    policy = {
        "columns": {"age": "quasi", "sex": "quasi", "zip": "insensitive", "ill": "sensitive"},
        "privacy": {"k": 10, "algorithm": "mondrian"},
    }
    _, report = apply(df, policy, seed=1)
    html = render_html(report)
    for col in ("age", "sex"):
        assert "Mondrian local recoding" in _actions(html, col)
    assert "kept as is" in _actions(html, "zip")


def test_policy_bin_edges_are_printed_once() -> None:
    df = _table(3)
    edges = [0, 30, 60, 120]
    policy = {
        "columns": {
            "age": {"role": "quasi", "operator": {"name": "generalize", "bins": edges}},
            "sex": "quasi",
        },
        "default_role": "insensitive",
        "privacy": {"k": 2},
    }
    _, report = apply(df, policy, seed=1)
    text = _actions(render_html(report), "age")
    assert text.count("[0.0, 30.0, 60.0, 120.0]") == 1
    assert "generalized into 3 bins" in text


def test_operator_figures_leave_out_settings_not_given() -> None:
    """Top coding alone: the bottom setting is not given, and the HTML said 'bottom: None'."""
    df = _table(4)
    policy = {
        "columns": {
            "age": {"role": "insensitive", "operator": {"name": "top_bottom_code", "top": 70}}
        },
        "default_role": "insensitive",
    }
    _, report = apply(df, policy, seed=1)
    stats = report["columns"]["age"]["operators"][0]["stats"]
    assert stats["bottom"] is None and stats["top_coded"] == int((df["age"] > 70).sum())
    text = _actions(render_html(report), "age")
    assert "None" not in text and "bottom:" not in text
    assert f"top_coded: {stats['top_coded']}" in text


def test_engine_line_says_when_a_single_value_is_left() -> None:
    df = _table(5)
    h = _hier()
    policy = {
        "columns": {c: {"role": "quasi", "hierarchy": h[c]} for c in ("age", "zip", "sex")}
        | {"ill": "sensitive"},
        "privacy": {"k": 100, "algorithm": "optimal", "suppression_limit": 0.0},
    }
    release, report = apply(df, policy, seed=1)
    html = render_html(report)
    single = {c for c in ("age", "zip", "sex") if release[c].nunique() == 1}
    assert single and single != {"age", "zip", "sex"}  # both cases exercised
    for col in ("age", "zip", "sex"):
        assert ("a single value left in the release" in _actions(html, col)) == (col in single)


def test_more_distinct_values_after_reads_as_none_not_a_negative_reduction() -> None:
    """A column that gains a value ('*' added by masking some records, the others kept) had a
    'distinct reduction' of -50%: it reads 'none (1 more)'."""
    df = _table(4)
    policy = {"columns": {"age": "quasi", "sex": "quasi"}, "default_role": "insensitive"}
    _, report = apply(df, policy, seed=1)
    cols = report["information_loss"]["columns"]
    cols["zip"].update(distinct_before=2, distinct_after=3, distinct_reduction=-0.5)
    cols["sex"].update(distinct_before=4, distinct_after=2, distinct_reduction=0.5)
    table = render_html(report)
    table = table[table.index("<h2>Information loss") :]
    zip_row = re.search(r"<tr><td>zip</td>(.*?)</tr>", table, re.S).group(1)
    sex_row = re.search(r"<tr><td>sex</td>(.*?)</tr>", table, re.S).group(1)
    assert "none (1 more)" in zip_row and "-50" not in zip_row
    assert "50.0%" in sex_row
