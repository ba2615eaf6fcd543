"""Ordered-distance t-closeness on a text column of numbers (a CSV read with ``dtype=str``).

Li, Li & Venkatasubramanian (ICDE 2007) order the values of an ordinal attribute; a text
column whose texts are all numbers is read back as numbers by pandas' default CSV reader, so
its order is the numeric one (``"9" < "10"``), not the text one (``"10" < "9"``).  Texts of one
number (``"1"``, ``"1.0"``) are one value to that reader, two to a reader of the text; the
engine's distance is the larger of the two.  The oracles below compute eq. 2 (mean absolute
cumulative difference) with plain numpy from the values as each reader sees them, sharing no
code with the engine.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from veil.anonymity import AnonymizationConfig, TCloseness, anonymize, check
from veil.deid._targets import verify_targets
from veil.schema import Hierarchy

from .test_release_attacks import ALGOS, LATTICE, _policy, as_read, audit, reader_figures


def ordered_t(groups: np.ndarray, keys: list) -> float:
    """Largest ordered EMD of a class to the table, values ordered by ``keys`` (sortable)."""
    order = sorted(set(keys))
    m = len(order)
    pos = np.array([order.index(k) for k in keys])
    q = np.bincount(pos, minlength=m) / len(pos)
    worst = 0.0
    for g in np.unique(groups):
        p = np.bincount(pos[groups == g], minlength=m) / np.sum(groups == g)
        worst = max(worst, float(np.abs(np.cumsum(p - q)).sum()) / max(m - 1, 1))
    return worst


def number_reader_t(groups: np.ndarray, texts: list[str]) -> float:
    """A reader of numbers: texts of one number are one value, blanks one value after them."""
    return ordered_t(groups, [(1, 0.0) if t == "" else (0, float(t)) for t in texts])


def text_reader_t(groups: np.ndarray, texts: list[str]) -> float:
    """A reader of the texts, ordered by their number (then by text), blanks last."""
    return ordered_t(groups, [(1, 0.0, t) if t == "" else (0, float(t), t) for t in texts])


def _table(groups: str, texts: list[str]) -> pd.DataFrame:
    return pd.DataFrame({"g": list(groups), "s": pd.Series(texts, dtype=object)})


# as text "10" < "100" < "11" < "9": t = 0.139 by the text order, 0.278 by the numbers
_INCOME = ["10", "9", "9", "100", "9", "9", "9", "11", "100", "9", "9", "10"]
_GROUPS = "xxxyyyzzzwww"


def test_text_order_passes_but_numeric_order_does_not() -> None:
    groups = np.array(list(_GROUPS))
    t_text_order = ordered_t(groups, _INCOME)  # the old, lexicographic order
    t_numbers = number_reader_t(groups, _INCOME)
    assert t_text_order < 0.2 < t_numbers  # the table separates the two orders
    df = _table(_GROUPS, _INCOME)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # texts of numbers: no "ordered as text" warning
        r = check(df, "g", t={"s": 0.2}, t_distance="ordered")
    assert not r.holds
    assert r.models[0]["achieved"] == pytest.approx(t_numbers)
    as_numbers = check(df.assign(s=df["s"].astype(float)), "g", t={"s": 0.2}, t_distance="ordered")
    assert r.models[0]["achieved"] == pytest.approx(as_numbers.models[0]["achieved"])


@pytest.mark.parametrize(
    "texts",
    [
        ["1", "1", "1.0", "2", "1.0", "2"],  # the texts' distance is the larger
        ["2", "2", "1.0", "1.0", "1", "1.0"],  # the numbers' distance is the larger
        ["1", "", "1.0", "2", "", "2"],  # blank cells: one value, after the numbers
        ["0.10", "1e-1", "-0", "0", "10", "9"],
    ],
)
def test_texts_of_one_number_measure_the_larger_of_both_readers(texts) -> None:
    groups = np.array(list("xxyyzz"))
    by_text, by_number = text_reader_t(groups, texts), number_reader_t(groups, texts)
    expected = max(by_text, by_number)
    r = check(_table("xxyyzz", texts), "g", t={"s": 1.0}, t_distance="ordered")
    assert r.models[0]["achieved"] == pytest.approx(expected)
    strict = check(_table("xxyyzz", texts), "g", t={"s": expected - 1e-6}, t_distance="ordered")
    assert not strict.holds
    targets = type("T", (), {"k": None, "l": None, "suppression_limit": None})()
    targets.t = {"column": "s", "t": expected - 1e-6, "distance": "ordered"}
    got = verify_targets(_table("xxyyzz", texts), ["g"], targets)["t"]
    assert got["achieved"] == pytest.approx(expected) and not got["met"]


def test_the_two_readers_differ_in_both_directions() -> None:
    """Neither reader's distance bounds the other's: both are needed."""
    groups = np.array(list("xxyyzz"))
    a = ["1", "1", "1.0", "2", "1.0", "2"]
    b = ["2", "2", "1.0", "1.0", "1", "1.0"]
    assert text_reader_t(groups, a) > number_reader_t(groups, a) + 0.1
    assert number_reader_t(groups, b) > text_reader_t(groups, b) + 0.1


def test_non_numeric_text_still_warns() -> None:
    df = _table("xxyy", ["low", "high", "10", "9"])
    with pytest.warns(UserWarning, match="ordered as text"):
        check(df, "g", t={"s": 1.0}, t_distance="ordered")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check(_table("xxyy", ["10", "", "NA", "9"]), "g", t={"s": 1.0}, t_distance="ordered")


@pytest.mark.parametrize(
    ("algorithm", "options"),
    [("optimal", {}), ("heuristic", {}), ("mondrian", {"mode": "strict"})],
)
def test_anonymize_orders_text_numbers_as_numbers(algorithm, options) -> None:
    """The search keeps the classes of the example above only when text order is used."""
    df = _table(_GROUPS, _INCOME)
    qi = {"g": Hierarchy.flat(sorted(set(_GROUPS)))} if algorithm != "mondrian" else ["g"]
    cfg = AnonymizationConfig(
        qi,
        k=2,
        models=[TCloseness("s", 0.2, "ordered")],
        algorithm=algorithm,
        options=options,
        suppression_limit=0.0,
        time_limit=5 if algorithm == "heuristic" else None,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = anonymize(df, cfg)
    groups = res.data["g"].astype(str).to_numpy()
    assert len(np.unique(groups)) < 4  # the original classes are too far from the table
    assert number_reader_t(groups, res.data["s"].tolist()) <= 0.2 + 1e-9


# ------------------------------------- the release as read (oracle: test_release_attacks)


def _text_numbers(with_ties: bool) -> pd.DataFrame:
    """Incomes written as text (a CSV read with dtype=str): as text "10" < "100" < "11" < "9".

    By the text order every class of g is within t = 0.2 of the table; by the numbers class y
    is 0.28 away.  With ``with_ties`` some numbers are written two ways ("9" and "9.0": one
    value to a reader of numbers, two to a reader of the text) and some cells are empty.
    """
    s = ["10", "9", "9", "100", "9", "9", "9", "11", "100", "9", "9", "10"] * 2
    if with_ties:
        s = [{0: "9.0", 5: "1e1", 7: "", 9: "09"}.get(i, v) for i, v in enumerate(s)]
    g = list("xxxyyyzzzwww") * 2
    return pd.DataFrame({"g": g, "s": pd.Series(s, dtype=object), "z": [0, 1] * 12})


@pytest.mark.parametrize("with_ties", [False, True])
@pytest.mark.parametrize(("algorithm", "options"), ALGOS)
def test_ordered_t_on_text_numbers_holds_for_readers_of_text_and_numbers(
    algorithm, options, with_ties
):
    """The ordered distance on a text column of numbers: the release must be within t both
    for a reader of the texts (ordered by their numbers) and for pandas' default reader,
    which reads the column as numbers."""
    df = _text_numbers(with_ties)
    lattice = algorithm in LATTICE
    qi = {"g": Hierarchy.flat(list("wxyz")), "z": Hierarchy.flat([0, 1])} if lattice else ["g", "z"]
    fig = audit(
        df,
        ["g", "z"],
        "s",
        quasi_identifiers=qi,
        k=2,
        models=[TCloseness("s", 0.2, "ordered")],
        suppression_limit=0.0,
        algorithm=algorithm,
        options=options,
        time_limit=5 if algorithm == "heuristic" else None,
    )
    assert fig is not None  # the top node (one class: distance 0) exists
    assert "t_ordered_numbers" in fig  # the oracle read the column as numbers


@pytest.mark.parametrize("with_ties", [False, True])
def test_policy_ordered_t_on_text_numbers_holds_for_readers_of_text_and_numbers(with_ties):
    apply = pytest.importorskip("veil.deid").apply
    df = _text_numbers(with_ties)
    hier = {"g": {x: ["*"] for x in "wxyz"}, "z": {0: ["*"], 1: ["*"]}}
    privacy = {"k": 2, "t": {"column": "s", "t": 0.2, "distance": "ordered"}}
    release, report = apply(df, _policy(hier, "s", privacy))
    assert report["targets"]["all_met"]
    fig = reader_figures(release, ["g", "z"], "s", as_read(df)["s"])
    assert fig["t_ordered"] <= 0.2 + 1e-9 and fig["t_ordered_numbers"] <= 0.2 + 1e-9, fig


# ------------------------------- missing cells: the release writes them as the empty text


def _file_reader_t(groups: list[str], cells: list) -> float:
    """Ordered t of the table written to CSV (missing cells as ``""``, as ``veil.io.write`` and
    ``to_csv`` write them) and read back as text: by number (then text) when every text is a
    number or read as missing, the missing ones last; else by text (lexicographic)."""
    df = pd.DataFrame({"g": groups, "s": pd.Series(cells, dtype=object)})
    return float(reader_figures(df, ["g"], "s", as_read(df)["s"])["t_ordered"])


@pytest.mark.parametrize(
    "pool",
    [
        ["a", "b", "m", "z", None],  # text ordered as text: a missing cell is "" (first)
        ["low", "mid", None, "high"],
        ["1", "2", "10", None, "NA", "?"],  # numbers: the missing ones last, "" first of them
        ["9.0", "1e1", "1", None, "nan", "NA"],
        ["b", "", None, "m"],  # missing cells and "": one text in the file
        ["10", "9", None, "", "NA"],
    ],
)
def test_ordered_t_places_missing_cells_where_the_written_file_shows_them(pool) -> None:
    """A missing cell is written as the empty text: the engine ordered it as ``"nan"`` (between
    ``"m"`` and ``"z"``, or after ``"NA"``), so the file a text reader reads was up to 0.34
    further from the table than the engine's figure.  The engine's distance must be at least
    that reader's for every table (texts of numbers: at least the larger of both readers')."""
    rng = np.random.default_rng(7)
    for _ in range(150):
        n = int(rng.integers(4, 12))
        cells = [pool[i] for i in rng.integers(0, len(pool), n)]
        groups = rng.choice(list("xyz"), n).tolist()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # text ordered as text warns
            r = check(_table("".join(groups), cells), "g", t={"s": 1.0}, t_distance="ordered")
        assert r.models[0]["achieved"] >= _file_reader_t(groups, cells) - 1e-9, (cells, groups)


MISSING_POOLS = [
    ["10", "9", "100", "11", None, "NA"],
    ["a", "m", "z", None],
    ["1", "1.0", "2", None, "?"],
    ["b", "m", "", None],  # missing cells and "": one text in the file
    ["10", "9", "100", None, ""],
]


def _missing_table(rng: np.random.Generator, pool: list) -> pd.DataFrame:
    """24 records: QIs g (4 values) and z (2), sensitive s drawn from ``pool``."""
    return pd.DataFrame(
        {
            "g": rng.choice(list("wxyz"), 24).tolist(),
            "s": pd.Series([pool[i] for i in rng.integers(0, len(pool), 24)], dtype=object),
            "z": rng.integers(0, 2, 24),
        }
    )


@pytest.mark.parametrize("pool", MISSING_POOLS)
@pytest.mark.parametrize(("algorithm", "options"), ALGOS)
def test_releases_with_missing_cells_hold_ordered_t_for_the_file_readers(algorithm, options, pool):
    """Every algorithm's release, written to CSV (missing cells as ``""``) and read back as text
    and as numbers, is within the ordered t it claims (random tables, fixed seed)."""
    rng = np.random.default_rng(3)
    lattice = algorithm in LATTICE
    qi = {"g": Hierarchy.flat(list("wxyz")), "z": Hierarchy.flat([0, 1])} if lattice else ["g", "z"]
    for _ in range(6):
        df = _missing_table(rng, pool)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # text ordered as text warns
            audit(
                df,
                ["g", "z"],
                "s",
                quasi_identifiers=qi,
                k=2,
                models=[TCloseness("s", float(rng.choice([0.15, 0.2, 0.3])), "ordered")],
                suppression_limit=0.0,
                algorithm=algorithm,
                options=options,
                time_limit=5 if algorithm == "heuristic" else None,
            )


@pytest.mark.parametrize("pool", MISSING_POOLS)
def test_policy_releases_with_missing_cells_hold_ordered_t_for_the_file_readers(pool):
    """veil.apply's target check measures the views the engine does: a release it reports
    as meeting an ordered t is within t for readers of the written file."""
    apply = pytest.importorskip("veil.deid").apply
    rng = np.random.default_rng(5)
    hier = {"g": {x: ["*"] for x in "wxyz"}, "z": {0: ["*"], 1: ["*"]}}
    privacy = {"k": 2, "t": {"column": "s", "t": 0.2, "distance": "ordered"}}
    met = 0
    for _ in range(8):
        df = _missing_table(rng, pool)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # text ordered as text warns
            release, report = apply(df, _policy(hier, "s", privacy))
        if not report["targets"]["all_met"]:
            continue
        met += 1
        fig = reader_figures(release, ["g", "z"], "s", as_read(df)["s"])
        assert fig["t_ordered"] <= 0.2 + 1e-9, fig
        assert fig.get("t_ordered_numbers", 0.0) <= 0.2 + 1e-9, fig
    assert met  # the policy met its targets on some tables: the assertions ran


# ------------------------- booleans written in mixed case: a reader reads them as booleans


def test_ordered_t_on_mixed_case_booleans_holds_for_a_reader_of_booleans() -> None:
    """pandas' default reader reads ``"False"``/``"false"`` as one boolean; the ordered
    distance must hold for that reader too (merging neighbours can raise it), not only over
    the written texts.  The reader's figure is that of the same table with the texts
    lower-cased (one text per boolean)."""
    s = ["False", "false", "False", "false", "True", "true", "True", "true"]
    df = pd.DataFrame({"q": list("AAAABBBB"), "s": s})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # text order warning
        got = check(df, "q", t={"s": 0.3}, t_distance="ordered").models[0]["achieved"]
        reader = check(df.assign(s=df.s.str.lower()), "q", t={"s": 0.3}, t_distance="ordered")
    want = reader.models[0]["achieved"]
    assert want > 0.3  # the reader sees each class hold one boolean of two
    assert got >= want - 1e-12
    targets = type("T", (), {"k": None, "l": None, "suppression_limit": None})()
    targets.t = {"column": "s", "t": 0.3, "distance": "ordered"}
    out = verify_targets(df, ["q"], targets)
    assert out["t"]["achieved"] >= want - 1e-12 and not out["t"]["met"]
