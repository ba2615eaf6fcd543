"""Result details used by the report: utility before anonymization, a breakdown (counts only)
of the suppressed records, and the ordered t-closeness distance on non-numeric columns."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from veil.anonymity import (
    AnonymizationConfig,
    DistinctLDiversity,
    Hierarchy,
    TCloseness,
    anonymize,
    check,
)


def _table(seed: int = 3, n: int = 300) -> tuple[pd.DataFrame, dict[str, Hierarchy]]:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "age": rng.integers(20, 40, n).astype(str),
            "zip": rng.choice(["101", "102", "201", "202"], n),
            "y": rng.choice(["a", "b", "c"], n),
        }
    )
    age = Hierarchy.from_mapping(
        {str(a): [f"{a // 5 * 5}-{a // 5 * 5 + 4}", f"{a // 10 * 10}s", "*"] for a in range(20, 40)}
    )
    zips = Hierarchy.from_mapping({z: [z[0] + "**", "*"] for z in ["101", "102", "201", "202"]})
    return df, {"age": age, "zip": zips}


def _generalized(df: pd.DataFrame, qi: dict[str, Hierarchy], node: dict[str, int]) -> pd.Series:
    cols = {c: qi[c].generalize(df[c].to_numpy(), lv) for c, lv in node.items()}
    return pd.DataFrame(cols).astype(str).agg("|".join, axis=1)


def test_lattice_utility_before_is_the_original_table() -> None:
    df, qi = _table()
    res = anonymize(df, AnonymizationConfig(qi, k=5, suppression_limit=0.05))
    before = res.utility_before
    assert set(before) == set(res.utility)
    for name in ("loss", "precision", "entropy"):
        assert before[name] == 0.0
    sizes = df.groupby(["age", "zip"]).size().to_numpy(dtype=np.int64)
    assert before["dm"] == pytest.approx(float(sizes @ sizes))
    assert before["dm_star"] == pytest.approx(float(sizes @ sizes))
    assert before["aecs"] == pytest.approx(len(df) / len(sizes))
    # anonymization costs utility: every metric is at least as large after
    for name in before:
        assert res.utility[name] >= before[name] - 1e-9
    assert res.summary()["utility_before"]["dm"] == pytest.approx(before["dm"])


@pytest.mark.parametrize("algorithm", ["mondrian", "mdav"])
def test_local_recoding_utility_before(algorithm: str) -> None:
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"a": rng.integers(0, 30, 200), "b": rng.integers(0, 4, 200)})
    res = anonymize(df, AnonymizationConfig(["a", "b"], k=4, algorithm=algorithm))
    before = res.utility_before
    sizes = df.groupby(["a", "b"]).size().to_numpy(dtype=np.int64)
    assert before["dm"] == int(sizes @ sizes)
    assert before["aecs"] == pytest.approx(len(df) / len(sizes))
    loss = "ncp" if algorithm == "mondrian" else "info_loss"
    assert before[loss] == 0.0 and res.utility[loss] > 0.0
    assert res.utility["dm"] > before["dm"]


def test_suppression_breakdown_counts_match_the_classes() -> None:
    rng = np.random.default_rng(7)
    # A, B: large mixed classes; C: 3 records (below k); D: 10 records with one y (below l);
    # E: 4 records with one y (below both)
    g = ["A"] * 30 + ["B"] * 25 + ["C"] * 3 + ["D"] * 10 + ["E"] * 4
    y = list(rng.choice(["a", "b", "c"], 55)) + ["a", "b", "c"] + ["a"] * 10 + ["b"] * 4
    sub = rng.choice(["x1", "x2"], len(g))
    df = pd.DataFrame({"g": g, "s": sub, "y": y}).sample(frac=1.0, random_state=1)
    qi = {
        "g": Hierarchy.from_mapping({v: ["*"] for v in "ABCDE"}),
        "s": Hierarchy.from_mapping({"x1": ["*"], "x2": ["*"]}),
    }
    cfg = AnonymizationConfig(qi, k=5, models=[DistinctLDiversity("y", 2)], suppression_limit=0.3)
    res = anonymize(df, cfg)
    assert res.n_suppressed > 0
    key = _generalized(df, qi, res.node)
    size = key.map(key.value_counts()).to_numpy()
    distinct = key.map(df.groupby(key.to_numpy())["y"].nunique()).to_numpy()
    sup = res.suppressed
    # every suppressed record is in a class violating k or l, and the counts per model agree
    assert bool(((size < 5) | (distinct < 2))[sup].all())
    detail = res.suppression
    n_k = detail["by_model"]["k-anonymity(k=5)"]
    n_l = detail["by_model"]["distinct-l-diversity(column=y, l=2)"]
    assert n_k == int(((size < 5) & sup).sum()) and n_k > 0
    assert n_l == int(((distinct < 2) & sup).sum()) and n_l > 0
    # by class size: records suppressed per size bin of their class at the chosen node
    by = {b["size"]: b for b in detail["by_class_size"]}
    assert sum(b["records"] for b in by.values()) == res.n_suppressed
    s = size[sup]
    for label, lo, hi in [("1", 1, 1), ("2", 2, 2), ("3-4", 3, 4), ("5-9", 5, 9)]:
        got = by.get(label, {"records": 0})["records"]
        assert got == int(((s >= lo) & (s <= hi)).sum())
    assert all(b["records"] > 0 for b in detail["by_class_size"])  # empty bins left out
    # counts only: nothing of a record's values
    text = repr(res.summary()["suppression"])
    for v in ("'C'", "'D'", "'E'", "'x1'", "'x2'"):
        assert v not in text


def test_no_suppression_gives_empty_breakdown() -> None:
    df, qi = _table()
    res = anonymize(df, AnonymizationConfig(qi, k=2))
    assert res.n_suppressed == 0
    assert res.suppression == {"by_class_size": [], "by_model": {}}


def _ordinal_table() -> pd.DataFrame:
    rng = np.random.default_rng(11)
    n = 240
    g = rng.integers(0, 6, n)
    # the text order (high < low < mid) differs from the real one (low < mid < high)
    level = np.where(g < 2, rng.choice(3, n, p=[0.8, 0.1, 0.1]), rng.choice(3, n))
    return pd.DataFrame({"g": g.astype(str), "lvl": np.array(["low", "mid", "high"])[level]})


def test_ordered_categorical_uses_category_order() -> None:
    df = _ordinal_table()
    cat = df.assign(lvl=pd.Categorical(df["lvl"], categories=["low", "mid", "high"], ordered=True))
    codes = df.assign(lvl=df["lvl"].map({"low": 0, "mid": 1, "high": 2}))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no text-order warning for an ordered Categorical
        r_cat = check(cat, ["g"], t={"lvl": 0.9}, t_distance="ordered")
    r_num = check(codes, ["g"], t={"lvl": 0.9}, t_distance="ordered")
    with pytest.warns(UserWarning, match="ordered as text"):
        r_txt = check(df, ["g"], t={"lvl": 0.9}, t_distance="ordered")
    t_cat, t_num, t_txt = (r.models[0]["achieved"] for r in (r_cat, r_num, r_txt))
    assert t_cat == pytest.approx(t_num)
    assert abs(t_cat - t_txt) > 1e-6  # the text order is a different (wrong) order


def test_text_order_warning_once_per_call() -> None:
    df = _ordinal_table()
    hier = {"g": Hierarchy.from_mapping({str(i): ["*"] for i in range(6)})}
    cfg = AnonymizationConfig(hier, models=[TCloseness("lvl", 0.5, "ordered")], k=2)
    for run in (
        lambda: anonymize(df, cfg),
        lambda: check(df, ["g"], t={"lvl": 0.9}, t_distance="ordered"),
    ):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            run()
        msgs = [w for w in caught if "ordered as text" in str(w.message)]
        assert len(msgs) == 1 and issubclass(msgs[0].category, UserWarning)
        assert "ordered pandas Categorical" in str(msgs[0].message)
    with warnings.catch_warnings():  # equal distance, numeric: no warning
        warnings.simplefilter("error")
        check(df, ["g"], t={"lvl": 0.9}, t_distance="equal")
        check(
            df.assign(lvl=df["lvl"].map({"low": 0, "mid": 1, "high": 2})),
            ["g"],
            t={"lvl": 0.9},
            t_distance="ordered",
        )
