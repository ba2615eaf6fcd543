"""Policy parsing and validation: errors name the key and the line."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from veil.deid import Policy, apply
from veil.errors import PolicyError
from veil.schema import Role

GOOD = """\
version: 1
key: {env: MY_KEY}
locale: fr_FR
seed: 3
columns:
  id:      {role: identifier, operator: drop}
  email:   {role: identifier, operator: {name: mask, kind: email}}
  Age:
    role: quasi
    operator:
      - {name: generalize, bins: [0, 30, 50, 120]}
  County:  {role: quasi, hierarchy: county.csv}
  Illness: sensitive
suppress: "Age < 18"
privacy:
  k: 5
  l: {column: Illness, l: 2, variant: distinct}
  suppression_limit: 0.05
"""


def _write(tmp_path: Path, text: str, name: str = "p.yaml") -> Path:
    (tmp_path / "county.csv").write_text("Nairobi,Central,*\nKisii,West,*\n")
    p = tmp_path / name
    p.write_text(text)
    return p


def _line_of(text: str, needle: str) -> int:
    for i, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return i
    raise AssertionError(needle)


def test_good_policy(tmp_path: Path) -> None:
    p = Policy.from_yaml(_write(tmp_path, GOOD))
    assert list(p.columns) == ["id", "email", "Age", "County", "Illness"]
    assert p.columns["Illness"].role is Role.SENSITIVE
    assert [o.name for o in p.columns["Age"].operators] == ["generalize"]
    assert p.columns["County"].hierarchy is not None and p.columns["County"].hierarchy.height == 3
    assert (
        p.privacy is not None
        and p.privacy.k == 5
        and p.privacy.l == {"column": "Illness", "l": 2, "variant": "distinct"}
    )
    assert p.privacy.algorithm is None and p.suppress == ["Age < 18"]
    assert p.quasi_identifiers == ["Age", "County"] and p.sensitive == ["Illness"]
    assert (p.locale, p.seed, p.key) == ("fr_FR", 3, {"env": "MY_KEY"})
    assert p.line("columns", "County") == _line_of(GOOD, "County:")


BAD_CASES = [
    # (replace this, with this, expected key path, line needle, message fragment)
    ("locale: fr_FR", "locale: fr_FR\ncolour: blue", "colour", "colour:", "unknown key"),
    ("  Illness: sensitive", "  Illness: {operator: drop}", "columns.Illness", "Illness:", "role"),
    (
        "  Illness: sensitive",
        "  Illness: {role: secret}",
        "columns.Illness.role",
        "Illness:",
        "must be one of",
    ),
    (
        "{name: mask, kind: email}",
        "{name: maskk}",
        "columns.email.operator",
        "email:",
        "unknown operator 'maskk'",
    ),
    (
        "{name: mask, kind: email}",
        "{name: mask, kind: sideways}",
        "columns.email.operator",
        "email:",
        "kind",
    ),
    (
        "bins: [0, 30, 50, 120]",
        "bins: [0, 50, 30]",
        "columns.Age.operator[0]",
        "bins:",
        "column 'Age'",
    ),
    (
        "hierarchy: county.csv",
        "hierarchy: nope.csv",
        "columns.County.hierarchy",
        "County:",
        "not found",
    ),
    ("  k: 5", "  k: 0", "privacy.k", "k: 0", "at least 1"),
    ("  k: 5", "  k: 5\n  algorithm: magic", "privacy.algorithm", "algorithm", "must be one of"),
    ("l: {column: Illness", "l: {column: Age", "privacy.l.column", "l: {", "sensitive"),
    ("version: 1", "version: 2", "version", "version", "unsupported"),
    ("  k: 5", "  k: 5\n  population: 3", "privacy.population", "population", "text"),
    ("  k: 5", "  k: 5\n  utility_target: [a]", "privacy.utility_target", "utility_t", "text"),
    ("  k: 5", "  k: 5\n  population: pop.csv", "privacy.population", "population", "needs"),
    ("  k: 5", "  k: 5\n  utility_target: y", "privacy.utility_target", "utility_t", "needs"),
    ('suppress: "Age < 18"', 'suppress: "Age <<< 18"', "suppress", "suppress", ""),
    (
        "  id:      {role: identifier, operator: drop}",
        "  id: {role: identifier, operator: drop}\n  id: {role: quasi}",
        "columns.id",
        "id: {role: quasi}",
        "duplicate key",
    ),
    ("  k: 5", "  k: [5", "", "k: [5", "invalid YAML"),
]


@pytest.mark.parametrize("old,new,key,needle,fragment", BAD_CASES)
def test_errors_name_key_and_line(
    tmp_path: Path, old: str, new: str, key: str, needle: str, fragment: str
) -> None:
    assert old in GOOD
    text = GOOD.replace(old, new)
    with pytest.raises(PolicyError) as info:
        Policy.from_yaml(_write(tmp_path, text))
    msg = str(info.value)
    assert "\n" not in msg
    line = int(re.search(r"line (\d+)", msg).group(1))  # type: ignore[union-attr]
    expected = _line_of(text, needle)
    assert abs(line - expected) <= 1, (msg, expected)
    assert msg.startswith("p.yaml, line")
    if key:
        assert f": {key}:" in msg, msg
    assert fragment in msg, msg


def test_missing_policy_file(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="not found"):
        Policy.from_yaml(tmp_path / "none.yaml")


def test_not_a_mapping(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="mapping"):
        Policy.from_yaml(_write(tmp_path, "- a\n- b\n"))


def test_from_dict_and_list_of_operators() -> None:
    p = Policy.from_dict(
        {"columns": {"x": {"role": "quasi", "operator": ["drop"]}}, "default_role": "insensitive"}
    )
    assert p.default_role is Role.INSENSITIVE and p.columns["x"].operators[0].name == "drop"


def test_unknown_column_checked_against_data(tmp_path: Path) -> None:
    text = "columns:\n  a: quasi\n  Ag: quasi\n"
    p = Policy.from_yaml(_write(tmp_path, text))
    with pytest.raises(PolicyError, match=r"line 3: columns.Ag: unknown column 'Ag'"):
        p.check_columns(pd.DataFrame({"a": [1], "ag": [2]}))


@pytest.mark.parametrize(
    ("cond", "want", "not_want"),
    [
        ("Agee > 80", "unknown column 'Agee': not in the data", "quotes"),
        ("age > 80", "unknown column 'age': not in the data (did you mean 'Age'?)", "quotes"),
        ("County == Nairobi", "unknown column 'Nairobi': not in the data (a text value needs "
         "quotes: 'Nairobi')", "did you mean"),
    ],
)  # fmt: skip
def test_suppress_condition_columns_checked_with_line(
    tmp_path: Path, cond: str, want: str, not_want: str
) -> None:
    text = f'columns:\n  Age: quasi\n  County: quasi\nsuppress: ["{cond}"]\n'
    p = Policy.from_yaml(_write(tmp_path, text))
    with pytest.raises(PolicyError) as info:
        p.check_columns(pd.DataFrame({"Age": [30], "County": ["x"]}))
    msg = str(info.value)
    assert "line 4: suppress: condition" in msg and want in msg and not_want not in msg


def test_unlisted_columns_are_an_error_without_default_role() -> None:
    df = pd.DataFrame({"a": [1, 2], "b": [3, 4], "c": [5, 6]})
    with pytest.raises(
        PolicyError, match=r"2 column\(s\) of the data are not in the policy: 'b', 'c'"
    ):
        apply(df, {"columns": {"a": "quasi"}})
    release, report = apply(df, {"columns": {"a": "quasi"}, "default_role": "insensitive"})
    assert list(release.columns) == ["a", "b", "c"]
    assert (
        report["columns"]["b"]["role"] == "insensitive"
        and not report["columns"]["b"]["listed_in_policy"]
    )
    assert report["risk"]["quasi_identifiers"] == ["a"]


def test_hierarchy_lacking_values_counts_them(tmp_path: Path) -> None:
    p = Policy.from_yaml(_write(tmp_path, "columns:\n  c: {role: quasi, hierarchy: county.csv}\n"))
    df = pd.DataFrame({"c": ["Nairobi", "Lamu", "Kisii", "Wajir", None]})
    with pytest.raises(PolicyError) as info:
        apply(df, p)
    msg = str(info.value)
    assert (
        "line 2" in msg
        and "columns.c.hierarchy" in msg
        and "2 distinct value(s)" in msg
        and "missing(df['c'])" in msg  # how to list them; the values are not quoted (logs)
    )
    assert "Lamu" not in msg and "Wajir" not in msg


def test_inline_hierarchy() -> None:
    p = Policy.from_dict(
        {"columns": {"g": {"role": "quasi", "hierarchy": {"F": ["*"], "M": ["*"]}}}}
    )
    assert p.columns["g"].hierarchy is not None and p.columns["g"].hierarchy.values == ["F", "M"]


def test_privacy_column_must_exist_in_data() -> None:
    p = Policy.from_dict(
        {"columns": {"a": "quasi"}, "privacy": {"k": 2, "l": {"column": "zz", "l": 2}}}
    )
    with pytest.raises(PolicyError, match="privacy.l.column: unknown column 'zz'"):
        p.check_columns(pd.DataFrame({"a": [1]}))


def test_recursive_l_needs_c() -> None:
    with pytest.raises(PolicyError, match="needs c"):
        Policy.from_dict(
            {
                "columns": {"s": "sensitive"},
                "privacy": {"l": {"column": "s", "l": 2, "variant": "recursive"}},
            }
        )


def test_examples_parse() -> None:
    root = Path(__file__).resolve().parents[2] / "examples"
    for name in ("insurance_ke.yaml", "adult.yaml"):
        p = Policy.from_yaml(root / name)
        assert p.privacy is not None and p.privacy.k == 5


@pytest.mark.parametrize("key", ["{}", "{env: A, file: b}"])
def test_key_needs_exactly_one_source(tmp_path: Path, key: str) -> None:
    with pytest.raises(PolicyError, match=r"line 1: key: give exactly one of env or file"):
        Policy.from_yaml(_write(tmp_path, f"key: {key}\ncolumns:\n  a: quasi\n"))


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("a: &a [*a]\n", "alias refers to itself"),
        ("a: &a {b: *a}\n", "alias refers to itself"),
        ("x: " + "[" * 10000 + "\n", "nested too deeply"),
        ("version: " + "9" * 5000 + "\n", "invalid value"),
        (  # "billion laughs": 10^9 nodes through aliases
            "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
            + "".join(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 9)),
            "more than",
        ),
    ],
)
def test_hostile_yaml_is_a_policy_error(text: str, fragment: str) -> None:
    from veil.deid._policy_yaml import load_with_lines

    with pytest.raises(PolicyError, match=fragment):
        load_with_lines(text, "p.yaml")


def test_shared_alias_without_a_cycle_still_loads() -> None:
    from veil.deid._policy_yaml import load_with_lines

    data, _ = load_with_lines("a: &a [1, 2]\nb: [*a, *a]\n", "p.yaml")
    assert data == {"a": [1, 2], "b": [[1, 2], [1, 2]]}


@pytest.mark.parametrize(
    "text",
    [
        "columns:\n  a: !!python/name:os.system\n",
        "columns:\n  a: !!python/object/apply:os.system ['echo owned']\n",
        "columns:\n  a: {role: quasi, operator: {name: mask, char: !!python/bytes YQ==}}\n",
        "columns:\n  a: !custom {role: quasi}\n",
        "version: !!int zz\ncolumns:\n  a: quasi\n",
    ],
)
def test_unsafe_or_bad_tags_are_one_line_policy_errors(tmp_path: Path, text: str) -> None:
    # safe loading refuses Python tags; the refusal is one readable line naming file and line
    with pytest.raises(PolicyError) as info:
        Policy.from_yaml(_write(tmp_path, text))
    msg = str(info.value)
    assert "\n" not in msg and "<unicode string>" not in msg and "^" not in msg
    assert msg.startswith("p.yaml, line ") and "invalid value" in msg


def test_column_names_yaml_would_read_as_other_types(tmp_path: Path) -> None:
    # YAML 1.1 reads unquoted No/on/null/1.50 as False/True/None/1.5: "unknown column 'False'"
    # for a header "No", and "on" + "1" as one duplicated key (True == 1)
    header = ["No", "on", "1", "null", "1.50", "~", "age"]
    df = pd.DataFrame([[1, "a", "x", "q", 2, 3, 30], [2, "b", "y", "r", 4, 5, 40]], columns=header)
    text = (
        "columns:\n  No: {role: identifier, operator: drop}\n"
        + "".join(f"  {c}: insensitive\n" for c in header[1:-1])
        + "  age: quasi\n"
    )
    policy = Policy.from_yaml(_write(tmp_path, text))
    assert list(policy.columns) == header
    release, _ = apply(df, policy)
    assert list(release.columns) == header[1:]
    assert policy.line("columns", "No") == 2 and policy.line("columns", "1.50") == 6


def test_merge_keys_are_refused_plainly(tmp_path: Path) -> None:
    text = "base: &b {role: quasi}\ncolumns:\n  a: {<<: *b, operator: drop}\n"
    with pytest.raises(PolicyError, match=r"p.yaml, line 3: columns.a: YAML merge keys \(<<\)"):
        Policy.from_yaml(_write(tmp_path, text))


@pytest.mark.parametrize(
    "key_line",
    [
        "key: {9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08}",  # braces
        "key: {env: VEIL_KEY, 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08}",
        "key: {base64:n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg=}",
        "key: {Correct-Horse-Battery-Staple}",
    ],
)
def test_a_key_written_as_a_setting_name_is_not_echoed(tmp_path: Path, key_line: str) -> None:
    # `key: {<the key>}` is a mapping whose one setting is named by the key: the unknown-key
    # error printed that name -- the key -- on stderr and in CI logs
    text = key_line + "\ncolumns:\n  id: {role: identifier, operator: pseudonymize}\n"
    with pytest.raises(PolicyError) as info:
        Policy.from_yaml(_write(tmp_path, text))
    msg = str(info.value)
    assert "p.yaml, line 1: key:" in msg and "unknown key" in msg and "looks like a key" in msg
    for secret in ("9f86d081884c7d65", "n4bQgYhMfWWaL", "Horse"):
        assert secret not in msg


def test_an_unknown_setting_is_still_named(tmp_path: Path) -> None:
    text = "key: {evn: VEIL_KEY}\ncolumns:\n  id: {role: identifier, operator: drop}\n"
    with pytest.raises(PolicyError, match=r"line 1: key.evn: unknown key \(allowed: env, file\)"):
        Policy.from_yaml(_write(tmp_path, text))


def test_a_key_written_as_an_operator_parameter_name_is_not_echoed(tmp_path: Path) -> None:
    secret = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    text = (
        f"columns:\n  id:\n    role: identifier\n    operator: {{name: pseudonymize, {secret}}}\n"
    )
    with pytest.raises(PolicyError) as info:
        Policy.from_yaml(_write(tmp_path, text))
    msg = str(info.value)
    assert secret[:16] not in msg and "line 4: columns.id.operator:" in msg
    assert "unknown parameter" in msg and "looks like a key" in msg
    # an ordinary misspelt parameter is still named
    with pytest.raises(PolicyError, match="unknown parameter 'lenght'"):
        Policy.from_yaml(_write(tmp_path, text.replace(secret, "lenght: 8")))


def test_missing_hierarchy_names_where_it_was_looked_for(tmp_path: Path) -> None:
    sub = tmp_path / "policies"
    sub.mkdir()
    p = _write(sub, "columns:\n  County: {role: quasi, hierarchy: hier/county.csv}\n")
    with pytest.raises(PolicyError) as info:
        Policy.from_yaml(p)
    msg = str(info.value)
    assert "hierarchy file not found: hier/county.csv" in msg
    assert f"looked for {(sub / 'hier' / 'county.csv').resolve()}: relative to the policy" in msg
    absolute = tmp_path / "none.csv"
    with pytest.raises(PolicyError) as info:
        Policy.from_yaml(
            _write(sub, f"columns:\n  County: {{role: quasi, hierarchy: {absolute}}}\n")
        )
    assert "looked for" not in str(info.value)


@pytest.mark.parametrize(
    "text", ['"id","County"\n0,"Kisii"\n', "39, State-gov, 77516\n", "*Wanjiku,1\n2,3\n"]
)
def test_a_table_given_as_the_policy_is_named(tmp_path: Path, text: str) -> None:
    """``--policy data.csv``: an invalid-YAML or not-a-mapping error alone did not say why,
    and PyYAML's message can quote a cell (an undefined alias ``*Wanjiku``)."""
    table = tmp_path / "data.csv"
    table.write_text(text)
    with pytest.raises(PolicyError) as info:
        Policy.from_yaml(table)
    msg = str(info.value)
    assert msg.startswith("data.csv is not a YAML policy; it looks like a table")
    assert not any(v in msg for v in ("Kisii", "State-gov", "Wanjiku", "39"))
    pol = _write(tmp_path, "columns: [\n")
    with pytest.raises(PolicyError) as info:
        Policy.from_yaml(pol)
    assert "looks like a table" not in str(info.value)


def test_a_policy_with_a_table_suffix_keeps_its_own_error(tmp_path: Path) -> None:
    """A policy saved as ``policy.txt`` with a misspelt key was told it "looks like a table",
    which hid the real error; a CSV whose text parses as a YAML mapping (``ann: 31,x``) is
    still named as a table, its cells unquoted."""
    pol = tmp_path / "policy.txt"
    pol.write_text("columns:\n  a: {role: quasi, operatr: drop}\n")
    with pytest.raises(PolicyError, match=r"columns\.a\.operatr: unknown key") as info:
        Policy.from_yaml(pol)
    assert "looks like a table" not in str(info.value)
    table = tmp_path / "data.csv"
    table.write_text("time: 10,name\nWanjiku: 31,x\n")
    with pytest.raises(PolicyError, match="looks like a table") as info:
        Policy.from_yaml(table)
    assert "Wanjiku" not in str(info.value)
