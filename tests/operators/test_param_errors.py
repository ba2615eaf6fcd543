"""Unknown and missing operator parameters give one clear line (Python and CLI), issue #2."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from veil.cli.main import main
from veil.deid import Policy
from veil.deid.operators import (
    OperatorParameterError,
    available_operators,
    get_operator,
    operator_parameters,
)
from veil.errors import ConfigError, PolicyError


def _required(name: str) -> list[str]:
    return operator_parameters(name)[0]


def _accepted(name: str) -> list[str]:
    req, opt = operator_parameters(name)
    return req + opt


def _cases() -> list[tuple[str, str, str]]:
    """(operator, kind, parameter): an unknown one for every operator, each required one."""
    out = [(n, "unknown", "bogus") for n in available_operators()]
    out += [(n, "missing", r) for n in available_operators() for r in _required(n)]
    return out


CASES = _cases()


def _params(name: str, kind: str, param: str) -> dict:
    # every required parameter gets a placeholder value except the one under test
    params = {r: "x" for r in _required(name) if r != param}
    if kind == "unknown":
        params[param] = 1
    return params


def test_noise_message_lists_its_parameters_literally() -> None:
    """The accepted list spelled out (not derived from the same signature reading)."""
    with pytest.raises(OperatorParameterError) as info:
        get_operator("noise", {"scale": 1, "sigma": 2})
    assert str(info.value) == (
        "operator 'noise': unknown parameter 'sigma' "
        "(accepted: scale, distribution, relative, clip, keep_integer)"
    )


def test_signature_reading_covers_the_known_required_parameters() -> None:
    assert set(_required("noise")) == {"scale"}
    assert set(_required("fake")) == {"kind"}
    assert set(_required("pca")) == {"columns"}
    assert set(_required("suppress")) == {"condition"}
    assert _accepted("drop") == []
    assert "keep_first" in _accepted("mask")


@pytest.mark.parametrize(("name", "kind", "param"), CASES)
def test_python_message(name: str, kind: str, param: str) -> None:
    with pytest.raises(ConfigError) as info:
        get_operator(name, _params(name, kind, param))
    exc = info.value
    assert isinstance(exc, OperatorParameterError)
    msg = str(exc)
    assert "\n" not in msg and "__init__" not in msg and "positional" not in msg
    if kind == "unknown":
        accepted = ", ".join(_accepted(name)) or "none"
        assert msg == f"operator {name!r}: unknown parameter 'bogus' (accepted: {accepted})"
    else:
        assert msg == f"operator {name!r}: missing required parameter {param!r}"


def _policy_yaml(name: str, kind: str, param: str) -> str:
    op = {"name": name, **_params(name, kind, param)}
    return yaml.safe_dump({"columns": {"x": {"role": "quasi", "operator": op}}}, sort_keys=False)


@pytest.mark.parametrize(("name", "kind", "param"), CASES)
def test_policy_message_has_column_key_and_line(
    tmp_path: Path, name: str, kind: str, param: str
) -> None:
    text = _policy_yaml(name, kind, param)
    path = tmp_path / "p.yaml"
    path.write_text(text)
    with pytest.raises(PolicyError) as info:
        Policy.from_yaml(path)
    msg = str(info.value)
    lines = text.splitlines()
    if kind == "unknown":
        line = next(i for i, t in enumerate(lines, 1) if t.strip().startswith("bogus:"))
        key = "columns.x.operator.bogus"
        tail = "unknown parameter 'bogus' (accepted: "
    else:
        line = next(i for i, t in enumerate(lines, 1) if t.strip().startswith("operator:"))
        key = "columns.x.operator"
        tail = f"missing required parameter {param!r}"
    assert msg.startswith(f"p.yaml, line {line}: {key}: column 'x': operator {name!r}: ")
    assert tail in msg and "\n" not in msg and "__init__" not in msg


def test_policy_from_dict_message_has_no_line() -> None:
    with pytest.raises(PolicyError, match=r"missing required parameter 'scale'$") as info:
        Policy.from_dict({"columns": {"x": {"role": "quasi", "operator": "noise"}}})
    assert "line" not in str(info.value)


@pytest.mark.parametrize(("name", "kind", "param"), CASES)
def test_cli_exit_2_one_line_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, kind: str, param: str
) -> None:
    data = tmp_path / "in.csv"
    data.write_text("x,y\n1,a\n2,b\n")
    pol = tmp_path / "p.yaml"
    pol.write_text(_policy_yaml(name, kind, param))
    out = tmp_path / "out"
    rc = main(["anonymize", str(data), "--policy", str(pol), "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2
    assert not out.exists() or not any(out.iterdir())
    assert "Traceback" not in err and "__init__" not in err
    if kind == "unknown":
        expected = "unknown parameter 'bogus'"
    else:
        expected = f"missing required parameter {param!r}"
    assert expected in err
    assert len([ln for ln in err.splitlines() if ln.strip()]) == 1
