"""veil.apply: order of operators, record suppression, index handling, and property tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veil.deid import Policy, apply
from veil.errors import InputError, KeyMissingError, PolicyError

KEY = "5a17" * 16


@pytest.fixture
def keyfile(tmp_path: Path) -> Path:
    p = tmp_path / "key"
    p.write_text(KEY)
    return p


def test_operators_in_declared_order() -> None:
    df = pd.DataFrame({"phone": ["+254 712 345 678", "+254 733 000 111"], "a": [1, 2]})
    # mask first then redact: the redaction wins; both actions recorded in order
    pol = {
        "columns": {
            "phone": {
                "role": "identifier",
                "operator": [{"name": "mask", "kind": "phone"}, "drop"],
            },
            "a": "insensitive",
        }
    }
    release, rep = apply(df, pol)
    assert list(release.columns) == ["a"]
    assert [a["operator"] for a in rep["actions"]] == ["mask", "drop"]


def test_suppress_conditions_use_original_values() -> None:
    df = pd.DataFrame({"Age": [25, 35, 45, 29], "x": list("abcd")})
    pol = {
        "columns": {
            "Age": {"role": "quasi", "operator": {"name": "generalize", "bins": [0, 40, 100]}},
            "x": "insensitive",
        },
        "suppress": ["Age < 30"],
    }
    release, rep = apply(df, pol)
    assert release["x"].tolist() == ["b", "c"]
    assert rep["suppression"]["records_removed_by_conditions"] == 2


def test_custom_index_preserved_and_not_mutated() -> None:
    df = pd.DataFrame({"Age": [25, 35, 45, 29], "x": list("abcd")}, index=["r1", "r2", "r3", "r4"])
    snapshot = df.copy(deep=True)
    release, _ = apply(
        df, {"columns": {"Age": "quasi", "x": "insensitive"}, "suppress": "x == 'b'"}
    )
    assert release.index.tolist() == ["r1", "r3", "r4"]
    pd.testing.assert_frame_equal(df, snapshot)


def test_missing_key_only_when_needed(monkeypatch: pytest.MonkeyPatch, keyfile: Path) -> None:
    monkeypatch.delenv("VEIL_KEY", raising=False)
    df = pd.DataFrame({"id": ["a", "b"]})
    apply(df, {"columns": {"id": {"role": "identifier", "operator": "drop"}}})  # no key needed
    with pytest.raises(KeyMissingError, match="VEIL_KEY"):
        apply(df, {"columns": {"id": {"role": "identifier", "operator": "pseudonymize"}}})
    r1, _ = apply(
        df,
        {"columns": {"id": {"role": "identifier", "operator": "pseudonymize"}}},
        key_file=keyfile,
    )
    monkeypatch.setenv("VEIL_KEY", KEY)
    r2, _ = apply(df, {"columns": {"id": {"role": "identifier", "operator": "pseudonymize"}}})
    assert r1["id"].tolist() == r2["id"].tolist() and r1["id"].tolist() != ["a", "b"]


def test_policy_key_file_relative_to_policy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VEIL_KEY", raising=False)
    (tmp_path / "secret.key").write_text(KEY)
    p = tmp_path / "p.yaml"
    p.write_text(
        "key: {file: secret.key}\ncolumns:\n  id: {role: identifier, operator: pseudonymize}\n"
    )
    release, _ = apply(pd.DataFrame({"id": ["a"]}), Policy.from_yaml(p))
    assert release["id"].iloc[0] != "a"


def test_column_dropped_then_used_is_an_error() -> None:
    df = pd.DataFrame({"a": [1, 2]})
    with pytest.raises(PolicyError, match="no longer exists"):
        apply(df, {"columns": {"a": {"role": "quasi", "operator": ["drop", {"name": "mask"}]}}})


def test_bad_arguments() -> None:
    with pytest.raises(InputError):
        apply([1, 2], {"columns": {}})  # type: ignore[arg-type]
    with pytest.raises(InputError, match="empty"):
        apply(pd.DataFrame({"a": []}), {"columns": {"a": "quasi"}})
    with pytest.raises(PolicyError):
        apply(pd.DataFrame({"a": [1]}), 42)  # type: ignore[arg-type]


def test_duplicate_column_names_are_an_input_error() -> None:
    df = pd.DataFrame([[1, 2, 3, 4]], columns=["a", "b", "a", "b"])
    for policy in (
        {"columns": {"a": {"role": "identifier", "operator": "mask"}, "b": "quasi"}},
        {"default_role": "quasi", "columns": {}},
    ):
        with pytest.raises(InputError, match=r"duplicate column names \('a', 'b'\)"):
            apply(df, policy)


def test_engine_absent_means_verify(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "veil.anonymity._policy_bridge", None)  # import fails
    df = pd.DataFrame({"a": [1, 1, 2]})
    with pytest.warns(RuntimeWarning, match="verified, not enforced"):
        _, rep = apply(df, {"columns": {"a": "quasi"}, "privacy": {"k": 2, "algorithm": "optimal"}})
    assert rep["targets"]["mode"] == "verified" and not rep["targets"]["k"]["met"]


# ------------------------------------------------------------------ property tests

values = st.one_of(
    st.integers(-1000, 1000),
    st.text(alphabet="abcxyz019 @.-", min_size=0, max_size=12),
)


@st.composite
def frames_and_policies(draw: st.DrawFn) -> tuple[pd.DataFrame, dict]:
    n = draw(st.integers(1, 25))
    ncol = draw(st.integers(1, 4))
    data: dict[str, list] = {}
    columns: dict[str, dict] = {}
    for j in range(ncol):
        name = f"c{j}"
        kind = draw(st.sampled_from(["int", "str", "float"]))
        if kind == "int":
            col = draw(st.lists(st.integers(0, 99), min_size=n, max_size=n))
        elif kind == "float":
            col = draw(
                st.lists(
                    st.one_of(st.none(), st.floats(0, 99, allow_nan=False)), min_size=n, max_size=n
                )
            )
        else:
            col = draw(
                st.lists(
                    st.one_of(st.none(), st.text(alphabet="abcxyz019 @.-", max_size=12)),
                    min_size=n,
                    max_size=n,
                )
            )
        data[name] = col
        choices: list = ["drop", "mask", {"name": "mask", "keep_last": 2}, "pseudonymize", None]
        if kind != "str":
            choices.append({"name": "generalize", "bins": [0, 50, 100]})
        op = draw(st.sampled_from(choices))
        role = draw(st.sampled_from(["identifier", "quasi", "sensitive", "insensitive"]))
        columns[name] = {"role": role} | ({"operator": op} if op is not None else {})
    return pd.DataFrame(data), {"columns": columns}


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=frames_and_policies())
def test_input_never_mutated(case: tuple[pd.DataFrame, dict], keyfile: Path) -> None:
    df, policy = case
    df.index = pd.Index(np.arange(len(df))[::-1] * 3)
    snapshot = df.copy(deep=True)
    release, rep = apply(df, policy, key_file=keyfile)
    pd.testing.assert_frame_equal(df, snapshot)
    assert len(release) <= len(df) and set(release.index) <= set(df.index)
    dropped = {c for c, s in policy["columns"].items() if s.get("operator") == "drop"}
    assert not dropped & set(release.columns)
    assert rep["input"]["records"] == len(df) and rep["release"]["records"] == len(release)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(vals=st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=30))
def test_pseudonyms_consistent_and_distinct(vals: list[str], keyfile: Path) -> None:
    df = pd.DataFrame({"id": vals})
    release, _ = apply(
        df,
        {"columns": {"id": {"role": "identifier", "operator": "pseudonymize"}}},
        key_file=keyfile,
    )
    mapping: dict[str, str] = {}
    for original, pseudo in zip(vals, release["id"]):
        assert mapping.setdefault(original, pseudo) == pseudo
    assert len(set(mapping.values())) == len(mapping)


@pytest.mark.parametrize("seed", [-1, 1.5, "7", True])
def test_bad_seed_is_a_config_error(seed: object) -> None:
    from veil.errors import ConfigError

    df = pd.DataFrame({"a": [1, 2]})
    with pytest.raises(ConfigError, match="seed"):
        apply(df, {"columns": {"a": {"role": "insensitive"}}}, seed=seed)  # type: ignore[arg-type]


def test_seeded_noise_is_subtracted_by_whoever_knows_the_seed() -> None:
    # the attack: the policy (with its seed) travels with the release; replaying the seeded
    # generator gives the exact noise, so the "noisy" incomes are the true ones
    rng = np.random.default_rng(0)
    income = rng.lognormal(10, 1, 300).round(2)
    df = pd.DataFrame({"income": income})
    policy = {
        "seed": 7,
        "columns": {"income": {"role": "sensitive", "operator": {"name": "noise", "scale": 5000}}},
    }
    release, report = apply(df, policy)
    replayed = np.random.default_rng(7).normal(0.0, 5000, len(df))
    np.testing.assert_allclose(release["income"].to_numpy() - replayed, income, atol=1e-6)
    assert [w for w in report["warnings"] if "regenerates the noise" in w]
    # without a seed there is nothing to replay, and no warning
    release2, report2 = apply(df, {k: v for k, v in policy.items() if k != "seed"})
    assert np.abs(release2["income"].to_numpy() - replayed - income).max() > 100
    assert not [w for w in report2["warnings"] if "regenerates the noise" in w]


@pytest.mark.parametrize("where", ["env", "file"])
def test_key_pasted_into_the_policy_key_setting_is_not_echoed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    secret = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    monkeypatch.delenv(secret, raising=False)
    policy = {
        "key": {where: secret},
        "columns": {"id": {"role": "identifier", "operator": "pseudonymize"}},
    }
    with pytest.raises(KeyMissingError) as info:
        apply(pd.DataFrame({"id": ["a", "b"]}), Policy.from_dict(policy, base_dir=tmp_path))
    assert secret[:12] not in str(info.value) and "looks like a key" in str(info.value)


@pytest.mark.parametrize(
    "policy",
    [
        {"columns": {"id": "identifier", "age": "quasi"}},
        {"columns": {"age": "quasi"}, "default_role": "identifier"},
    ],
)
def test_identifier_without_operator_is_reported(policy: dict) -> None:
    # an identifier column without an operator reaches the release verbatim
    df = pd.DataFrame({"id": ["P-0001", "P-0002"], "age": [30, 40]})
    release, report = apply(df, policy)
    assert release["id"].tolist() == ["P-0001", "P-0002"]
    notes = [w for w in report["warnings"] if "released as they are" in w]
    assert len(notes) == 1 and "'id'" in notes[0] and "P-0001" not in notes[0]
    _, clean = apply(
        df, {"columns": {"id": {"role": "identifier", "operator": "drop"}, "age": "quasi"}}
    )
    assert not [w for w in clean["warnings"] if "released as they are" in w]


@pytest.mark.parametrize(
    "spec",
    [
        "insensitive",
        "sensitive",
        {"role": "identifier", "operator": "pseudonymize"},
        {"role": "quasi", "operator": "redact"},
    ],
)
def test_nested_cells_reach_the_release_and_report(spec: object, keyfile: Path) -> None:
    # a column of dicts / lists (nested JSON): the report's factorization raised a bare
    # 'unhashable type' TypeError whatever the column's role
    df = pd.DataFrame(
        {"meta": [{"a": 1, "b": 2}, ["x"], None, {"b": 2, "a": 1}], "age": [30, 40, 50, 60]}
    )
    release, report = apply(df, {"columns": {"meta": spec, "age": "quasi"}}, key_file=keyfile)
    assert len(release) == 4 and report["release"]["records"] == 4
    if spec == "insensitive":
        assert release["meta"].iloc[0] == {"a": 1, "b": 2}


@pytest.mark.parametrize(
    "param",
    [
        {"name": "pseudonymize", "length": "KEY"},  # integer parameter
        {"name": "mask", "keep_last": "KEY"},
        {"name": "generalize", "bins": 3, "strategy": "KEY"},  # a choice
    ],
)
def test_key_pasted_as_a_parameter_value_is_not_echoed(param) -> None:
    """A key pasted as an operator parameter's value (``length: 9f86...``) was quoted by the
    wrong-type error; a value that could be a key is described, not shown.  Ordinary wrong
    values are still quoted."""
    import secrets

    from veil.errors import VeilError

    key = secrets.token_hex(32)
    op = {k: (key if v == "KEY" else v) for k, v in param.items()}
    doc = {"columns": {"c": {"role": "quasi", "operator": op}}}
    with pytest.raises(VeilError) as e:
        apply(pd.DataFrame({"c": [1, 2, 3]}), Policy.from_dict(doc))
    assert key not in str(e.value) and len(str(e.value).splitlines()) == 1
    op = {k: ("abc" if v == "KEY" else v) for k, v in param.items()}
    doc = {"columns": {"c": {"role": "quasi", "operator": op}}}
    with pytest.raises(VeilError, match="abc"):
        apply(pd.DataFrame({"c": [1, 2, 3]}), Policy.from_dict(doc))
