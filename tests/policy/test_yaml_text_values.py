"""Policy YAML keeps cell values as written: YAML 1.1 would turn ZIP 01301 into 705.

The data read from a CSV file is text, so a hierarchy (or a label, a constant, a missing-value
marker) written unquoted in a policy or a hierarchy file means the text written, not the
octal number / boolean / base-60 number / float that YAML 1.1 reads.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from veil.cli.main import main
from veil.deid import Policy, apply
from veil.errors import InputError, PolicyError
from veil.io import read
from veil.schema import Hierarchy

# cell -> its level-1 label; every one of them is something else to YAML 1.1 when unquoted:
# 01301 octal 705, No/yes/on/off booleans, 1.50 the float 1.5, 12:30 base-60 750, 0x1F 31,
# 0130 octal 88, 1.0 the float 1.0, 12:00 720, 0x10 16 (02139, 02138, 1e3 are texts to PyYAML,
# kept here as controls)
LABEL = {
    "01301": "0130",
    "01302": "0130",
    "02139": "0213",
    "02138": "0213",
    "No": "off",
    "yes": "off",
    "on": "off",
    "1.50": "1.0",
    "1e3": "1.0",
    "12:30": "12:00",
    "12:45": "12:00",
    "0x1F": "0x10",
    "0x1E": "0x10",
}


def _inline(indent: str) -> str:
    return "".join(f"{indent}{k}: [{v}, '*']\n" for k, v in LABEL.items())


def _csv(tmp_path: Path) -> Path:
    p = tmp_path / "zips.csv"
    p.write_text("zip,n\n" + "".join(f"{k},{i}\n" for i, k in enumerate(LABEL)))
    return p


def _policy(tmp_path: Path, body: str, name: str = "policy.yaml") -> Path:
    p = tmp_path / name
    p.write_text("version: 1\n" + body)
    return p


#: the operator's own hierarchy (a column's hierarchy is the engine's: it must hold the cells
#: the operators leave, see test_engine_generalizes_to_the_written_labels)
OPERATOR = (
    "columns:\n  zip:\n    role: quasi\n    operator:\n      name: generalize\n      level: 1\n"
)
ENGINE = "  n: insensitive\nprivacy: {k: 2, algorithm: optimal, suppression_limit: 0}\n"


def test_inline_hierarchy_keys_and_labels_are_the_text_written(tmp_path: Path) -> None:
    df = read(_csv(tmp_path))
    assert df["zip"].tolist() == list(LABEL)  # the data: text, as written in the file
    pol = _policy(
        tmp_path, OPERATOR + "      hierarchy:\n" + _inline("        ") + "  n: insensitive\n"
    )
    policy = Policy.from_yaml(pol)
    assert list(policy.raw["columns"]["zip"]["operator"]["hierarchy"]) == list(LABEL)
    release, _ = apply(df, policy)
    assert release["zip"].tolist() == [LABEL[k] for k in LABEL]


def test_engine_generalizes_to_the_written_labels(tmp_path: Path) -> None:
    # every cell is unique (k = 2 fails at level 0) and every level-1 label holds 2+ cells
    df = read(_csv(tmp_path))
    pol = _policy(
        tmp_path, "columns:\n  zip:\n    role: quasi\n    hierarchy:\n" + _inline("      ") + ENGINE
    )
    policy = Policy.from_yaml(pol)
    h = policy.columns["zip"].hierarchy
    assert h is not None and h.values == list(LABEL)
    assert sorted(h.labels(1)) == sorted(set(LABEL.values()))
    release, report = apply(df, policy)
    assert release["zip"].tolist() == [LABEL[k] for k in LABEL]
    assert report["targets"]["all_met"] is True


def test_cli_anonymize_with_inline_hierarchy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = _csv(tmp_path)  # the engine's column hierarchy, written inline
    pol = _policy(
        tmp_path, "columns:\n  zip:\n    role: quasi\n    hierarchy:\n" + _inline("      ") + ENGINE
    )
    out = tmp_path / "release"
    rc = main(["anonymize", str(src), "--policy", str(pol), "--out", str(out)])
    assert rc == 0, capsys.readouterr().err
    got = pd.read_csv(out / "zips.csv", dtype=str, keep_default_na=False)
    assert got["zip"].tolist() == [LABEL[k] for k in LABEL]


@pytest.mark.parametrize("form", ["mapping", "rows", "wrapped"])
def test_hierarchy_yaml_file_keeps_the_text(tmp_path: Path, form: str) -> None:
    if form == "rows":
        text = "".join(f"- [{k}, {v}, '*']\n" for k, v in LABEL.items())
    else:
        text = ("hierarchy:\n" + _inline("  ")) if form == "wrapped" else _inline("")
    (tmp_path / "zip.yaml").write_text(text)
    h = Hierarchy.from_yaml(tmp_path / "zip.yaml")
    assert h.values == list(LABEL)
    assert h.generalize(list(LABEL), 1).tolist() == [LABEL[k] for k in LABEL]


def test_hierarchy_file_through_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "zip.yaml").write_text(_inline(""))
    pol = _policy(tmp_path, OPERATOR + "      hierarchy: zip.yaml\n  n: insensitive\n")
    out = tmp_path / "release"
    rc = main(["anonymize", str(_csv(tmp_path)), "--policy", str(pol), "--out", str(out)])
    assert rc == 0, capsys.readouterr().err
    got = pd.read_csv(out / "zips.csv", dtype=str, keep_default_na=False)
    assert got["zip"].tolist() == [LABEL[k] for k in LABEL]


def test_quoted_values_unchanged(tmp_path: Path) -> None:
    quoted = "".join(f"        '{k}': ['{v}', '*']\n" for k, v in LABEL.items())
    pol = _policy(tmp_path, OPERATOR + "      hierarchy:\n" + quoted + "  n: insensitive\n")
    release, _ = apply(read(_csv(tmp_path)), Policy.from_yaml(pol))
    assert release["zip"].tolist() == [LABEL[k] for k in LABEL]


# ------------------------------------------------------------------ numbers and booleans


def _numeric_policy(keys: dict[str, str]) -> dict:
    return {"columns": {"x": {"role": "quasi", "hierarchy": keys}}}


def test_number_cells_match_a_key_written_as_the_same_number(tmp_path: Path) -> None:
    # a column read as numbers: 1.5 matches `1.50`, 1000 `1e3`, 17 `17.0`, True `true`
    # (YAML read 1.50, 17.0 and true as those numbers before: kept; 1e3 was refused)
    gen = "    operator:\n      name: generalize\n      level: 1\n      hierarchy: "
    body = (
        "columns:\n  x:\n    role: quasi\n"
        + gen
        + "{1.50: [low, '*'], 1e3: [high, '*'], 17.0: [mid, '*']}\n"
        + "  b:\n    role: quasi\n"
        + gen
        + "{true: [T, '*'], false: [F, '*']}\n"
    )
    df = pd.DataFrame({"x": [1.5, 1000.0, 17.0], "b": [True, False, True]})
    release, _ = apply(df, Policy.from_yaml(_policy(tmp_path, body)))
    assert release["x"].tolist() == ["low", "high", "mid"]
    assert release["b"].tolist() == ["T", "F", "T"]
    ints = pd.DataFrame({"x": [1000, 17]})
    pol = _policy(tmp_path, body.split("  b:")[0], "ints.yaml")
    assert apply(ints, Policy.from_yaml(pol))[0]["x"].tolist() == ["high", "mid"]


def test_leading_zero_key_is_an_identifier_not_a_number(tmp_path: Path) -> None:
    # int 1301 is ZIP 1301: key `1301` matches it, key `01301` (text, as veil.io reads it) not
    df = pd.DataFrame({"x": [1301, 1401]})
    ok = "columns:\n  x: {role: quasi, hierarchy: {1301: [13, '*'], 1401: [14, '*']}}\n"
    assert Policy.from_yaml(_policy(tmp_path, ok)).columns["x"].hierarchy.missing(df["x"]) == []
    zeros = "columns:\n  x: {role: quasi, hierarchy: {01301: [13, '*'], 01401: [14, '*']}}\n"
    with pytest.raises(PolicyError, match="2 distinct value"):
        apply(df, Policy.from_yaml(_policy(tmp_path, zeros, "zeros.yaml")))


def test_a_number_written_twice_matches_neither() -> None:
    h = Hierarchy.from_mapping({"1.50": ["a", "*"], "1.500": ["b", "*"], "1.5": ["c", "*"]})
    assert h.generalize([1.5, "1.50", "1.500"], 1).tolist() == ["c", "a", "b"]  # exact first
    h2 = Hierarchy.from_mapping({"1.50": ["a", "*"], "1.500": ["b", "*"]})
    assert h2.missing([1.5]) == ["1.5"]
    with pytest.raises(InputError, match="missing from"):
        h2.encode([1.5])


def test_text_cells_are_not_read_as_other_numbers() -> None:
    # a text cell written "1.50" matches only 1.50 (or 1.5 written "1.5": a number's own text)
    h = Hierarchy.from_mapping({"1.5": ["a", "*"], "01301": ["z", "*"]})
    assert h.missing(["1.50", "1301", "0x1F"]) == ["1.50", "1301", "0x1F"]


# ------------------------------------------------------------------ other cell values


def test_operator_constants_labels_and_markers_keep_their_text(tmp_path: Path) -> None:
    body = """\
input: {missing_values: [~, N/A]}
columns:
  a: {role: insensitive, operator: {name: redact, value: No}}
  b: {role: insensitive, operator: {name: redact, value: 0}}
  c: {role: insensitive, operator: {name: redact, value: 1.50}}
  d: {role: insensitive, operator: {name: mask, char: 0}}
  e:
    role: quasi
    operator: {name: generalize, bins: [0, 10, 20], labels: [0010, 12:30]}
  f: {role: insensitive, operator: {name: fake, kind: city, choices: [yes, 01301]}}
  on: {role: sensitive}
privacy: {k: 1, l: {column: on, l: 1}, t: {column: on, t: 1, hierarchy: {No: [yes]}}}
"""
    policy = Policy.from_yaml(_policy(tmp_path, body))
    assert policy.input == {"missing_values": ["~", "N/A"]}
    assert policy.privacy is not None and policy.privacy.l == {"column": "on", "l": 1}
    assert policy.raw["privacy"]["t"]["hierarchy"] == {"No": ["yes"]}
    src = tmp_path / "t.csv"
    src.write_text("a,b,c,d,e,f,on\nx,5,y,abc,5,p,~\nx,6,y,de,15,q,1\n")
    df = read(src, **policy.read_options())
    assert df["on"].isna().tolist() == [True, False]  # `~` is the marker written
    release, _ = apply(df, policy)
    assert release["a"].tolist() == ["No", "No"]
    assert release["b"].tolist() == [0, 0]  # a number written as its number stays one
    assert release["c"].tolist() == ["1.50", "1.50"]
    assert release["d"].tolist() == ["000", "00"]
    assert release["e"].tolist() == ["0010", "12:30"]
    assert set(release["f"]) <= {"yes", "01301"}


def test_numeric_parameters_stay_numbers(tmp_path: Path) -> None:
    body = """\
seed: 0x1F
input: {header: yes}
columns:
  a: {role: quasi, operator: {name: generalize, bins: [0, 1.50, 10]}}
privacy: {k: 0x2, suppression_limit: 0.50}
"""
    policy = Policy.from_yaml(_policy(tmp_path, body))
    assert policy.seed == 31 and policy.input == {"header": True}
    assert policy.privacy is not None and policy.privacy.k == 2
    assert policy.privacy.suppression_limit == 0.5
    assert policy.columns["a"].operators[0].params()["bins"] == [0.0, 1.5, 10.0]


@pytest.mark.parametrize(
    ("cell", "key"),
    [
        ("1301", "01301"),  # a ZIP with its leading zero is another identifier
        ("01301", "1301"),
        (1301, "01301"),
        ("1.0", "1"),  # a text cell matches a number key only by the number's own text
        (True, "1"),  # booleans and numbers are different values
        (1, "true"),
        (False, "0"),
        (0, "false"),
        (float("nan"), "0"),
        (31, "0x1F"),  # YAML 1.1's other integers are texts now, not numbers
        (750, "12:30"),
        (1000, "1_000"),
        (15, "017"),
        (float("inf"), ".inf"),
        (1.5, "1,5"),
        ("1.5", "1.5.0"),
    ],
)
def test_number_fallback_matches_no_other_value(cell, key) -> None:
    """A cell never takes the leaf of a key that is another value (it is reported missing)."""
    h = Hierarchy.from_mapping({key: ["a", "*"], "zz": ["b", "*"]})
    assert len(h.missing(pd.Series([cell], dtype=object))) == 1
    with pytest.raises(InputError, match="missing from"):
        h.generalize(pd.Series([cell], dtype=object), 1)
