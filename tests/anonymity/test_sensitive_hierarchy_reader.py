"""l-diversity of a sensitive column that has a hierarchy (hierarchical t-closeness), as read.

With a hierarchy the sensitive values were the hierarchy's leaves, each its own value, with
none of the reader merges of a plain text column: leaves ``NA`` and ``null`` were two values
although pandas' default reader reads both as missing.  The oracle writes the release to CSV,
reads it back with pandas' default reader and counts distinct values per class (missing ones
included, as one value); it shares no code with the engine.
"""

from __future__ import annotations

import io

import pandas as pd
import pytest

from veil.anonymity import AnonymizationConfig, DistinctLDiversity, TCloseness, anonymize, check
from veil.errors import UnsatisfiableError
from veil.schema import Hierarchy

CASES = [
    (("NA", "null"), ["x", "z"]),  # both read as missing
    (("1", "1.0"), ["2", "3"]),  # one number in a column of numbers
    (("True", "true"), ["False", "FALSE"]),  # one boolean in a column of booleans
]


def _setup(pair, others):
    leaves = [*pair, *others]
    sens_h = Hierarchy.from_mapping({v: ["G" if v in pair else "H", "*"] for v in leaves})
    df = pd.DataFrame({"q": ["A", "A", "B", "B"], "y": [*pair, *others]})
    models = [
        DistinctLDiversity("y", 2),
        TCloseness("y", 1.0, distance="hierarchical", hierarchy=sens_h),
    ]
    return df, models


def _reader_min_distinct(release: pd.DataFrame) -> int:
    buf = io.StringIO()
    release.to_csv(buf, index=False)
    buf.seek(0)
    r = pd.read_csv(buf, dtype={"q": str})
    return int(r.groupby("q")["y"].nunique(dropna=False).min())


@pytest.mark.parametrize(("pair", "others"), CASES)
def test_check_counts_the_values_a_reader_sees(pair, others):
    df, models = _setup(pair, others)
    assert not check(df, ["q"], models=models).holds  # class A shows one value


@pytest.mark.parametrize(("pair", "others"), CASES)
@pytest.mark.parametrize("algorithm", ["optimal", "mondrian"])
def test_the_release_is_l_diverse_as_read(pair, others, algorithm):
    df, models = _setup(pair, others)
    hier = {"q": Hierarchy.from_mapping({"A": ["*"], "B": ["*"]})}
    try:
        res = anonymize(df, AnonymizationConfig(hier, models=models, algorithm=algorithm))
    except UnsatisfiableError:
        return  # no claim
    assert _reader_min_distinct(res.data) >= 2


def test_leaves_read_alike_stay_apart_for_hierarchical_t():
    # the hierarchical distance keeps the leaves (merging can only bring a class closer)
    df, models = _setup(("NA", "null"), ["x", "z"])
    r = check(df, ["q"], models=[models[1]])
    assert r.holds


@pytest.mark.parametrize(("pair", "others"), CASES)
@pytest.mark.parametrize("algorithm", ["optimal", "mondrian"])
def test_ordered_categories_read_alike_are_one_value(pair, others, algorithm):
    # an ordered Categorical's categories are written as their texts: the same reader merges
    cats = [*pair, *others]
    df = pd.DataFrame(
        {"q": ["A", "A", "B", "B"], "y": pd.Categorical(cats, categories=cats, ordered=True)}
    )
    assert not check(df, ["q"], l={"y": 2}).holds
    hier = {"q": Hierarchy.from_mapping({"A": ["*"], "B": ["*"]})}
    cfg = AnonymizationConfig(hier, models=[DistinctLDiversity("y", 2)], algorithm=algorithm)
    try:
        res = anonymize(df, cfg)
    except UnsatisfiableError:
        return
    assert _reader_min_distinct(res.data) >= 2
