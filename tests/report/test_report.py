"""Risk indicators, target verification, information loss and the HTML/JSON report."""

from __future__ import annotations

import itertools
import json
import math
import re
from collections import Counter
from types import SimpleNamespace as NS

import numpy as np
import pandas as pd
import pytest
from _leaks import numbers_in

from veil.deid import apply
from veil.deid._targets import verify_targets
from veil.report import information_loss, render_html, risk_indicators


def _classes(df: pd.DataFrame, qis: list[str]) -> dict[tuple, list[int]]:
    groups: dict[tuple, list[int]] = {}
    for i, row in enumerate(df[qis].astype(object).itertuples(index=False, name=None)):
        key = tuple("NA" if (isinstance(v, float) and math.isnan(v)) else v for v in row)
        groups.setdefault(key, []).append(i)
    return groups


@pytest.fixture
def table() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    n = 400
    return pd.DataFrame(
        {
            "age": rng.integers(20, 26, n),
            "sex": rng.choice(["F", "M"], n),
            "zip": rng.choice(["100", "101", "102", None], n),
            "ill": rng.choice(["a", "b", "c"], n, p=[0.6, 0.3, 0.1]),
            "score": rng.integers(1, 6, n),
        }
    )


def test_risk_indicators_match_brute_force(table: pd.DataFrame) -> None:
    qis = ["age", "sex", "zip"]
    groups = _classes(table, qis)
    sizes = [len(v) for v in groups.values()]
    r = risk_indicators(table, qis, k=8)
    assert r["classes"] == len(groups)
    assert r["unique_records"] == sum(1 for s in sizes if s == 1)
    assert r["smallest_class"] == min(sizes)
    assert r["records_below_k"] == sum(s for s in sizes if s < 8)
    per_record = [1 / len(v) for v in groups.values() for _ in v]
    assert r["average_risk"] == pytest.approx(sum(per_record) / len(table))
    assert r["highest_risk"] == pytest.approx(max(per_record))


def test_risk_ignores_index_labels(table: pd.DataFrame) -> None:
    shuffled = table.set_axis(np.arange(len(table))[::-1] * 7, axis=0)
    assert risk_indicators(shuffled, ["age", "sex"], 5) == risk_indicators(table, ["age", "sex"], 5)


def test_targets_match_brute_force(table: pd.DataFrame) -> None:
    qis = ["sex", "zip"]
    groups = _classes(table, qis)
    glob = Counter(table["ill"])
    n = len(table)
    values = sorted(glob)
    kmin = min(len(v) for v in groups.values())
    distinct = min(len(set(table["ill"].iloc[v])) for v in groups.values())
    ent = min(
        math.exp(
            -sum(
                (c / len(v)) * math.log(c / len(v)) for c in Counter(table["ill"].iloc[v]).values()
            )
        )
        for v in groups.values()
    )
    tv, ordered = 0.0, 0.0
    for v in groups.values():
        cnt = Counter(table["ill"].iloc[v])
        p = [cnt[x] / len(v) for x in values]
        q = [glob[x] / n for x in values]
        tv = max(tv, 0.5 * sum(abs(a - b) for a, b in zip(p, q)))
        cum = list(itertools.accumulate(a - b for a, b in zip(p, q)))
        ordered = max(ordered, sum(abs(c) for c in cum) / (len(values) - 1))
    t = NS(
        k=kmin,
        l={"column": "ill", "l": distinct, "variant": "distinct"},
        t={"column": "ill", "t": 1.0},
        suppression_limit=None,
    )
    r = verify_targets(table, qis, t)
    assert r["k"] == {"target": kmin, "achieved": kmin, "met": True}
    assert r["l"]["achieved"] == distinct and r["l"]["met"]
    assert r["t"]["achieved"] == pytest.approx(tv)
    r2 = verify_targets(
        table,
        qis,
        NS(
            k=kmin + 1,
            l={"column": "ill", "l": ent + 1e-6, "variant": "entropy"},
            t={"column": "ill", "t": ordered * 0.999, "distance": "ordered"},
            suppression_limit=None,
        ),
    )
    assert not r2["k"]["met"] and not r2["l"]["met"] and not r2["t"]["met"]
    assert r2["l"]["achieved"] == pytest.approx(ent) and r2["t"]["achieved"] == pytest.approx(
        ordered
    )
    assert not r2["all_met"]


def test_recursive_l_diversity() -> None:
    df = pd.DataFrame({"q": ["x"] * 6, "s": ["a", "a", "a", "b", "b", "c"]})
    # r1=3, r2+r3 = 3: (c,2)-diverse iff 3 < c*3
    assert verify_targets(
        df,
        ["q"],
        NS(
            k=None,
            l={"column": "s", "l": 2, "variant": "recursive", "c": 1.01},
            t=None,
            suppression_limit=None,
        ),
    )["l"]["met"]
    assert not verify_targets(
        df,
        ["q"],
        NS(
            k=None,
            l={"column": "s", "l": 2, "variant": "recursive", "c": 1.0},
            t=None,
            suppression_limit=None,
        ),
    )["l"]["met"]


def test_information_loss_figures() -> None:
    o = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "b": ["x", "y", "x", None], "c": [1, 2, 3, 4]})
    r = pd.DataFrame({"a": [1.0, 2.0, 2.0], "b": ["x", "*", None]}, index=[0, 1, 3])
    loss = information_loss(o, r)
    assert loss["records_removed"] == 1 and loss["records_removed_share"] == 0.25
    assert loss["columns"]["a"]["changed_share"] == pytest.approx(1 / 3)  # 4.0 -> 2.0
    assert loss["columns"]["b"]["changed_share"] == pytest.approx(1 / 3)  # y -> *; None == None
    assert loss["columns"]["c"]["dropped"]
    assert loss["columns"]["a"]["mean_before"] == pytest.approx(2.5)
    assert loss["columns"]["a"]["mean_after"] == pytest.approx(5 / 3)
    assert loss["columns"]["a"]["distinct_reduction"] == pytest.approx(0.5)


def test_report_json_and_html(table: pd.DataFrame) -> None:
    policy = {
        "columns": {
            "age": {"role": "quasi", "operator": {"name": "generalize", "bins": [20, 23, 26]}},
            "sex": "quasi",
            "zip": {"role": "quasi", "operator": "drop"},
            "ill": "sensitive",
            "score": "insensitive",
        },
        "suppress": ["score == 5"],
        "privacy": {"k": 3, "l": {"column": "ill", "l": 2}},
    }
    release, rep = apply(table, policy)
    json.dumps(rep)  # JSON-able
    assert rep["input"]["records"] == 400 and rep["release"]["records"] == len(release)
    assert rep["suppression"]["records_removed_by_conditions"] == int((table["score"] == 5).sum())
    assert rep["risk"]["quasi_identifiers"] == ["age", "sex", "zip"]
    assert rep["risk"]["after"] == risk_indicators(release, ["age", "sex"], 3)
    assert rep["risk"]["before"]["unique_share"] >= rep["risk"]["after"]["unique_share"]
    assert (
        rep["targets"]["k"]["achieved"]
        == risk_indicators(release, ["age", "sex"])["smallest_class"]
    )
    assert rep["targets"]["mode"] == "verified"
    assert [a["operator"] for a in rep["actions"]] == ["generalize", "drop"]
    assert set(rep["distributions"]) == {"age", "sex", "zip", "ill"}
    assert rep["distributions"]["zip"]["release"] is None
    html = render_html(rep)
    assert html.count("data:image/png;base64,") == 4
    assert not re.search(r"(src|href)=\"https?://", html)  # self-contained
    for fig in (
        f"{rep['risk']['before']['unique_share'] * 100:.1f}%",
        f"{rep['risk']['after']['unique_share'] * 100:.1f}%",
    ):
        assert fig in html
    assert "generalize" in html and "column removed" in html


def test_report_never_contains_key(tmp_path, table: pd.DataFrame) -> None:  # type: ignore[no-untyped-def]
    key = "a1b2c3d4" * 8
    kf = tmp_path / "k"
    kf.write_text(key)
    df = table.assign(name=[f"person{i}" for i in range(len(table))])
    _, rep = apply(
        df,
        {
            "columns": {"name": {"role": "identifier", "operator": "pseudonymize"}},
            "default_role": "insensitive",
        },
        key_file=kf,
    )
    text = json.dumps(rep) + render_html(rep)
    assert key not in text and key.upper() not in text and bytes.fromhex(key).hex() not in text


def test_html_escapes_names_and_values() -> None:
    df = pd.DataFrame({"<script>x</script>": ["<b>a</b>", "b", "<b>a</b>"], "age": [1, 2, 3]})
    _, rep = apply(df, {"columns": {"<script>x</script>": "quasi", "age": "quasi"}})
    html = render_html(rep)
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_report_hides_the_inputs_rare_values_and_extremes() -> None:
    """The input's distributions in the report protect small cells (the policy's k): a
    diagnosis held by one suppressed record and the oldest person's exact age must not
    appear, though every value held by at least k records still does."""
    rng = np.random.default_rng(9)
    n = 600
    df = pd.DataFrame(
        {
            "age": rng.integers(20, 80, n).astype(float),
            "sex": rng.choice(["F", "M"], n),
            "ill": rng.choice(["flu", "cold", "asthma"], n),
        }
    )
    df.loc[0, ["age", "ill"]] = [117.0, "RAREDISEASE"]
    df.loc[1, "ill"] = "RARE2"  # released, but held by one record: a small cell
    policy = {
        "default_role": "insensitive",
        "columns": {
            "age": {"role": "quasi", "operator": {"name": "generalize", "bins": [0, 40, 60, 200]}},
            "sex": {"role": "quasi"},
            "ill": {"role": "sensitive"},
        },
        "suppress": ["age > 100"],  # the outlier is not released
        "privacy": {"k": 5},
    }
    release, rep = apply(df, policy)
    assert len(release) == n - 1
    text = json.dumps(rep) + render_html(rep)
    assert "RAREDISEASE" not in text
    ill = rep["distributions"]["ill"]["original"]
    assert "RARE2" not in ill["labels"]  # (it is released: the release side may name it)
    assert {"flu", "cold", "asthma"} <= set(ill["labels"]) and "(other)" in ill["labels"]
    # the before side covers the released records only: the suppressed one is not counted
    assert sum(ill["counts"]) == n - 1
    age = rep["distributions"]["age"]["original"]
    assert age["tails_pooled"] and age["edges"][-1] < 117
    assert sum(age["counts"]) == n - 1  # the tails are counted in the end bins
    # each shown end is an age that more than k people reach: no one is singled out
    assert (df["age"] >= age["edges"][-1]).sum() > 5 and (df["age"] <= age["edges"][0]).sum() > 5


def _interior_small_bins(dist: dict, k: int) -> list[int]:
    return [c for c in dist["counts"] if 0 < c < k]


def test_report_input_histogram_has_no_small_interior_bin() -> None:
    """A histogram bin of the input holding fewer than k records is a small cell: it places
    those records in a narrow range.  Here one person is 93 (the others 20-79 or 101-106): no
    bin of the input's age histogram may hold between 1 and k - 1 records, and the counts
    still add up to the input."""
    rng = np.random.default_rng(11)
    ages = np.concatenate([rng.integers(20, 80, 300), [93], np.arange(101, 107)]).astype(float)
    df = pd.DataFrame({"age": ages, "sex": rng.choice(["F", "M"], len(ages))})
    policy = {
        "columns": {
            "age": {"role": "quasi", "operator": {"name": "generalize", "bins": [0, 50, 200]}},
            "sex": {"role": "quasi"},
        },
        "privacy": {"k": 5},
    }
    _, rep = apply(df, policy)
    age = rep["distributions"]["age"]["original"]
    assert age["kind"] == "numeric" and sum(age["counts"]) == len(df)
    # the plain 20-bin histogram of this column does have a one-record bin (93)
    lo, hi = age["edges"][0], age["edges"][-1]
    plain, _ = np.histogram(np.clip(ages, lo, hi), bins=np.linspace(lo, hi, 21))
    assert 1 in plain.tolist()
    assert _interior_small_bins(age, 5) == []
    for a, b, c in zip(age["edges"][:-1], age["edges"][1:], age["counts"]):
        inside = np.clip(ages, lo, hi)
        last = b == hi
        assert ((inside >= a) & ((inside <= b) if last else (inside < b))).sum() == c


def test_report_input_histogram_without_poolable_tails_names_no_extreme() -> None:
    """When more than n - 2k records share one value the tails cannot be pooled: the input's
    minimum and maximum (held by one record each) must not appear, as edges or as labels."""
    vals = np.concatenate([np.full(40, 50.0), np.arange(1.0, 9.0), np.arange(92.0, 100.0)])
    df = pd.DataFrame({"x": vals, "g": ["a"] * len(vals)})
    _, rep = apply(df, {"columns": {"x": "quasi", "g": "quasi"}, "privacy": {"k": 10}}, seed=0)
    d = rep["distributions"]["x"]["original"]
    assert sum(d["counts"]) == len(df)
    shown = d.get("edges", []) + [v for v in d.get("labels", []) if v != "(other)"]
    assert not {1.0, 99.0, "1.0", "99.0", "1", "99"} & set(shown)
    assert all(c >= 10 for c in d["counts"])


def _suppressed_one_table() -> tuple[pd.DataFrame, dict]:
    rng = np.random.default_rng(3)
    n = 400
    df = pd.DataFrame(
        {
            "sex": rng.choice(["F", "M"], n),
            "zip": rng.choice(["100", "101"], n),
            "ill": rng.choice(["flu", "cold", "asthma"], n),
            "income": rng.integers(1000, 5000, n),
        }
    )
    df.loc[0, ["sex", "zip", "ill", "income"]] = ["F", "999", "asthma", 4321]  # alone
    policy = {
        "columns": {
            "sex": {"role": "quasi", "hierarchy": {"F": ["*"], "M": ["*"]}},
            "zip": {"role": "quasi", "hierarchy": {"100": ["*"], "101": ["*"], "999": ["*"]}},
            "ill": "sensitive",
            "income": "insensitive",
        },
        "privacy": {"k": 5, "suppression_limit": 0.01, "algorithm": "optimal"},
    }
    return df, policy


@pytest.mark.parametrize("mode", ["drop", "mask"])
def test_report_before_figures_do_not_give_away_suppressed_records(mode: str) -> None:
    """Differencing attack: with the public release, the report's input-side figures must not
    reveal what the release hides.  One record (alone in its class) is suppressed; if the
    input's distributions or means counted it, input minus release would give its sex, its
    diagnosis and its exact income."""
    df, policy = _suppressed_one_table()
    policy["privacy"]["suppressed"] = mode
    release, rep = apply(df, policy)
    assert rep["anonymity"]["suppressed"] == 1
    shown = release if mode == "drop" else release[release["zip"] != "*"]
    assert len(shown) == len(df) - 1
    for col in ("sex", "ill"):
        d = rep["distributions"][col]["original"]
        counts = dict(zip(d["labels"], d["counts"]))
        # the input values of the shown records; a suppressed record would add one somewhere
        assert counts == df.loc[shown.index, col].value_counts().to_dict()
    loss = rep["information_loss"]
    income = loss["columns"]["income"]
    assert income["mean_before"] * len(release) == pytest.approx(release["income"].sum())
    assert loss["records_removed"] == len(df) - len(release)


def test_suppressed_outlier_does_not_shape_published_bin_edges() -> None:
    """A record removed by a ``suppress`` condition must not reach the operators: with
    equal-width bins its exact age would be the last bin edge, in the operator's stats in the
    report and (through the bin widths) in the release's labels."""
    rng = np.random.default_rng(9)
    n = 600
    df = pd.DataFrame(
        {"age": rng.integers(20, 80, n).astype(float), "sex": rng.choice(["F", "M"], n)}
    )
    df.loc[0, "age"] = 117.0
    policy = {
        "columns": {
            "age": {"role": "quasi", "operator": {"name": "generalize", "bins": 4}},
            "sex": "quasi",
        },
        "suppress": ["age > 100"],
        "privacy": {"k": 5},
    }
    release, rep = apply(df, policy)
    assert len(release) == n - 1
    assert rep["suppression"]["records_removed_by_conditions"] == 1
    assert rep["suppression"]["records_removed_by_operators"] == 0
    edges = rep["actions"][0]["stats"]["edges"]
    kept = df["age"].iloc[1:]
    assert edges[0] == kept.min() and edges[-1] == kept.max()  # the released records' range
    assert 117 not in numbers_in(json.dumps(rep) + render_html(rep))
    assert not release["age"].astype(str).str.contains("117").any()


def test_t_closeness_value_of_a_reference_with_suppressed_records_is_withheld() -> None:
    """Attack: the release plus the exact t of the targets table, measured against the
    engine's input (suppressed records included), pins a suppressed record's income down by
    trying candidate values.  The value is withheld; the verdict stays exact."""
    release = pd.DataFrame({"g": ["a"] * 5 + ["b"] * 5, "inc": [10, 20, 30, 40, 50] * 2})
    targets = NS(k=None, l=None, t={"column": "inc", "t": 0.9, "distance": "ordered"},
                 suppression_limit=None)  # fmt: skip

    def report_for(secret: int) -> dict:
        reference = pd.concat([release, pd.DataFrame({"g": ["c"], "inc": [secret]})])
        return verify_targets(
            release, ["g"], targets, removed_by_privacy=1, input_records=11, reference=reference
        )

    seen = {repr(report_for(v)["t"]) for v in (10, 30, 50)}
    assert len(seen) == 1  # what is published does not depend on the suppressed value
    r = report_for(50)
    assert r["t"]["achieved"] is None and "withheld" in r["t"]["note"] and r["t"]["met"] is True
    # the distance itself did depend on it: the exact value would have told them apart
    exact = {
        verify_targets(pd.concat([release, pd.DataFrame({"g": ["c"], "inc": [v]})]), ["g"],
                       targets)["t"]["achieved"]
        for v in (10, 30, 50)
    }  # fmt: skip
    assert len(exact) == 3
    # nothing suppressed: the value is published
    assert verify_targets(release, ["g"], targets, reference=release)["t"]["achieved"] is not None
