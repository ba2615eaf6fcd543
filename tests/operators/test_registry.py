"""Registry, parameter validation, reports and non-mutation for every operator."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from _helpers import ctx, people

from veil.deid.operators import Operator, available_operators, get_operator
from veil.errors import ConfigError, KeyMissingError

# one working configuration per operator, with the column it applies to
CONFIGS: dict[str, tuple[dict, str | None]] = {
    "drop": ({}, "id"),
    "suppress": ({"condition": "age < 30"}, None),
    "mask": ({"keep_last": 2}, "phone"),
    "redact": ({}, "email"),
    "pseudonymize": ({}, "id"),
    "tokenize": ({}, "id"),
    "fake": ({"kind": "name", "gender_column": "sex", "seed": 1}, "id"),
    "generalize": ({"bins": [0, 30, 50, 120]}, "age"),
    "top_bottom_code": ({"top": 50}, "age"),
    "noise": ({"scale": 1.0}, "income"),
    "round": ({"base": 5}, "age"),
    "resample": ({}, "sex"),
    "distribution": ({"candidates": ["norm", "uniform"]}, "income"),
    "rename_columns": ({}, None),
    "pca": ({"columns": ["age", "income"]}, None),
}


def test_all_operators_are_registered() -> None:
    assert set(available_operators()) == set(CONFIGS)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_operator_contract(name: str) -> None:
    params, column = CONFIGS[name]
    op = get_operator(name, params)
    assert isinstance(op, Operator) and op.name == name
    assert op.table_level == (column is None)
    df = people()
    if name == "pca":
        df = df.dropna()
    before = df.copy(deep=True)
    out = op.apply(df, column, ctx())
    assert isinstance(out, pd.DataFrame) and out is not df
    pd.testing.assert_frame_equal(df, before)  # input never mutated
    assert isinstance(op.describe(), str) and op.describe()
    json.dumps(op.params())  # JSON-able
    json.dumps(op.stats(), default=float)
    text = op.describe() + json.dumps(op.params())
    assert "000102030405" not in text  # the key never leaks into reports


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_unknown_parameter_is_config_error(name: str) -> None:
    params, _ = CONFIGS[name]
    with pytest.raises(ConfigError, match="bogus"):
        get_operator(name, {**params, "bogus": 1})


def test_unknown_operator() -> None:
    with pytest.raises(ConfigError, match="unknown operator 'nope'"):
        get_operator("nope")


@pytest.mark.parametrize("name", ["pseudonymize", "tokenize"])
def test_missing_key(name: str) -> None:
    with pytest.raises(KeyMissingError):
        get_operator(name).apply(people(), "id", ctx(key=None))


def test_column_operator_needs_existing_column() -> None:
    from veil.errors import InputError

    with pytest.raises(InputError, match="no column 'nope'"):
        get_operator("mask").apply(people(), "nope", ctx())
    with pytest.raises(ConfigError):
        get_operator("mask").apply(people(), None, ctx())


def test_key_decoding_refuses_placeholders_and_is_stable(tmp_path) -> None:
    import os

    from veil.deid._keys import decode_key, key_loader

    with pytest.raises(KeyMissingError, match="repeats one byte"):
        decode_key("00" * 32, "test")
    with pytest.raises(KeyMissingError, match="repeats one byte"):
        decode_key(b"\x00" * 32, "test")
    assert decode_key("3c9a" * 16 + "\n", "test") == bytes.fromhex("3c9a" * 16)
    # a binary key file is read as it always was (surrounding whitespace bytes stripped), so
    # pseudonyms made with an existing key file do not change
    raw = b"\n\t" + os.urandom(28) + b" \n"
    f = tmp_path / "bin.key"
    f.write_bytes(raw)
    assert key_loader(file=f)() == raw.strip()


@pytest.mark.parametrize("name", sorted(n for n, (_, col) in CONFIGS.items() if col is not None))
def test_duplicate_column_name_is_an_input_error(name: str) -> None:
    # df[col] of a duplicated name is a DataFrame: a bare pandas TypeError/AttributeError before
    from veil.errors import InputError

    params, column = CONFIGS[name]
    df = people()
    df = pd.concat([df, df[[column]]], axis=1)
    with pytest.raises(InputError, match=f"several columns named '{column}'"):
        get_operator(name, params).apply(df, column, ctx())


def test_key_in_both_an_environment_variable_and_a_file_is_refused(tmp_path) -> None:
    # the file used to be silently ignored: pseudonyms under a key the caller did not mean
    from veil.deid._keys import key_loader

    f = tmp_path / "k.key"
    f.write_text("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08")
    with pytest.raises(ConfigError, match="not both"):
        key_loader(env="VEIL_KEY", file=f)
    assert len(key_loader(file=f)()) == 32


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("generalize", {"bins": 10**20}),
        ("mask", {"keep_last": 10**20}),
        ("mask", {"keep_first": 2**63}),
        ("mask", {"kind": "full", "length": 10**20}),
        ("generalize", {"keep": 10**20}),
        ("round", {"significant": 10**20}),
    ],
)
def test_huge_integer_parameters_are_config_errors(name: str, params: dict) -> None:
    # they used to pass validation and fail in apply with a bare OverflowError / ValueError
    with pytest.raises(ConfigError, match="must be at most"):
        get_operator(name, params)


@pytest.mark.parametrize("name", sorted(n for n, (_, col) in CONFIGS.items() if col is not None))
def test_nested_cells_are_handled_or_refused_in_one_line(name: str) -> None:
    # lists / dicts / arrays (nested JSON, Parquet list columns): a bare 'unhashable type'
    # TypeError from every operator that groups values
    import numpy as np

    from veil.errors import VeilError

    params, column = CONFIGS[name]
    df = people()
    cells = [{"a": 1, "b": 2}, ["x", 1], None, {"b": 2, "a": 1}, np.array([1, 2])]
    df[column] = pd.Series(cells, index=df.index, dtype=object)
    # operators that group or copy cells must handle them; numeric ones may refuse
    handled = {"drop", "fake", "mask", "pseudonymize", "redact", "resample", "tokenize"}
    try:
        out = get_operator(name, params).apply(df, column, ctx())
    except VeilError:
        assert name not in handled, f"{name} refused nested cells"
        return
    if name in ("pseudonymize", "tokenize", "fake"):  # equal dicts, whatever the key order
        assert out[column].iloc[0] == out[column].iloc[3] != out[column].iloc[1]
    if name == "resample":  # rows are copied: the cells keep their type
        assert all(isinstance(v, dict | list | np.ndarray) or v is None for v in out[column])
