"""``anonymize()``'s ``risk_before`` groups the original records as ``check()`` does.

It was taken from the engines' encodings, which match cells by their text (and the
hierarchies' matching rule): ``1`` and ``1.0`` of an object column were one class "before",
while :func:`check`, :func:`risk` and the report group by typed values (``factorize_typed``:
``True``, ``1`` and ``1.0`` are three values) -- the rule the release's classes
(``risk_after``) are measured with.  The tables below give different classes under the two
rules.
"""

from __future__ import annotations

import pandas as pd
import pytest

from veil.anonymity import AnonymizationConfig, Hierarchy, KMap, anonymize, check, risk

AGES = pd.Series([1, 1.0, 1, 1.0, 2, 2, 2, 2, 3, 3.0, 3, 3], dtype=object)


def _table() -> pd.DataFrame:
    # typed: {1: 2, 1.0: 2, 2: 4, 3: 3, 3.0: 1} -- five classes, one unique record;
    # by text: {'1': 4, '2': 4, '3': 4} -- three classes, none unique
    return pd.DataFrame({"age": AGES, "zip": ["a"] * 12, "y": list("ab") * 6})


def _hier() -> Hierarchy:
    return Hierarchy.from_mapping({str(a): ["0-4", "*"] for a in range(5)})


@pytest.mark.parametrize("algorithm", ["optimal", "mondrian"])
def test_risk_before_is_the_risk_check_gives_the_original(algorithm: str) -> None:
    df = _table()
    zips = Hierarchy.from_mapping({"a": ["*"]})
    config = AnonymizationConfig({"age": _hier(), "zip": zips}, k=2, algorithm=algorithm)
    res = anonymize(df, config)
    before = res.risk_before
    assert before == risk(df, ["age", "zip"])
    assert before["classes"] == check(df, ["age", "zip"], k=2).n_classes == 5
    assert before["sample_uniqueness"] == pytest.approx(1 / 12)  # the lone 3.0
    # "after" is the release as check() groups it (its QIs are label texts)
    kept = res.data.loc[~res.suppressed]
    assert res.risk_after["classes"] == check(kept, ["age", "zip"], k=2).n_classes


def test_risk_before_with_a_population_matches_risk() -> None:
    df = _table()
    pop = pd.concat([df, df], ignore_index=True)  # every class twice as large outside
    config = AnonymizationConfig({"age": _hier()}, models=[KMap(2, pop)], k=2)
    res = anonymize(df, config)
    assert res.risk_before == risk(df, ["age"], population=pop)
    assert res.risk_before["journalist"]["highest"] == pytest.approx(1 / 2)  # 3.0: 1 here, 2 there


def test_the_input_is_left_as_it_was() -> None:
    df = _table()
    copy = df.copy()
    anonymize(df, AnonymizationConfig({"age": _hier()}, k=2))
    pd.testing.assert_frame_equal(df, copy)
    assert [type(v) for v in df["age"]] == [type(v) for v in AGES]
