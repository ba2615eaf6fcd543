"""Entropy l-diversity and t-closeness at their thresholds, decided exactly.

The engine computes both in floating point; a margin of ``1e-9`` used to accept classes
really beyond the threshold by less than it.  The oracle here is exact rational arithmetic on
the class counts (``fractions.Fraction`` and Python integers), sharing no code with the engine;
a threshold means the decimal it is written as (``repr``: ``t = 0.3`` is 3/10).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from veil.anonymity import (
    AnonymizationConfig,
    EntropyLDiversity,
    TCloseness,
    anonymize,
    check,
)
from veil.schema import Hierarchy


def _exact_entropy_at_least(counts: list[int], l_value: float) -> bool:
    """exp(H) >= l  <=>  (n b)^n >= a^n prod c^c  for l = a / b."""
    n = sum(counts)
    a, b = Fraction(repr(l_value)).numerator, Fraction(repr(l_value)).denominator
    return (n * b) ** n >= a**n * math.prod(c**c for c in counts)


def _exact_tv(cls: pd.Series, ref: pd.Series) -> Fraction:
    p, q = cls.value_counts(), ref.value_counts()
    n, big_n = len(cls), len(ref)
    return (
        sum(
            (abs(Fraction(int(p.get(v, 0)), n) - Fraction(int(q[v]), big_n)) for v in q.index),
            Fraction(0),
        )
        / 2
    )


def _exact_ordered(cls: pd.Series, ref: pd.Series) -> Fraction:
    order = sorted(ref.unique())
    p, q = cls.value_counts(), ref.value_counts()
    n, big_n = len(cls), len(ref)
    run, total = Fraction(0), Fraction(0)
    for v in order:
        run += Fraction(int(p.get(v, 0)), n) - Fraction(int(q[v]), big_n)
        total += abs(run)
    return total / max(len(order) - 1, 1)


def test_a_class_just_below_entropy_l_is_refused():
    # 15,001 and 15,000 records: exp(H) = 2 (1 - 5.6e-10) < 2
    df = pd.DataFrame(
        {"q": ["A"] * 30001 + ["B"] * 2, "y": ["u"] * 15001 + ["v"] * 15000 + ["u", "v"]}
    )
    assert not _exact_entropy_at_least([15001, 15000], 2.0)
    assert not check(df, ["q"], models=[EntropyLDiversity("y", 2)]).holds
    # exactly 2 (two values of equal count) holds, as does a class of 3 equal values for l = 3
    assert check(df.iloc[30001:], ["q"], models=[EntropyLDiversity("y", 2)]).holds
    three = pd.DataFrame({"q": ["A"] * 9, "y": list("uvw") * 3})
    assert check(three, ["q"], models=[EntropyLDiversity("y", 3)]).holds


def _t_near_tie() -> tuple[pd.DataFrame, Fraction]:
    """Class A at t = 0.25 + 5.0e-10 (equal distance) of the table's distribution."""
    n, big_n = 40001, 100000
    target = math.ceil(Fraction(n * big_n, 4))
    inv = pow(big_n, -1, n)
    for j in range(40):  # a N - b n = target + j, i.e. a/n - b/N = 0.25 + j / (n N)
        a = (target + j) * inv % n
        b = (a * big_n - target - j) // n
        if b >= a and b - a <= big_n - n:
            break
    ys = ["u"] * a + ["v"] * (n - a) + ["u"] * (b - a) + ["v"] * (big_n - n - (b - a))
    df = pd.DataFrame({"q": ["A"] * n + ["B"] * (big_n - n), "y": ys})
    return df, _exact_tv(df.y[:n], df.y)


def test_a_class_just_beyond_t_is_refused():
    df, d = _t_near_tie()
    assert Fraction(1, 4) < d < Fraction(1, 4) + Fraction(1, 10**9)
    assert not check(df, ["q"], models=[TCloseness("y", 0.25)]).holds
    assert check(df, ["q"], models=[TCloseness("y", float(d) + 1e-15)]).holds


@pytest.mark.parametrize("algorithm", ["optimal", "mondrian"])
def test_the_release_never_holds_a_class_just_below_entropy_l(algorithm):
    df = pd.DataFrame(
        {"q": ["A"] * 30001 + ["B"] * 2, "y": ["u"] * 15001 + ["v"] * 15000 + ["v", "w"]}
    )
    hier = {"q": Hierarchy.from_mapping({"A": ["*"], "B": ["*"]})}
    cfg = AnonymizationConfig(hier, models=[EntropyLDiversity("y", 2)], algorithm=algorithm)
    res = anonymize(df, cfg)
    for _, g in res.data.groupby(res.data["q"].astype(str), observed=True):
        counts = g["y"].value_counts().tolist()
        assert _exact_entropy_at_least(counts, 2.0)


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("distance", ["equal", "ordered"])
def test_t_holds_exactly_when_every_class_is_within_t(seed, distance):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(6, 40))
    df = pd.DataFrame(
        {"q": rng.integers(0, 3, size=n), "y": rng.integers(0, int(rng.integers(2, 5)), size=n)}
    )
    exact = _exact_tv if distance == "equal" else _exact_ordered
    worst = max(exact(g, df.y) for _, g in df.groupby("q").y)
    for t in (float(worst), float(worst) - 1e-12, float(worst) + 1e-12, float(worst) - 5e-10):
        if not 0 <= t <= 1:
            continue
        res = check(df, ["q"], models=[TCloseness("y", t, distance=distance)])
        assert res.holds == (worst <= Fraction(repr(t))), (t, worst)  # t as written


@pytest.mark.parametrize("seed", range(40))
def test_entropy_l_holds_exactly_when_every_class_reaches_l(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(6, 60))
    df = pd.DataFrame({"q": rng.integers(0, 3, size=n), "y": rng.integers(0, 4, size=n)})
    groups = [g.value_counts().tolist() for _, g in df.groupby("q").y]
    h = min(-sum(c / sum(cs) * math.log(c / sum(cs)) for c in cs) for cs in groups)
    for l_value in (math.exp(h), math.exp(h) * (1 - 1e-12), math.exp(h) * (1 + 1e-12), 2.0, 3.0):
        if l_value < 1:
            continue
        res = check(df, ["q"], models=[EntropyLDiversity("y", l_value)])
        assert res.holds == all(_exact_entropy_at_least(cs, l_value) for cs in groups)


def test_hierarchical_exact_tie_holds_and_beyond_fails():
    # values a, b under X; c, d under Y; a class holding only a and b is 1/2 * (1/2) away
    hier = Hierarchy.from_mapping(
        {"a": ["X", "*"], "b": ["X", "*"], "c": ["Y", "*"], "d": ["Y", "*"]}
    )
    df = pd.DataFrame({"q": ["A"] * 4 + ["B"] * 4, "y": list("abab") + list("cdcd")})
    model = lambda t: TCloseness("y", t, distance="hierarchical", hierarchy=hier)  # noqa: E731
    assert check(df, ["q"], models=[model(0.5)]).holds
    assert not check(df, ["q"], models=[model(0.5 - 1e-12)]).holds


def test_a_class_at_exactly_the_written_t_holds():
    # t = 0.3 as written (3/10), not its double 0.29999999999999998890: a class 3/10 away holds
    df = pd.DataFrame(
        {"q": ["A"] * 10 + ["B"] * 10, "y": ["u"] * 8 + ["v"] * 2 + ["u"] * 2 + ["v"] * 8}
    )
    assert _exact_tv(df.y[:10], df.y) == Fraction(3, 10)
    assert check(df, ["q"], models=[TCloseness("y", 0.3)]).holds
    assert not check(df, ["q"], models=[TCloseness("y", 0.2999999999)]).holds


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("distance", ["equal", "ordered"])
def test_the_all_classes_exact_decision_matches_class_by_class(seed, distance):
    from veil.anonymity import encode_sensitive
    from veil.anonymity._exact import emd_beyond, emd_exact, threshold
    from veil.anonymity._stats import ClassStats

    rng = np.random.default_rng(seed)
    n = int(rng.integers(6, 80))
    ids = rng.integers(0, 6, size=n)
    ids[:6] = np.arange(6)
    y = pd.Series(rng.integers(0, int(rng.integers(1, 7)), size=n))
    stats = ClassStats.from_codes(ids, sensitive={"y": encode_sensitive(y, "y")})
    ss = stats.sensitive["y"]
    exact = [emd_exact(ss, i, distance) for i in range(6)]
    everyone = np.ones(6, dtype=bool)
    for d in exact:
        for t in (float(d), float(d) - 1e-12, float(d) + 1e-12):
            if 0 <= t <= 1:
                got = emd_beyond(ss, stats.sizes, everyone, distance, t)
                assert got.tolist() == [e > threshold(t) for e in exact]


@pytest.mark.parametrize(
    ("c", "r1", "tail"), [(1.1, 55, 50), (1.1, 99, 90), (0.7, 7, 10), (3.0, 9, 3)]
)
def test_recursive_cl_compares_r1_with_c_times_the_tail_exactly(c, r1, tail):
    # class A: r1 records of 'u', then `tail` records of 'v' (l = 2: the tail is r_2 = tail);
    # class B: a balanced class that holds for every c here
    df = pd.DataFrame(
        {"q": ["A"] * (r1 + tail) + ["B"] * 4, "y": ["u"] * r1 + ["v"] * tail + list("uvwx")}
    )
    from veil.anonymity import RecursiveCLDiversity

    holds = check(df, ["q"], models=[RecursiveCLDiversity("y", l=2, c=c)]).holds
    assert holds == (r1 < Fraction(repr(c)) * tail)  # c as written: 1.1 * 50 is 55, not more
