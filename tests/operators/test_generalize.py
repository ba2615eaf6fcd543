"""generalize: bins, hierarchies, dates, postcodes, binary split."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _helpers import ctx, people

from veil.deid.operators import get_operator
from veil.errors import ConfigError, InputError


def test_custom_bins_like_pd_cut() -> None:
    out = get_operator("generalize", {"bins": [0, 30, 50, 120]}).apply(people(), "age", ctx())
    assert out["age"].tolist() == ["[0, 30)", "[30, 50)", "[50, 120]", "[0, 30)", "[50, 120]"]
    out = get_operator("generalize", {"bins": [0, 30, 50, 120], "right": True}).apply(
        pd.DataFrame({"a": [0, 30, 31, 120]}), "a", ctx()
    )
    assert out["a"].tolist() == ["[0, 30]", "[0, 30]", "(30, 50]", "(50, 120]"]
    # same partition as pandas
    x = np.arange(0, 121)
    ours = get_operator("generalize", {"bins": [0, 30, 50, 120], "right": True}).apply(
        pd.DataFrame({"x": x}), "x", ctx()
    )["x"]
    theirs = pd.cut(x, [0, 30, 50, 120], right=True, include_lowest=True).codes
    assert (pd.factorize(ours)[0] == theirs).all()


def test_labels_and_out_of_range() -> None:
    op = get_operator("generalize", {"bins": [0, 40, 100], "labels": ["young", "old"]})
    assert op.apply(people(), "age", ctx())["age"].tolist() == [
        "young",
        "young",
        "old",
        "young",
        "old",
    ]
    with pytest.raises(InputError, match="outside the bins"):
        get_operator("generalize", {"bins": [30, 60]}).apply(people(), "age", ctx())
    out = get_operator("generalize", {"bins": [30, 60], "out_of_range": "missing"}).apply(
        people(), "age", ctx()
    )
    assert out["age"].isna().tolist() == [True, False, True, True, False]


def test_equal_width_and_quantile_bins() -> None:
    df = pd.DataFrame({"x": np.arange(100.0)})
    ew = get_operator("generalize", {"bins": 4}).apply(df, "x", ctx())["x"]
    assert ew.value_counts().tolist() == [25, 25, 25, 25]
    assert ew.iloc[0] == "[0, 24.75)" and ew.iloc[99] == "[74.25, 99]"
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.lognormal(size=1000)})
    q = get_operator("generalize", {"bins": 5, "strategy": "quantile"}).apply(df, "x", ctx())["x"]
    assert sorted(q.value_counts().tolist()) == [200] * 5


def test_missing_values_stay_missing() -> None:
    out = get_operator("generalize", {"bins": 2}).apply(people(), "income", ctx())
    assert out["income"].isna().tolist() == [False] * 4 + [True]


def test_hierarchy_from_csv(adult_hierarchies: Path) -> None:
    df = pd.DataFrame({"age": [17, 38, 90, 38], "edu": ["Bachelors", "11th", "Doctorate", None]})
    op = get_operator("generalize", {"hierarchy": str(adult_hierarchies / "age.csv"), "level": 2})
    assert op.apply(df, "age", ctx())["age"].tolist() == [
        "[10, 20[",
        "[30, 40[",
        ">=80",
        "[30, 40[",
    ]
    op = get_operator("generalize", {"hierarchy": "education.csv", "level": 1})
    out = op.apply(df, "edu", ctx(base_dir=str(adult_hierarchies)))["edu"]
    assert out.iloc[:3].tolist() == ["Undergraduate", "High School", "Graduate"]
    assert pd.isna(out.iloc[3])
    with pytest.raises(ConfigError, match="too high"):
        get_operator("generalize", {"hierarchy": "education.csv", "level": 9}).apply(
            df, "edu", ctx(base_dir=str(adult_hierarchies))
        )


def test_hierarchy_mapping_context_and_missing_values() -> None:
    from veil.schema import Hierarchy

    mapping = {"Nairobi": ["Central", "*"], "Kisumu": ["West", "*"]}
    df = pd.DataFrame({"county": ["Nairobi", "Kisumu", "Lamu", "Isiolo"]})
    op = get_operator("generalize", {"hierarchy": mapping, "level": 1})
    with pytest.raises(InputError, match="2 distinct value.*'county' missing") as info:
        op.apply(df, "county", ctx())
    assert "Lamu" not in str(info.value)  # counted, not quoted: errors end up in logs
    h = Hierarchy.from_mapping(mapping)
    out = get_operator("generalize", {"level": 1}).apply(
        df.iloc[:2], "county", ctx(hierarchies={"county": h})
    )
    assert out["county"].tolist() == ["Central", "West"]
    with pytest.raises(ConfigError, match="no hierarchy"):
        get_operator("generalize", {"level": 1}).apply(df, "county", ctx())


def test_yaml_hierarchy(tmp_path: Path) -> None:
    (tmp_path / "h.yaml").write_text("F: [person, '*']\nM: [person, '*']\n")
    out = get_operator("generalize", {"hierarchy": "h.yaml", "level": 1}).apply(
        people(), "sex", ctx(base_dir=str(tmp_path))
    )
    assert set(out["sex"]) == {"person"}


def test_date_truncation_strings_and_datetimes() -> None:
    s = ["2021-05-17", "1984-11-02", None]
    df = pd.DataFrame({"d": s, "dt": pd.to_datetime(s)})
    for col in ("d", "dt"):
        for level, want in [
            ("day", ["2021-05-17", "1984-11-02"]),
            ("month", ["2021-05", "1984-11"]),
            ("quarter", ["2021-Q2", "1984-Q4"]),
            ("year", ["2021", "1984"]),
            ("decade", ["2020s", "1980s"]),
        ]:
            out = get_operator("generalize", {"date": level}).apply(df, col, ctx())[col]
            assert out.iloc[:2].tolist() == want and pd.isna(out.iloc[2])
    with pytest.raises(InputError, match="not dates"):
        get_operator("generalize", {"date": "year"}).apply(
            pd.DataFrame({"d": ["soon"]}), "d", ctx()
        )


def test_postcode_prefix() -> None:
    out = get_operator("generalize", {"keep": 3}).apply(people(), "zip", ctx())
    assert out["zip"].tolist() == ["021**", "021**", "100**", "021**", "941**"]
    out = get_operator("generalize", {"keep": 2, "pad": ""}).apply(people(), "zip", ctx())
    assert out["zip"].tolist() == ["02", "02", "10", "02", "94"]


def test_binary_split() -> None:
    df = pd.DataFrame({"x": [1.0, 2.0, 3.0, 10.0, np.nan]})
    out = get_operator("generalize", {"split": "median"}).apply(df, "x", ctx())["x"]
    assert out.iloc[:4].tolist() == ["< 2.5", "< 2.5", ">= 2.5", ">= 2.5"] and pd.isna(out.iloc[4])
    out = get_operator("generalize", {"split": "mean"}).apply(df, "x", ctx())["x"]
    assert out.iloc[:4].tolist() == ["< 4", "< 4", "< 4", ">= 4"]


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"bins": 3, "keep": 2},
        {"bins": [3, 2]},
        {"bins": [1]},
        {"bins": "ten"},
        {"bins": [0, 1, 2], "labels": ["a"]},
        {"date": "week"},
        {"split": "mode"},
        {"keep": -1},
        {"hierarchy": 5, "level": 1},
        {"hierarchy": "x.csv"},
    ],
)
def test_bad_params(params: dict) -> None:
    with pytest.raises(ConfigError):
        get_operator("generalize", params)


def test_non_numeric_column_for_bins() -> None:
    with pytest.raises(InputError, match="not numeric"):
        get_operator("generalize", {"bins": 3}).apply(people(), "sex", ctx())


@pytest.mark.parametrize(
    ("op", "params", "leaked"),
    [
        ("generalize", {"bins": 4}, "minimum and maximum"),
        ("generalize", {"bins": 3, "strategy": "quantile"}, "quantiles"),
        ("top_bottom_code", {"top_percentile": 100}, "percentile"),
    ],
)
def test_data_derived_edges_are_flagged_in_the_report(op: str, params: dict, leaked: str) -> None:
    """Edges or codes taken from the data publish the data's extremes (an outlier's exact age
    as the last bin edge): the run's report says so, once per column; explicit edges do not."""
    df = pd.DataFrame({"age": [23, 37, 64, 51, 117]})
    c = ctx()
    out = get_operator(op, params).apply(df, "age", c)
    get_operator(op, params).apply(df, "age", c)  # a second application: still one note
    assert len(c.warnings) == 1 and "'age'" in c.warnings[0] and leaked in c.warnings[0]
    if op == "generalize" and "strategy" not in params:
        assert any("117" in str(v) for v in out["age"])  # the leak the warning is about
    fixed = ctx()
    get_operator("generalize", {"bins": [0, 40, 80, 200]}).apply(df, "age", fixed)
    get_operator("top_bottom_code", {"top": 90}).apply(df, "age", fixed)
    assert fixed.warnings == []
