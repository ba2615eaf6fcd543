"""veil.schema.Hierarchy: readers, integer-code tables, generalization, errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.errors import InputError
from veil.schema import Hierarchy


def test_adult_hierarchies_read(adult_hierarchies):
    h = Hierarchy.from_csv(adult_hierarchies / "age.csv")
    assert h.height == 7
    assert h.values[0] == "17"
    assert h.labels(h.height - 1).tolist() == ["*"]
    out = h.generalize(pd.Series([17, 39, 90]), 2)
    assert out.tolist() == ["[10, 20[", "[30, 40[", ">=80"]
    for f in adult_hierarchies.glob("*.csv"):
        hh = Hierarchy.from_csv(f)
        assert hh.height >= 2 and len(hh) >= 2
        # tree: every level is a function of the previous one, codes are consistent
        for lv in range(1, hh.height):
            m = hh.level_map(lv - 1, lv)
            assert np.array_equal(m[hh.codes(lv - 1)], hh.codes(lv))
            assert hh.leaf_counts(lv).sum() == len(hh)


def test_semicolon_and_quotes(tmp_path):
    p = tmp_path / "h.csv"
    p.write_text('a;"x;y";*\nb;"x;y";*\nc;z;*\n', encoding="utf-8")
    h = Hierarchy.from_csv(p)
    assert h.generalize(["a", "c"], 1).tolist() == ["x;y", "z"]
    assert h.n_labels(1) == 2


def test_from_mapping_frame_yaml_equal(tmp_path):
    m = {"1": ["low", "*"], "2": ["low", "*"], "3": ["high", "*"]}
    h1 = Hierarchy.from_mapping(m)
    h2 = Hierarchy.from_frame(pd.DataFrame([[k, *v] for k, v in m.items()]))
    p = tmp_path / "h.yaml"
    p.write_text("hierarchy:\n  1: [low, '*']\n  2: [low, '*']\n  3: [high, '*']\n")
    h3 = Hierarchy.from_yaml(p)
    assert h1 == h2 == h3
    assert Hierarchy.from_file(p) == h1
    # numbers match as strings, floats that are integers too
    assert h1.generalize(np.array([1.0, 3.0]), 1).tolist() == ["low", "high"]


def test_missing_values_counted_and_listed_on_request():
    h = Hierarchy.from_mapping({"a": ["*"], "b": ["*"]})
    assert h.missing(["a", "c", "d", "c"]) == ["c", "d"]  # the explicit way to see them
    with pytest.raises(InputError, match=r"7 distinct value\(s\) missing from the hierarchy"):
        h.generalize(["SENTINEL-7731", *"defghi"], 1)
    with pytest.raises(InputError) as info:  # errors end up in logs: values are not quoted
        h.generalize(["SENTINEL-7731"], 1)
    assert "SENTINEL" not in str(info.value)


@pytest.mark.parametrize(
    "rows, msg",
    [
        ([["a", "x", "*"], ["b", "*"]], "different lengths"),
        ([["a", "x", "*"], ["a", "y", "*"]], "appears twice"),
        ([["a", "x", "p"], ["b", "x", "q"]], "not a tree"),
        ([], "empty"),
    ],
)
def test_invalid_hierarchies(rows, msg):
    with pytest.raises(InputError, match=msg):
        Hierarchy(rows)


def test_file_errors(tmp_path):
    with pytest.raises(InputError, match="not found"):
        Hierarchy.from_csv(tmp_path / "nope.csv")
    with pytest.raises(InputError, match="level"):
        Hierarchy.flat("ab").generalize(["a"], 5)


def test_whitespace_tolerant_lookup():
    h = Hierarchy.from_mapping({"Male": ["*"], "Female": ["*"]})
    assert h.generalize([" Male", "Female"], 0).tolist() == ["Male", "Female"]


def test_from_intervals_nests():
    ages = list(range(17, 91))
    h = Hierarchy.from_intervals(ages, [5, 10, 20])
    assert h.height == 5
    assert h.generalize([17, 20, 89], 1).tolist() == ["[15, 20[", "[20, 25[", "[85, 90["]
    assert h.generalize([17, 89], 3).tolist() == ["[0, 20[", "[80, 100["]
    assert h.generalize([17.0], 4).tolist() == ["*"]
    with pytest.raises(InputError, match="multiple"):
        Hierarchy.from_intervals(ages, [5, 7])
