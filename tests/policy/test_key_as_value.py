"""A key pasted as a setting's value is not echoed by the error that refuses it.

``seed`` is where a key is most easily mistaken for what belongs (a policy ``seed``, a fake's
``seed``, ``--seed $VEIL_KEY``); the errors saying it must be an integer quoted it, as did
other settings' wrong-value errors.  Ordinary wrong values are still quoted.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from veil.cli.main import main
from veil.deid import Policy, apply
from veil.errors import VeilError

OP = "columns.c.operator"
CASES: list[tuple[str, Any]] = [
    ("seed", "KEY"),
    ("version", "KEY"),
    ("columns.c.role", "KEY"),
    ("privacy.k", "KEY"),
    (OP, {"name": "fake", "kind": "name", "seed": "KEY"}),
    (OP, {"name": "fake", "kind": "KEY"}),
    (OP, {"name": "fake", "kind": "name", "locale": "KEY"}),
    (OP, {"name": "fake", "kind": "date", "start": "KEY"}),
    (OP, {"name": "fake", "kind": "name", "gender_map": {"x": "KEY"}}),
    (OP, {"name": "mask", "char": "KEY"}),
    (OP, {"name": "generalize", "bins": "KEY"}),
    (OP, {"name": "generalize", "keep": 2, "pad": "KEY"}),
    (OP, {"name": "KEY"}),
    (OP, {"name": "distribution", "candidates": ["norm", "KEY"]}),
]


def _doc(where: str, value: Any, fill: str) -> dict[str, Any]:
    def put(v: Any) -> Any:
        if v == "KEY":
            return fill
        if isinstance(v, dict):
            return {k: put(x) for k, x in v.items()}
        if isinstance(v, list):
            return [put(x) for x in v]
        return v

    doc: dict[str, Any] = {"columns": {"c": {"role": "quasi"}}, "privacy": {"k": 2}}
    *path, last = where.split(".")
    node = doc
    for part in path:
        node = node.setdefault(part, {})
    node[last] = put(value)
    return doc


@pytest.mark.parametrize(("where", "value"), CASES)
def test_key_as_a_value_is_not_echoed(where: str, value: Any) -> None:
    key = secrets.token_hex(32)
    with pytest.raises(VeilError) as e:
        apply(pd.DataFrame({"c": [1, 2, 3, 1]}), Policy.from_dict(_doc(where, value, key)))
    assert key not in str(e.value) and key[:16] not in str(e.value)
    assert "could be a key" in str(e.value)
    with pytest.raises(VeilError, match="'abc'"):  # a short wrong value is still shown
        apply(pd.DataFrame({"c": [1, 2, 3, 1]}), Policy.from_dict(_doc(where, value, "abc")))


def test_cli_seed_is_not_echoed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    key = secrets.token_hex(32)
    data = tmp_path / "d.csv"
    data.write_text("c\n1\n2\n")
    (tmp_path / "p.yaml").write_text("columns: {c: quasi}\n")
    base = ["anonymize", str(data), "--policy", str(tmp_path / "p.yaml"), "--out"]
    with pytest.raises(SystemExit):
        main([*base, str(tmp_path / "o"), "--seed", key])
    err = capsys.readouterr().err
    assert key not in err and "--seed" in err and "could be a key" in err
    with pytest.raises(SystemExit):
        main([*base, str(tmp_path / "o"), "--seed", "1.5"])
    assert "'1.5'" in capsys.readouterr().err
    assert main([*base, str(tmp_path / "o"), "--seed", "7"]) == 0


def test_cli_key_file_is_not_echoed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``veil anonymize --key-file $VEIL_KEY``: the check that the file exists quoted the
    path, the key (reidentify and the policy's key: {file: ...} already hid it)."""
    key = secrets.token_hex(32)
    data = tmp_path / "d.csv"
    data.write_text("id\na\nb\n")
    (tmp_path / "p.yaml").write_text("columns: {id: {role: identifier, operator: pseudonymize}}\n")
    base = ["anonymize", str(data), "--policy", str(tmp_path / "p.yaml"), "--out"]
    assert main([*base, str(tmp_path / "o"), "--key-file", key]) == 2
    err = capsys.readouterr().err
    assert key not in err and key[:16] not in err and "not shown" in err
    missing = tmp_path / "none.key"
    assert main([*base, str(tmp_path / "o"), "--key-file", str(missing)]) == 2
    assert str(missing) in capsys.readouterr().err


def test_apply_seed_argument_is_not_echoed() -> None:
    """``apply(df, policy, seed=os.environ["VEIL_KEY"])``: the Python API's seed check quoted
    it, as the policy's and the CLI's did."""
    key = secrets.token_hex(32)
    df, pol = pd.DataFrame({"c": [1, 2, 3, 1]}), Policy.from_dict({"columns": {"c": "quasi"}})
    with pytest.raises(VeilError) as e:
        apply(df, pol, seed=key)  # type: ignore[arg-type]
    assert key not in str(e.value) and key[:16] not in str(e.value)
    assert "could be a key" in str(e.value)
    with pytest.raises(VeilError, match="'abc'"):  # a short wrong value is still shown
        apply(df, pol, seed="abc")  # type: ignore[arg-type]
