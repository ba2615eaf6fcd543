"""Mondrian: every release is checked with independent plain-pandas code."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veil.anonymity._config import AnonymizationConfig
from veil.anonymity._models import DistinctLDiversity, EntropyLDiversity, KAnonymity
from veil.anonymity._mondrian import mondrian, mondrian_anonymize, partition_ncp
from veil.anonymity._tcloseness import TCloseness
from veil.errors import ConfigError, InputError, UnsatisfiableError
from veil.schema import Hierarchy

QI = [
    "age",
    "education",
    "marital-status",
    "native-country",
    "race",
    "sex",
    "workclass",
    "occupation",
]
INTERVAL = re.compile(r"^\[(-?[0-9.e+-]+), (-?[0-9.e+-]+)\]$")


# --------------------------------------------------------------------------- independent checks
def _interval_ok(cell: str, value: float) -> bool:
    m = INTERVAL.match(cell)
    if m:
        lo, hi = float(m.group(1)), float(m.group(2))
        return lo < hi and lo <= value <= hi
    return float(cell) == float(value)


def _ancestors(h: Hierarchy, values: pd.Series) -> np.ndarray:
    return np.column_stack([h.generalize(values, lvl) for lvl in range(h.height)])


def check_release(
    df: pd.DataFrame,
    res,
    qi: list[str],
    k: int,
    hierarchies: dict | None = None,
) -> None:
    """Assert the release invariants without using any Veil code."""
    hierarchies = hierarchies or {}
    rel = res.data
    assert rel.index.equals(df.index)
    assert list(rel.columns) == list(df.columns)
    others = [c for c in df.columns if c not in qi]
    pd.testing.assert_frame_equal(rel[others], df[others])
    # k by the published QI values (classes with equal cells merge: still >= k) and by class.
    sizes = rel.groupby(qi, dropna=False, sort=False).size()
    assert sizes.min() >= k
    by_class = pd.Series(res.partitions, index=df.index)
    assert by_class.value_counts().min() >= k
    # Every class publishes one value per QI.
    assert (rel[qi].groupby(by_class.to_numpy()).nunique() == 1).all().all()
    for col in qi:
        cells = rel[col].astype(str).to_numpy()
        orig = df[col]
        if col in hierarchies:
            anc = _ancestors(hierarchies[col], orig)
            assert (anc == cells[:, None]).any(axis=1).all(), col
        elif pd.api.types.is_numeric_dtype(orig) and not pd.api.types.is_bool_dtype(orig):
            assert all(_interval_ok(c, v) for c, v in zip(cells, orig.tolist())), col
        else:
            for c, v in zip(cells, orig.astype(str).tolist()):
                assert c == v or (c[0] == "{" and v in c[1:-1].split(",")), (col, c, v)


# --------------------------------------------------------------------------- Adult
def test_adult_k10_full_meets_target(adult_full, adult_hier):
    res = mondrian(adult_full, QI, 10, hierarchies=adult_hier)
    check_release(adult_full, res, QI, 10, adult_hier)
    assert res.utility["ncp"] <= 0.12  # the target for Adult k=10
    assert res.utility["ncp"] == pytest.approx(
        partition_ncp(adult_full, QI, res.partitions, hierarchies=adult_hier)
    )


@pytest.mark.parametrize("relaxed", [False, True])
@pytest.mark.parametrize("k", [2, 5, 25])
def test_adult_sample_k(adult_small, adult_hier, k, relaxed):
    res = mondrian(adult_small, QI, k, hierarchies=adult_hier, relaxed=relaxed)
    check_release(adult_small, res, QI, k, adult_hier)


def test_adult_without_hierarchies_uses_sets(adult_small):
    res = mondrian(adult_small, QI, 5)
    check_release(adult_small, res, QI, 5)
    assert res.extra["qi_kinds"]["education"] == "set" and res.extra["qi_kinds"]["age"] == "numeric"
    assert res.data["education"].str.startswith("{").any()


def test_l_diversity_holds(adult_small, adult_hier):
    res = mondrian(adult_small, QI, 5, l=("relationship", 3), hierarchies=adult_hier)
    check_release(adult_small, res, QI, 5, adult_hier)
    by_class = adult_small["relationship"].groupby(res.partitions).nunique()
    assert by_class.min() >= 3
    by_cells = res.data.groupby(QI)["relationship"].nunique()
    assert by_cells.min() >= 3


def test_entropy_l_diversity_holds(adult_small, adult_hier):
    res = mondrian(
        adult_small,
        QI,
        4,
        l={"column": "relationship", "l": 2.5, "variant": "entropy"},
        hierarchies=adult_hier,
    )
    p = adult_small.groupby(res.partitions)["relationship"].value_counts(normalize=True)
    entropy = (-p * np.log(p)).groupby(level=0).sum()
    assert entropy.min() >= np.log(2.5) - 1e-9


@pytest.mark.parametrize("t", [0.1, 0.25])
def test_t_closeness_holds(adult_small, adult_hier, t):
    res = mondrian(adult_small, QI, 5, t=("salary", t), hierarchies=adult_hier)
    check_release(adult_small, res, QI, 5, adult_hier)
    glob = adult_small["salary"].value_counts(normalize=True)
    local = pd.crosstab(res.partitions, adult_small["salary"].to_numpy(), normalize="index")
    emd = 0.5 * (local[glob.index] - glob).abs().sum(axis=1)
    assert emd.max() <= t + 1e-9


def test_models_make_fewer_classes(adult_small, adult_hier):
    plain = mondrian(adult_small, QI, 5, hierarchies=adult_hier)
    diverse = mondrian(adult_small, QI, 5, l=("relationship", 3), hierarchies=adult_hier)
    assert diverse.n_classes < plain.n_classes
    assert diverse.utility["ncp"] > plain.utility["ncp"]


def test_deterministic_and_input_untouched(adult_small, adult_hier):
    before = adult_small.copy(deep=True)
    a = mondrian(adult_small, QI, 7, hierarchies=adult_hier)
    b = mondrian(adult_small, QI, 7, hierarchies=adult_hier)
    pd.testing.assert_frame_equal(a.data, b.data)
    assert np.array_equal(a.partitions, b.partitions)
    pd.testing.assert_frame_equal(adult_small, before)


def test_row_order_does_not_matter_for_k(adult_small, adult_hier):
    shuffled = adult_small.sample(frac=1.0, random_state=3)
    res = mondrian(shuffled, QI, 6, hierarchies=adult_hier)
    check_release(shuffled, res, QI, 6, adult_hier)


# --------------------------------------------------------------------------- small exact cases
def test_k1_reaches_distinct_tuples():
    df = pd.DataFrame({"a": [1, 1, 2, 3, 3, 9], "b": list("xxyzzz"), "v": range(6)})
    res = mondrian(df, ["a", "b"], 1)
    assert res.utility["ncp"] == 0.0
    assert res.data["a"].tolist() == ["1", "1", "2", "3", "3", "9"]


def test_ncp_hand_example():
    df = pd.DataFrame({"age": [20, 30, 40, 60], "color": ["r", "g", "r", "b"]})
    # class 0: age 10/40, {g,r} (2-1)/(3-1); class 1: age 20/40, {b,r} 1/2.
    assert partition_ncp(df, ["age", "color"], [0, 0, 1, 1]) == pytest.approx(
        (2 * (0.25 + 0.5) / 2 + 2 * (0.5 + 0.5) / 2) / 4
    )
    per = partition_ncp(df, ["age", "color"], ["x", "x", "y", "y"], per_column=True)
    assert per == pytest.approx({"age": 0.375, "color": 0.5})


def test_ncp_hierarchy_hand_example(adult_hier):
    df = pd.DataFrame({"education": ["Bachelors", "Masters", "HS-grad", "HS-grad"]})
    # Bachelors+Masters -> "Higher education" (7 of 16 leaves); HS-grad alone -> 0.
    ncp = partition_ncp(df, ["education"], [0, 0, 1, 1], hierarchies=adult_hier)
    assert ncp == pytest.approx((2 * 6 / 15 + 0) / 4)


def test_hierarchical_cut_uses_children(adult_hier):
    edu = ["Bachelors"] * 3 + ["Masters"] * 3 + ["HS-grad"] * 3 + ["11th"] * 3
    df = pd.DataFrame({"education": edu, "id": range(12)})
    res = mondrian(df, ["education"], 3, hierarchies=adult_hier)
    # The root splits into its children (higher / secondary education), each of which
    # splits again into single values.
    assert res.data["education"].tolist() == edu
    res6 = mondrian(df, ["education"], 6, hierarchies=adult_hier)
    assert res6.data["education"].tolist() == ["Higher education"] * 6 + ["High School"] * 6


def test_single_value_rendering_and_float_intervals():
    df = pd.DataFrame({"x": [0.5, 0.5, 0.5, 1.25, 2.0, 2.5]})
    res = mondrian(df, ["x"], 3)
    assert res.data["x"].tolist() == ["0.5"] * 3 + ["[1.25, 2.5]"] * 3


def test_config_entry_point(adult_small, adult_hier):
    qi = {c: adult_hier.get(c) for c in QI[:4]}
    cfg = AnonymizationConfig(
        qi,
        models=[KAnonymity(4), DistinctLDiversity("salary", 2), EntropyLDiversity("race", 1.2)],
        algorithm="mondrian",
        options={"mode": "relaxed"},
    )
    res = mondrian_anonymize(adult_small, cfg)
    check_release(adult_small, res, QI[:4], 4, adult_hier)
    assert adult_small["salary"].groupby(res.partitions).nunique().min() == 2
    assert res.algorithm == "mondrian" and res.extra["mondrian_mode"] == "relaxed"
    assert res.n_suppressed == 0
    assert res.summary()["utility"]["ncp"] == pytest.approx(res.utility["ncp"])
    # Risk: after <= 1/k for every record; before from the raw QI classes (independent count).
    assert res.risk_after["prosecutor"]["highest"] <= 1 / 4
    raw = adult_small.groupby(QI[:4]).size()
    assert res.risk_before["classes"] == len(raw)
    assert res.risk_before["prosecutor"]["highest"] == pytest.approx(1 / raw.min())


def test_ordered_t_closeness_on_numeric_sensitive(adult_small, adult_hier):
    cfg = AnonymizationConfig(
        {c: adult_hier.get(c) for c in QI},
        models=[KAnonymity(5), TCloseness("hours-per-week", 0.15, "ordered")],
        algorithm="mondrian",
    )
    res = mondrian_anonymize(adult_small, cfg)
    check_release(adult_small, res, QI, 5, adult_hier)
    # Independent ordered EMD (Li et al. 2007): sum |cumulative differences| / (m - 1).
    vals = np.sort(adult_small["hours-per-week"].unique())
    glob = adult_small["hours-per-week"].value_counts(normalize=True).reindex(vals).to_numpy()
    for _, part in adult_small.groupby(res.partitions):
        p = part["hours-per-week"].value_counts(normalize=True).reindex(vals, fill_value=0)
        emd = np.abs(np.cumsum(p.to_numpy() - glob)).sum() / (len(vals) - 1)
        assert emd <= 0.15 + 1e-9


def test_invalid_mode(adult_small):
    cfg = AnonymizationConfig(["age"], k=2, algorithm="mondrian", options={"mode": "loose"})
    with pytest.raises(ConfigError, match="strict"):
        mondrian_anonymize(adult_small, cfg)


# --------------------------------------------------------------------------- errors
def test_errors(adult_small, adult_hier):
    with pytest.raises(ConfigError):
        mondrian(adult_small, QI, 0)
    with pytest.raises(ConfigError, match="larger than the table"):
        mondrian(adult_small, QI, 10_000)
    with pytest.raises(InputError, match="not in the table"):
        mondrian(adult_small, ["age", "nope"], 2)
    with pytest.raises(ConfigError, match="both quasi-identifier and sensitive"):
        mondrian(adult_small, QI, 2, l=("race", 2))
    with pytest.raises(UnsatisfiableError, match="distinct-l-diversity"):
        mondrian(adult_small, QI, 2, l=("salary", 3))
    with pytest.raises(ConfigError):
        mondrian(adult_small, QI, 2, l=("salary", 2, 3))
    with pytest.raises(InputError, match="missing from its hierarchy"):
        bad = adult_small.copy()
        bad.iloc[0, bad.columns.get_loc("education")] = "Kindergarten"
        mondrian(bad, QI, 2, hierarchies=adult_hier)
    with pytest.raises(InputError, match="missing"):
        bad = adult_small.copy()
        bad["age"] = bad["age"].astype(float)
        bad.iloc[0, bad.columns.get_loc("age")] = np.nan
        mondrian(bad, QI, 2)
    with pytest.raises(InputError):
        mondrian(adult_small.iloc[:0], QI, 1)


# --------------------------------------------------------------------------- properties
SMALL_H = Hierarchy.from_mapping(
    {
        "a1": ["A", "*"],
        "a2": ["A", "*"],
        "b1": ["B", "*"],
        "b2": ["B", "*"],
        "b3": ["B", "*"],
        "c": ["C", "*"],
    }
)


@st.composite
def tables(draw):
    n = draw(st.integers(1, 60))
    rows = st.tuples(
        st.integers(-5, 40),
        st.sampled_from([0.0, 0.5, 1.5, 2.25, 10.0]),
        st.sampled_from(["x", "y", "z", "w"]),
        st.sampled_from(["a1", "a2", "b1", "b2", "b3", "c"]),
        st.sampled_from(["s", "t", "u"]),
    )
    data = draw(st.lists(rows, min_size=n, max_size=n))
    df = pd.DataFrame(data, columns=["num", "flt", "cat", "hier", "sens"])
    df["other"] = np.arange(n) * 3
    df.index = pd.Index(np.arange(n)[::-1] * 2 + 100)
    return df


QI_SMALL = ["num", "flt", "cat", "hier"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(df=tables(), k=st.integers(1, 12), relaxed=st.booleans())
def test_property_k(df, k, relaxed):
    k = min(k, len(df))
    res = mondrian(df, QI_SMALL, k, hierarchies={"hier": SMALL_H}, relaxed=relaxed)
    check_release(df, res, QI_SMALL, k, {"hier": SMALL_H})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(df=tables(), k=st.integers(1, 8), l=st.integers(1, 3))
def test_property_l(df, k, l):  # noqa: E741
    k = min(k, len(df))
    if df["sens"].nunique() < l:
        with pytest.raises(UnsatisfiableError):
            mondrian(df, QI_SMALL, k, l=("sens", l), hierarchies={"hier": SMALL_H})
        return
    res = mondrian(df, QI_SMALL, k, l=("sens", l), hierarchies={"hier": SMALL_H})
    check_release(df, res, QI_SMALL, k, {"hier": SMALL_H})
    assert df["sens"].groupby(res.partitions).nunique().min() >= l


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(df=tables(), k=st.integers(1, 10))
def test_property_strict_cuts_are_exhausted(df, k):
    """Strict Mondrian stops only when no median cut of any numeric QI is allowed."""
    k = min(k, len(df))
    res = mondrian(df, ["num", "flt"], k)
    for _, part in df.groupby(res.partitions):
        m = len(part)
        for col in ("num", "flt"):
            x = np.sort(part[col].to_numpy())
            med = x[(m - 1) // 2]
            for left in ((x <= med).sum(), (x < med).sum()):
                assert not (k <= left <= m - k)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(df=tables(), k=st.integers(1, 8), t=st.sampled_from([0.05, 0.2, 0.5]))
def test_property_t(df, k, t):
    k = min(k, len(df))
    res = mondrian(df, QI_SMALL, k, t=("sens", t), hierarchies={"hier": SMALL_H})
    check_release(df, res, QI_SMALL, k, {"hier": SMALL_H})
    glob = df["sens"].value_counts(normalize=True)
    local = pd.crosstab(res.partitions, df["sens"].to_numpy(), normalize="index")
    emd = 0.5 * (local.reindex(columns=glob.index, fill_value=0) - glob).abs().sum(axis=1)
    assert emd.max() <= t + 1e-9


def test_hierarchical_t_closeness_runs(adult_small, adult_hier):
    qi = ["age", "marital-status", "race", "sex"]
    res = mondrian(
        adult_small,
        qi,
        5,
        t={"column": "education", "t": 0.3, "distance": "hierarchical"},
        hierarchies=adult_hier,
    )
    check_release(adult_small, res, qi, 5, adult_hier)
    # Independent bound: hierarchical EMD >= (1 / height) * equal-distance EMD, so the
    # equal-distance EMD of every class is at most height * t.
    h = adult_hier["education"].height - 1
    glob = adult_small["education"].value_counts(normalize=True)
    local = pd.crosstab(res.partitions, adult_small["education"].to_numpy(), normalize="index")
    emd = 0.5 * (local.reindex(columns=glob.index, fill_value=0) - glob).abs().sum(axis=1)
    assert emd.max() <= h * 0.3 + 1e-9
    assert res.n_classes > 1


def test_engine_dispatch(adult_small, adult_hier):
    from veil.anonymity import anonymize

    cfg = AnonymizationConfig(
        {c: adult_hier.get(c) for c in QI}, k=5, algorithm="mondrian", options={"mode": "strict"}
    )
    res = anonymize(adult_small, cfg)
    assert res.algorithm == "mondrian"
    check_release(adult_small, res, QI, 5, adult_hier)
    micro = anonymize(
        adult_small, AnonymizationConfig(["age", "hours-per-week"], k=5, algorithm="mdav")
    )
    assert micro.algorithm == "mdav"
    assert micro.data.groupby(["age", "hours-per-week"]).size().min() >= 5


def test_column_dtypes():
    rng = np.random.default_rng(0)
    n = 60
    df = pd.DataFrame(
        {
            "cat": pd.Categorical(rng.choice(list("abc"), n)),
            "flag": rng.random(n) > 0.5,
            "i8": rng.integers(0, 50, n).astype("int8"),
            "f32": rng.random(n).astype("float32"),
            "nullable": pd.array(rng.integers(0, 9, n), dtype="Int64"),
            "text": pd.array(rng.choice(["x", "y"], n), dtype="string"),
            "keep": np.arange(n),
        }
    )
    qi = ["cat", "flag", "i8", "f32", "nullable", "text"]
    res = mondrian(df, qi, 4)
    check_release(df, res, qi, 4)
    assert res.extra["qi_kinds"] == {
        "cat": "set",
        "flag": "set",
        "i8": "numeric",
        "f32": "numeric",
        "nullable": "numeric",
        "text": "set",
    }


def test_large_integers_are_exact():
    big = np.arange(8, dtype=np.int64) + 2**60
    res = mondrian(pd.DataFrame({"id": big}), ["id"], 4)
    assert (
        res.data["id"].tolist()
        == [f"[{2**60}, {2**60 + 3}]"] * 4 + [f"[{2**60 + 4}, {2**60 + 7}]"] * 4
    )


@pytest.mark.slow
def test_large_resampled_adult_with_l_and_t(adult_full, adult_hier):
    big = adult_full.sample(300_000, replace=True, random_state=5).reset_index(drop=True)
    big["age"] = big["age"] + np.random.default_rng(5).integers(-2, 3, size=len(big))
    res = mondrian(big, QI, 10, l=("salary", 2), t=("relationship", 0.3), hierarchies=adult_hier)
    check_release(big, res, QI, 10, adult_hier)
    assert big["salary"].groupby(res.partitions).nunique().min() >= 2
    glob = big["relationship"].value_counts(normalize=True)
    local = pd.crosstab(res.partitions, big["relationship"].to_numpy(), normalize="index")
    emd = 0.5 * (local.reindex(columns=glob.index, fill_value=0) - glob).abs().sum(axis=1)
    assert emd.max() <= 0.3 + 1e-9
