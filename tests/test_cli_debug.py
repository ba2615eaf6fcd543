"""``--debug`` works before the sub-command (``veil --debug check ...``) and after it
(``veil check ... --debug``): the traceback replaces the one-line error either way."""

from __future__ import annotations

from pathlib import Path

import pytest

from veil.cli.main import build_parser, main


def _commands(tmp_path: Path) -> dict[str, list[str]]:
    missing = str(tmp_path / "missing.csv")
    policy = tmp_path / "policy.yaml"
    policy.write_text("columns:\n  age: quasi\n")
    return {
        "scan": ["scan", missing],
        "anonymize": ["anonymize", missing, "--policy", str(policy), "--out", str(tmp_path / "o")],
        "check": ["check", missing, "--qi", "age", "--k", "2"],
        "query": ["query", missing, "SELECT COUNT(*) FROM data", "--epsilon", "1"],
    }


@pytest.mark.parametrize("command", ["scan", "anonymize", "check", "query"])
@pytest.mark.parametrize("position", ["none", "before", "after", "both"])
def test_debug_flag_in_any_position(tmp_path, capsys, command, position):
    args = _commands(tmp_path)[command]
    if position in ("before", "both"):
        args = ["--debug", *args]
    if position in ("after", "both"):
        args = [*args, "--debug"]
    rc = main(args)
    err = capsys.readouterr().err
    assert rc == 2, err
    assert "unrecognized arguments" not in err
    if position == "none":
        assert "Traceback" not in err and err.startswith("veil: error: "), err
    else:
        assert "Traceback" in err, err


def test_debug_defaults_and_nested_subcommands():
    parser = build_parser()
    assert parser.parse_args(["scan", "x.csv"]).debug is False
    assert parser.parse_args(["--debug", "scan", "x.csv"]).debug is True
    assert parser.parse_args(["scan", "x.csv", "--debug"]).debug is True
    # nested sub-commands (veil crypto keygen ...) accept it as well
    assert parser.parse_args(["crypto", "keygen", "--debug", "--out", "k"]).debug is True
