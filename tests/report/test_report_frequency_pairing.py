"""The report must not pair a replaced column's input values with its released replacements.

A pseudonymized (tokenized, faked, masked) sensitive column keeps its frequencies.  The
report's *original* side named the input values with their counts (``flu 30, asthma 20, HIV
12, cancer 7``) next to the release side's counts per pseudonym (``057e... 30, ..., 338a...
12``): matching the counts gave the mapping, so whoever holds the report and the release read
every record's diagnosis without the key.
"""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from veil.deid import apply
from veil.report import render_html

KEY = bytes(range(1, 33))
DIAG = ["HIV"] * 12 + ["flu"] * 30 + ["cancer"] * 7 + ["asthma"] * 20


@pytest.mark.parametrize(
    "op",
    [
        "pseudonymize",
        "tokenize",
        {"name": "fake", "kind": "job"},
        {"name": "mask", "kind": "partial", "keep_first": 1},
    ],
)
def test_replaced_column_input_values_not_paired_with_release(
    op: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VEIL_KEY", KEY.hex())
    df = pd.DataFrame({"age": [30 + i % 5 for i in range(len(DIAG))], "diag": DIAG})
    release, rep = apply(
        df, {"columns": {"age": "quasi", "diag": {"role": "sensitive", "operator": op}}}
    )
    # the attack: the release's own frequencies (public) against the report's input side
    counts = release["diag"].value_counts()
    d = rep["distributions"]["diag"]
    original = d["original"]
    mapping = {}
    if original is not None and original.get("kind") == "categorical":
        for label, c in zip(original["labels"], original["counts"], strict=True):
            hits = counts.index[counts == c]
            if len(hits) == 1:
                mapping[hits[0]] = label
    assert "HIV" not in mapping.values()
    assert d.get("original_withheld") is True
    # embedded PNGs are base64 text, which holds any short string now and then
    text = json.dumps(rep) + re.sub(r"data:[\w/+.-]+;base64,[A-Za-z0-9+/=]+", "", render_html(rep))
    for value in ("HIV", "cancer", "asthma"):
        assert value not in text
    assert d["release"] is not None  # the release side (public anyway) is still drawn


def test_generalized_column_keeps_its_input_distribution() -> None:
    df = pd.DataFrame({"age": [30 + i % 5 for i in range(len(DIAG))], "diag": DIAG})
    pol = {"columns": {"age": "quasi", "diag": "sensitive"}}
    _, rep = apply(df, pol)
    assert rep["distributions"]["diag"]["original"]["labels"] == ["flu", "asthma", "HIV", "cancer"]
    assert "original_withheld" not in rep["distributions"]["diag"]


def test_a_registered_operator_that_replaces_values_has_its_input_withheld() -> None:
    """The withholding follows the operator's ``replaces_values``, not a list of names: an
    operator registered by the user that maps each value to another is covered too."""
    from veil.deid.operators._base import _REGISTRY, Operator, register

    @register
    class Reverse(Operator):
        name = "test_reverse_text"
        replaces_values = True

        def apply(self, df: pd.DataFrame, column: str | None, ctx: object) -> pd.DataFrame:
            out = df.copy()
            out[column] = out[column].str[::-1]
            return out

    try:
        df = pd.DataFrame({"age": [30 + i % 5 for i in range(len(DIAG))], "diag": DIAG})
        pol = {"columns": {"age": "quasi", "diag": {"role": "sensitive", "operator": Reverse.name}}}
        release, rep = apply(df, pol)
        assert release["diag"].iloc[0] == "VIH"  # the premise: values replaced one to one
        assert rep["distributions"]["diag"]["original_withheld"] is True
        assert rep["distributions"]["diag"]["original"] is None
    finally:
        del _REGISTRY[Reverse.name]
