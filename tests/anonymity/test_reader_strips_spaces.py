"""Sensitive texts that differ only in leading/trailing spaces are one value to l-diversity.

A reader that strips spaces (``pandas.read_csv(skipinitialspace=True)`` for leading spaces,
spreadsheet imports that trim cells, ``str.strip`` in a cleaning step) reads ``" x"`` and
``"x"`` as one value: a class holding both was counted 2-diverse by the engine and by
:func:`veil.apply`'s target re-check while the file, read that way, shows one value.  The
oracle reads the written release with pandas and strips the cells; it shares no code with
the engine.
"""

from __future__ import annotations

import io
from types import SimpleNamespace as NS

import pandas as pd
import pytest

from veil.anonymity import AnonymizationConfig, DistinctLDiversity, anonymize, check
from veil.deid._targets import verify_targets
from veil.schema import Hierarchy


def _read_l(release: pd.DataFrame, qi: str = "g", s: str = "s") -> int:
    """Smallest number of distinct sensitive values per class, read by a stripping reader."""
    raw = pd.read_csv(io.StringIO(release.to_csv(index=False)), dtype=str, keep_default_na=False)
    trimmed = raw.apply(lambda col: col.str.strip())  # the cells as a trimming import sees them
    read = pd.read_csv(io.StringIO(trimmed.to_csv(index=False)))  # then pandas' default reader
    vals = read[s].map(lambda v: "<missing>" if pd.isna(v) else repr(v))
    return int(vals.groupby(read[qi].astype(str)).nunique().min())


CASES = [
    [" x", "x", "y", "x", "y", " y"],  # leading space
    ["x ", "x", "y", "x", "y", "y\t"],  # trailing space or tab
    [" True", "true", "False", "True", "False", "FALSE "],  # booleans once stripped
    [" NA", "", "y", "x", "y", " "],  # texts read as missing once stripped
    [" 1", "1.0", "2", "1", "2", " 2 "],  # numbers (already one value to pandas)
]


@pytest.mark.parametrize("s", CASES)
def test_check_counts_texts_with_edge_spaces_as_one(s: list[str]) -> None:
    df = pd.DataFrame({"g": ["a", "a", "b", "b", "c", "c"], "s": s})
    assert _read_l(df) == 1  # the oracle: class a (or c) shows one value
    res = check(df, "g", l={"s": 2})
    assert not res.holds
    assert res.models[0]["achieved"] == _read_l(df)


@pytest.mark.parametrize("s", CASES)
def test_target_recheck_counts_texts_with_edge_spaces_as_one(s: list[str]) -> None:
    df = pd.DataFrame({"g": ["a", "a", "b", "b", "c", "c"], "s": s})
    for variant in ("distinct", "entropy"):
        spec = {"column": "s", "l": 2, "variant": variant}
        t = NS(k=None, l=spec, t=None, suppression_limit=None)
        assert not verify_targets(df, ["g"], t)["l"]["met"], variant
    ok = df.assign(s=["u", "v"] * 3)  # two values everywhere: met
    t = NS(k=None, l={"column": "s", "l": 2}, t=None, suppression_limit=None)
    assert verify_targets(ok, ["g"], t)["l"]["met"]


@pytest.mark.parametrize("algorithm", ["optimal", "mondrian"])
def test_anonymize_releases_two_values_a_stripping_reader_sees(algorithm: str) -> None:
    s = [" x", "x"] * 2 + ["y", "y "] * 2 + ["x", "y"] * 2
    df = pd.DataFrame({"g": ["p"] * 4 + ["q"] * 4 + ["r"] * 4, "s": s})
    assert _read_l(df) == 1
    qi = {"g": Hierarchy.flat(["p", "q", "r"])} if algorithm == "optimal" else ["g"]
    cfg = AnonymizationConfig(qi, k=2, models=[DistinctLDiversity("s", 2)], algorithm=algorithm)
    out = anonymize(df, cfg).data
    assert _read_l(out) >= 2


def test_texts_kept_apart_when_they_differ_inside() -> None:
    df = pd.DataFrame({"g": ["a", "a", "b", "b"], "s": ["x y", "xy", " x", "y "]})
    assert _read_l(df) == 2
    assert check(df, "g", l={"s": 2}).holds


@pytest.mark.parametrize("cats", [[" x", "x", "y"], ["NA", "null", "y"], ["1", "1.0", "2"]])
def test_target_recheck_merges_ordered_categories_as_the_engine(cats: list[str]) -> None:
    """The engine counts the categories of an ordered Categorical as a reader takes their
    texts (``texts_read_as``); the re-check counted each category as its own value."""
    c = pd.Categorical([cats[0], cats[1], cats[2], cats[1]], categories=cats, ordered=True)
    df = pd.DataFrame({"g": ["a", "a", "b", "b"], "s": c})
    assert _read_l(df) == 1
    assert not check(df, "g", l={"s": 2}).holds
    t = NS(k=None, l={"column": "s", "l": 2}, t=None, suppression_limit=None)
    assert not verify_targets(df, ["g"], t)["l"]["met"]


def test_target_recheck_ordered_distance_on_merged_categories_as_the_engine() -> None:
    """Ordered t-closeness on an ordered Categorical whose categories a reader merges: the
    engine takes the larger distance over the categories and over the merged values; the
    re-check measured the categories only."""
    cats = ["False", "false", "True", "true"]
    vals = ["False", "false"] + ["True", "true", "True", "true"]
    df = pd.DataFrame(
        {"g": ["a", "a", "b", "b", "b", "b"], "s": pd.Categorical(vals, cats, ordered=True)}
    )
    res = check(df, "g", t={"s": 0.3}, t_distance="ordered")
    achieved = res.models[0]["achieved"]
    t = NS(
        k=None, l=None, t={"column": "s", "t": 0.3, "distance": "ordered"}, suppression_limit=None
    )
    got = verify_targets(df, ["g"], t)["t"]
    assert got["met"] == res.holds
    assert got["achieved"] == pytest.approx(achieved)
