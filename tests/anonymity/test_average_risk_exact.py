"""Average re-identification risk (classes / records) at most ``r``, decided exactly.

:class:`~veil.anonymity.AverageRisk` compared ``classes / records <= r + 1e-12``, so a table
above the threshold by less than ``1e-12`` held.  The oracle is exact rational arithmetic on
the counts, ``r`` the decimal it is written as (``0.3`` is 3/10), as the engine reads ``t``,
``l`` and ``c``.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from veil.anonymity import AnonymizationConfig, AverageRisk, Hierarchy, anonymize, check
from veil.anonymity._stats import ClassStats


def _holds(sizes: list[int], r: float) -> bool:
    return AverageRisk(r).holds(ClassStats(np.asarray(sizes, dtype=np.int64)))


def test_a_table_at_exactly_the_written_threshold_holds_and_just_above_does_not() -> None:
    sizes = [3, 3, 4]  # 3 classes / 10 records = 3/10
    assert _holds(sizes, 0.3)
    assert not _holds(sizes, 0.2999999999999)  # 3/10 is above it by 1e-13
    df = pd.DataFrame({"q": ["a"] * 3 + ["b"] * 3 + ["c"] * 4})
    assert check(df, ["q"], average_risk=0.3).holds
    assert not check(df, ["q"], average_risk=0.2999999999999).holds


def test_large_classes_just_above_the_threshold_do_not_hold() -> None:
    # 2 classes of 2 * 10**12 - 1 records: 1e-12 (1 + 5e-13) > 1e-12
    sizes = [10**12, 10**12 - 1]
    assert Fraction(2, sum(sizes)) > Fraction(repr(1e-12))
    assert not _holds(sizes, 1e-12)
    assert _holds([10**12, 10**12], 1e-12)  # exactly 1e-12


def test_suppressed_classes_are_left_out() -> None:
    stats = ClassStats(np.array([1, 3, 4, 2], dtype=np.int64))
    keep = np.array([False, True, True, True])  # 3 classes / 9 records left
    assert AverageRisk(0.3333333333333334).holds(stats, keep)
    assert not AverageRisk(0.3333333333333333).holds(stats, keep)  # 1/3 is above it
    assert AverageRisk(0.1).holds(stats, np.zeros(4, dtype=bool))  # nothing left


@pytest.mark.parametrize("seed", range(20))
def test_average_risk_holds_exactly_when_classes_over_records_is_at_most_r(seed: int) -> None:
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 30, size=int(rng.integers(1, 12))).tolist()
    risk = Fraction(len(sizes), sum(sizes))
    for r in (float(risk), float(risk) - 1e-13, float(risk) + 1e-13, float(risk) * (1 - 1e-9)):
        if 0 < r <= 1:
            assert _holds(sizes, r) == (risk <= Fraction(repr(r))), (sizes, r)


def test_the_engine_releases_no_table_above_the_written_threshold() -> None:
    # ungeneralized: 3 classes / 10 records (3/10); generalized to '*': 1/10
    df = pd.DataFrame({"q": ["a"] * 3 + ["b"] * 3 + ["c"] * 4})
    hier = {"q": Hierarchy.from_mapping({"a": ["*"], "b": ["*"], "c": ["*"]})}
    for r, level in ((0.3, 0), (0.2999999999999, 1)):
        res = anonymize(df, AnonymizationConfig(hier, models=[AverageRisk(r)]))
        assert res.node == {"q": level}
        classes = res.data["q"].astype(str).nunique()
        assert Fraction(classes, len(res.data)) <= Fraction(repr(r))
