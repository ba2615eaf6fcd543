"""The report's "k-anonymity engine" section: node / partitions, suppression, risk before and
after, utility and the class-size histogram, rendered from the engine summary (any algorithm)."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from veil.report import render_html
from veil.report._anonymity_view import anonymity_view, class_size_histogram_html, fmt_num

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


class _Tables(HTMLParser):
    """Collect every <table class="..."> as rows of (cell text, cell attributes)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[tuple[str, dict[str, str]]]]] = {}
        self.row_attrs: dict[str, list[dict[str, str]]] = {}
        self._table: str | None = None
        self._cell: list[str] | None = None
        self._attrs: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "table":
            self._table = a.get("class", "")
            self.tables[self._table] = []
            self.row_attrs[self._table] = []
        elif tag == "tr" and self._table is not None:
            self.tables[self._table].append([])
            self.row_attrs[self._table].append(a)
        elif tag in ("td", "th") and self._table is not None:
            self._cell, self._attrs = [], a

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._table is not None:
            text = re.sub(r"\s+", " ", "".join(self._cell)).strip()
            self.tables[self._table][-1].append((text, self._attrs))
            self._cell = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _render(summary: dict[str, Any] | None) -> str:
    """A real report (from ``veil.deid.apply``) with ``summary`` as its engine section."""
    import pandas as pd

    from veil.deid import apply

    _, rep = apply(pd.DataFrame({"age": [30, 31, 30]}), {"columns": {"age": "quasi"}})
    rep.pop("anonymity", None)
    if summary is not None:
        rep["anonymity"] = summary
    return render_html(rep)


def _tables(html: str) -> _Tables:
    p = _Tables()
    p.feed(html)
    return p


def _pct(v: float) -> str:
    return f"{100 * v:.1f}%"


def _hist(counts: dict[str, tuple[int, int]]) -> list[dict[str, Any]]:
    labels = ["1", "2", "3-4", "5-9", "10-19", "20-49", "50-99", "100+"]
    return [
        {"size": s, "classes": counts.get(s, (0, 0))[0], "records": counts.get(s, (0, 0))[1]}
        for s in labels
    ]


def _risk(records: int, classes: int, hist: dict[str, tuple[int, int]], **kw: Any) -> dict:
    out = {
        "records": records,
        "classes": classes,
        "threshold": 0.2,
        "prosecutor": {"highest": 1.0, "average": classes / records, "records_at_risk": 0.5},
        "journalist": None,
        "marketer": classes / records,
        "sample_uniqueness": 0.25,
        "population_uniqueness": None,
        "class_sizes": _hist(hist),
    }
    out.update(kw)
    return out


OPTIMAL = {
    "algorithm": "optimal",
    "models": [{"model": "k-anonymity", "k": 5}],
    "quasi_identifiers": ["age", "zip"],
    "sensitive": ["ill"],
    "suppression_limit": 0.05,
    "records": 100,
    "suppressed": 4,
    "suppressed_share": 0.04,
    "classes": 12,
    "node": {"age": 2, "zip": 0},
    "n_nodes_checked": 7,
    "n_nodes_total": 12,
    "optimal": True,
    "objective": "loss",
    "objective_value": 0.25,
    "utility": {"loss": 0.25, "precision": 0.5, "dm": 1234.0, "aecs": 8.0},
    "risk_before": _risk(100, 80, {"1": (70, 70), "2": (5, 10), "5-9": (5, 20)}),
    "risk_after": _risk(
        96,
        12,
        {"5-9": (10, 60), "20-49": (2, 36)},
        prosecutor={"highest": 0.2, "average": 0.125, "records_at_risk": 0.0},
        sample_uniqueness=0.0,
    ),
    "elapsed_s": 0.01,
    "release_records": 96,
    "suppressed_records": "dropped",
}


def test_optimal_summary_rows() -> None:
    v = anonymity_view(OPTIMAL)
    assert v is not None
    assert v["transformation"]["kind"] == "node"
    assert [(r["qi"], r["level"]) for r in v["transformation"]["rows"]] == [
        ("age", "2"),
        ("zip", "0"),
    ]
    assert v["suppression"] == "4 of 100 records (4.0%); limit 5.0%; dropped from the release"
    risk = {r["label"]: (r["before"], r["after"]) for r in v["risk"]}
    assert risk["prosecutor risk: highest"] == ("100.0%", "20.0%")
    assert risk["prosecutor risk: average"] == ("80.0%", "12.5%")
    assert risk["prosecutor risk: records at risk (risk > 20.0%)"] == ("50.0%", "0.0%")
    assert risk["marketer risk (expected share re-identified)"] == ("80.0%", "12.5%")
    assert risk["sample uniqueness (records alone in their class)"] == ("25.0%", "0.0%")
    assert risk["journalist risk"] == ("n/a", "n/a")
    assert risk["population uniqueness (estimate)"] == ("n/a", "n/a")
    assert any("population table" in n for n in v["risk_notes"])
    util = {r["name"]: r["value"] for r in v["utility"]}
    assert util == {"loss": "0.25", "precision": "0.5", "dm": "1,234", "aecs": "8"}
    assert all(r["meaning"] for r in v["utility"])
    assert v["k"] == 5 and json.loads(v["raw_json"]) == OPTIMAL


def test_histogram_html_numbers_and_flags() -> None:
    h = class_size_histogram_html(
        OPTIMAL["risk_before"]["class_sizes"], OPTIMAL["risk_after"]["class_sizes"], k=5
    )
    t = _tables(f"<div>{h}</div>")
    rows = t.tables["hist"][1:]
    attrs = t.row_attrs["hist"][1:]
    sizes = [a["data-size"] for a in attrs]
    assert sizes == ["1", "2", "3-4", "5-9", "10-19", "20-49", "50-99", "100+"]
    by = {a["data-size"]: r for a, r in zip(attrs, rows)}
    before = {s: int(r[1][1]["data-records"]) for s, r in by.items()}
    after = {s: int(r[2][1]["data-records"]) for s, r in by.items()}
    assert before["1"] == 70 and before["2"] == 10 and before["5-9"] == 20
    assert after["5-9"] == 60 and after["20-49"] == 36 and sum(after.values()) == 96
    assert by["1"][1][1]["data-classes"] == "70" and by["20-49"][2][1]["data-classes"] == "2"
    assert "60 (62.5%) · 10 classes" in by["5-9"][2][0]
    flagged = {s for s, r in by.items() if "below k" in r[0][0]}
    assert flagged == {"1", "2", "3-4"}
    # bars proportional to the share of records (60% of the cell for 100%)
    assert 'style="width:42.00%"' in h  # 70 of 100 records before
    assert class_size_histogram_html(None, []) is None


def test_mondrian_summary_partitions() -> None:
    s = {
        **{k: v for k, v in OPTIMAL.items() if k not in ("node", "n_nodes_total", "optimal")},
        "algorithm": "mondrian",
        "node": None,
        "n_nodes_checked": 0,
        "n_nodes_total": None,
        "optimal": None,
        "suppressed": 0,
        "suppressed_share": 0.0,
        "utility": {"ncp": 0.3, "column_ncp": {"age": 0.5, "zip": 0.1}, "dm": 900, "cavg": 1.3},
        "mondrian_mode": "strict",
        "qi_kinds": {"age": "numeric", "zip": "hier"},
        "class_sizes": {"min": 5, "max": 11, "mean": 6.5},
    }
    v = anonymity_view(s)
    assert v is not None
    tr = v["transformation"]
    assert tr["kind"] == "partitions"
    assert tr["text"] == "12 partitions (equivalence classes); class sizes 5 to 11, mean 6.5."
    assert tr["rows"] == [
        {"qi": "age", "kind": "numeric interval", "ncp": "50.0%"},
        {"qi": "zip", "kind": "hierarchy", "ncp": "10.0%"},
    ]
    labels = [r["label"] for r in v["overview"]]
    assert "lattice nodes checked" not in labels and "optimality proved" not in labels
    assert "Mondrian" in v["overview"][0]["value"] and "strict" in v["overview"][0]["value"]
    assert v["suppression"] == "0 of 100 records (0.0%); limit 5.0%"
    assert [r["name"] for r in v["utility"]] == ["ncp", "dm", "cavg"]


def test_journalist_and_population_uniqueness_when_available() -> None:
    s = dict(OPTIMAL)
    jb = {"highest": 0.5, "average": 0.1, "records_at_risk": 0.3}
    ja = {"highest": 0.05, "average": 0.01, "records_at_risk": 0.0}
    s["risk_before"] = {**s["risk_before"], "journalist": jb, "population_uniqueness": 0.12}
    s["risk_after"] = {**s["risk_after"], "journalist": ja, "population_uniqueness": 0.0}
    v = anonymity_view(s)
    assert v is not None
    risk = {r["label"]: (r["before"], r["after"]) for r in v["risk"]}
    assert risk["journalist risk: highest"] == ("50.0%", "5.0%")
    assert risk["journalist risk: average"] == ("10.0%", "1.0%")
    assert risk["journalist risk: records at risk (risk > 20.0%)"] == ("30.0%", "0.0%")
    assert risk["population uniqueness (estimate)"] == ("12.0%", "0.0%")
    assert "journalist risk" not in risk and not v["risk_notes"]


@pytest.mark.parametrize(
    "summary",
    [
        {"algorithm": "heuristic"},
        {"algorithm": "mdav", "utility": {"info_loss": 0.1, "sse": 1.0, "sst": 10.0}},
        {"records": 5, "risk_before": {"records": 5}, "risk_after": None},
        {"node": {}, "utility": None, "models": None, "risk_before": {"class_sizes": None}},
    ],
)
def test_missing_keys_render(summary: dict[str, Any]) -> None:
    v = anonymity_view(summary)
    assert v is not None
    html = _render(summary)
    assert "k-anonymity engine" in html and "<details>" in html


def test_no_summary() -> None:
    assert anonymity_view(None) is None and anonymity_view({}) is None
    html = _render(None)
    assert "k-anonymity engine" not in html


def test_values_are_escaped() -> None:
    evil = '<script>alert("x")</script>'
    s = {
        **OPTIMAL,
        "algorithm": evil,
        "quasi_identifiers": [evil],
        "node": {evil: 1},
        "utility": {evil: 1.0},
        "risk_before": {
            **OPTIMAL["risk_before"],
            "class_sizes": [{"size": evil, "classes": 1, "records": 1}],
        },
    }
    html = _render(s)
    assert "<script>" not in html and "&lt;script&gt;" in html


def _anonymize(tmp_path: Path, insurance_csv: Path, policy: Path) -> tuple[dict, str]:
    pytest.importorskip("veil.anonymity._policy_bridge")
    from veil.cli.main import main

    out = tmp_path / "out"
    assert main(["anonymize", str(insurance_csv), "--policy", str(policy), "--out", str(out)]) == 0
    return json.loads((out / "report.json").read_text()), (out / "report.html").read_text()


def _check_common(a: dict, html: str) -> _Tables:
    assert not re.search(r"(src|href)=\"https?://", html)  # self-contained
    assert "<pre>{" not in html.split("<details>")[0]  # the raw dump only in <details>
    t = _tables(html)
    risk = {r[0][0]: (r[1][0], r[2][0]) for r in t.tables["anon-risk"][1:]}
    rb, ra = a["risk_before"], a["risk_after"]
    assert risk["prosecutor risk: highest"] == (
        _pct(rb["prosecutor"]["highest"]),
        _pct(ra["prosecutor"]["highest"]),
    )
    assert risk["prosecutor risk: average"] == (
        _pct(rb["prosecutor"]["average"]),
        _pct(ra["prosecutor"]["average"]),
    )
    assert risk["prosecutor risk: records at risk (risk > 20.0%)"] == (
        _pct(rb["prosecutor"]["records_at_risk"]),
        _pct(ra["prosecutor"]["records_at_risk"]),
    )
    assert risk["sample uniqueness (records alone in their class)"] == (
        _pct(rb["sample_uniqueness"]),
        _pct(ra["sample_uniqueness"]),
    )
    hist = t.tables["hist"][1:]
    for side, col in (("risk_before", 1), ("risk_after", 2)):
        got = [(int(r[col][1]["data-records"]), int(r[col][1]["data-classes"])) for r in hist]
        assert got == [(b["records"], b["classes"]) for b in a[side]["class_sizes"]]
    assert sum(int(r[2][1]["data-records"]) for r in hist) == a["release_records"]
    kv = {r[0][0]: r[1][0] for r in t.tables["kv"]}
    assert kv["suppressed records"].startswith(f"{a['suppressed']:,} of {a['records']:,} records")
    assert [c[0] for c in t.tables["utility"][0]] == ["metric", "before", "after", "meaning"]
    util = {r[0][0]: (r[1][0], r[2][0]) for r in t.tables["utility"][1:]}
    assert set(util) == set(a["utility"]) - {"column_ncp"}
    assert set(a["utility_before"]) == set(a["utility"])
    for name, (before, after) in util.items():
        assert before == fmt_num(a["utility_before"][name])
        assert after == fmt_num(a["utility"][name])
    return t


def test_report_html_optimal_insurance(tmp_path: Path, insurance_csv: Path) -> None:
    rep, html = _anonymize(tmp_path, insurance_csv, EXAMPLES / "insurance_ke.yaml")
    a = rep["anonymity"]
    t = _check_common(a, html)
    node = {r[0][0]: r[1][0].split()[0] for r in t.tables["node"][1:]}
    assert node == {q: str(lv) for q, lv in a["node"].items()}
    kv = {r[0][0]: r[1][0] for r in t.tables["kv"]}
    assert kv["lattice nodes checked"] == f"{a['n_nodes_checked']} of {a['n_nodes_total']}"
    assert "dropped from the release" in kv["suppressed records"] and a["suppressed"] > 0
    # what was suppressed: counts per class size at the node and per violated model
    by_size = t.tables["suppressed-by-size"][1:]
    assert sum(int(r[1][0].replace(",", "")) for r in by_size) == a["suppressed"]
    assert [r[0][0] for r in by_size] == [b["size"] for b in a["suppression"]["by_class_size"]]
    by_model = {r[0][0]: int(r[1][0].replace(",", "")) for r in t.tables["suppressed-by-model"][1:]}
    assert by_model == a["suppression"]["by_model"] and max(by_model.values()) > 0
    # the before column of utility: no generalization loss on the original
    util = {r[0][0]: r[1][0] for r in t.tables["utility"][1:]}
    assert util["loss"] == "0" and util["precision"] == "0"


def test_report_html_mondrian_insurance(tmp_path: Path, insurance_csv: Path) -> None:
    text = (EXAMPLES / "insurance_ke.yaml").read_text()
    text = text.replace("algorithm: optimal", "algorithm: mondrian")
    text = text.replace("hierarchy: hierarchies/", f"hierarchy: {EXAMPLES / 'hierarchies'}/")
    policy = tmp_path / "mondrian.yaml"
    policy.write_text(text)
    rep, html = _anonymize(tmp_path, insurance_csv, policy)
    a = rep["anonymity"]
    assert a["algorithm"] == "mondrian"
    t = _check_common(a, html)
    assert "node" not in t.tables
    parts = {r[0][0]: r[2][0] for r in t.tables["partitions"][1:]}
    assert parts == {q: _pct(v) for q, v in a["utility"]["column_ncp"].items()}
    assert f"{a['classes']:,} partitions (equivalence classes)" in html


def test_view_suppression_breakdown_and_classification_rows() -> None:
    s = dict(
        OPTIMAL,
        utility_before={"loss": 0.0, "dm": 300.0},
        suppression={
            "by_class_size": [
                {"size": "1", "classes": 3, "records": 3},
                {"size": "2", "classes": 0, "records": 0},
            ],
            "by_model": {"k-anonymity(k=5)": 3},
        },
        classification_utility={
            "target": "ill",
            "model": "logistic",
            "original_accuracy": 0.8,
            "release_accuracy": 0.7,
            "baseline_accuracy": 0.6,
            "accuracy_loss": 0.1,
            "n_test": 30,
        },
    )
    v = anonymity_view(s)
    assert v is not None
    rows = {r["name"]: (r["before"], r["value"]) for r in v["utility"]}
    assert rows["loss"] == ("0", "0.25") and rows["dm"] == ("300", "1,234")
    assert rows["precision"] == ("n/a", "0.5")  # missing before value
    assert v["suppressed_by_size"][0] == {"size": "1", "records": "3", "classes": "3"}
    assert v["suppressed_by_model"] == [{"model": "k-anonymity(k=5)", "records": "3"}]
    cls = {r["label"]: r["value"] for r in v["classification"]}
    assert cls["accuracy, trained on the original"] == "80.0%"
    assert cls["accuracy, trained on the release"] == "70.0%"
    assert cls["majority-class baseline"] == "60.0%"
    t = _tables(_render(s))
    got = {r[0][0]: r[1][0] for r in t.tables["classification"]}
    assert got["target column"] == "ill" and got["majority-class baseline"] == "60.0%"
    assert [r[0][0] for r in t.tables["suppressed-by-size"][1:]] == ["1", "2"]
    # without the optional keys, no such tables
    t0 = _tables(_render(OPTIMAL))
    assert "classification" not in t0.tables and "suppressed-by-size" not in t0.tables


def test_records_at_risk_threshold_is_explained() -> None:
    v = anonymity_view(
        {
            "algorithm": "optimal",
            "risk_before": {"threshold": 0.1, "prosecutor": {"records_at_risk": 0.5}},
            "risk_after": {"threshold": 0.1, "prosecutor": {"records_at_risk": 0.0}},
        }
    )
    labels = [r["label"] for r in v["risk"]]
    assert "prosecutor risk: records at risk (risk > 10.0%)" in labels
    note = v["risk_threshold"]
    assert "exceeds 10.0%" in note and "fewer than 10 records" in note
