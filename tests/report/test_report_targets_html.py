"""The HTML targets table says 'withheld' only for a value that was withheld, not for a target
that has no value (its column is not in the release)."""

from __future__ import annotations

import re

import pandas as pd

from veil.deid import apply
from veil.report import render_html


def _cells(html: str, target: str) -> list[str]:
    row = re.search(rf"<tr><td>{target}</td>(.*?)</tr>", html, re.S)
    assert row is not None
    return re.findall(r"<td[^>]*>(.*?)</td>", row.group(1), re.S)


def test_missing_column_is_not_called_withheld() -> None:
    df = pd.DataFrame({"g": ["A"] * 4 + ["B"] * 4, "ill": list("abababab")})
    policy = {
        "version": 1,
        "default_role": "insensitive",
        "columns": {
            "g": {"role": "quasi"},
            "ill": {"role": "sensitive", "operator": {"name": "drop"}},
        },
        "privacy": {"k": 2, "t": {"column": "ill", "t": 0.5}, "l": {"column": "ill", "l": 2}},
    }
    _, report = apply(df, policy, seed=1)
    html = render_html(report)
    for name in ("l", "t"):
        assert report["targets"][name]["achieved"] is None
        achieved, verdict = _cells(html, name)[1:]
        assert "withheld" not in achieved and "not in the release" in verdict


def test_withheld_t_reads_withheld() -> None:
    # C, a class of one, is dropped by the engine: t is measured against a reference with it
    df = pd.DataFrame({"g": ["A"] * 4 + ["B"] * 4 + ["C"], "ill": list("ababababa")})
    policy = {
        "version": 1,
        "default_role": "insensitive",
        "columns": {
            "g": {"role": "quasi", "hierarchy": {"A": ["*"], "B": ["*"], "C": ["*"]}},
            "ill": {"role": "sensitive"},
        },
        "privacy": {
            "k": 2,
            "t": {"column": "ill", "t": 0.9},
            "suppression_limit": 0.2,
            "algorithm": "optimal",
        },
    }
    release, report = apply(df, policy, seed=1)
    assert len(release) == 8 and report["targets"]["t"]["achieved"] is None
    achieved, verdict = _cells(render_html(report), "t")[1:]
    assert "withheld" in achieved and "met" in verdict
