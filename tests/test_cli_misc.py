"""Cross-cutting CLI behaviour: inputs never overwritten, OS errors as one line."""

from __future__ import annotations

import shutil
from pathlib import Path

import veil
from veil.cli.main import main

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_query_refuses_to_overwrite_its_input(tmp_path, insurance_csv, capsys):
    data = tmp_path / "ins.csv"
    shutil.copy(insurance_csv, data)
    before = data.read_bytes()
    rc = main(
        [
            "query",
            str(data),
            "SELECT COUNT(*) FROM data",
            "--epsilon",
            "1",
            "--out",
            str(data),
        ]
    )
    assert rc == 2
    assert "input" in capsys.readouterr().err
    assert data.read_bytes() == before


def test_os_errors_are_one_line_exit_2(tmp_path, insurance_csv, capsys):
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    rc = main(
        [
            "anonymize",
            str(insurance_csv),
            "--policy",
            str(EXAMPLES / "insurance_ke.yaml"),
            "--out",
            str(blocker / "sub"),
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert len(err) == 1 and err[0].startswith("veil: error:")
    assert str(blocker) in err[0], err  # the OS error itself, not e.g. a missing policy
    assert "Traceback" not in "\n".join(err)


def test_keygen_below_2048_bits_needs_insecure(tmp_path, capsys):
    rc = main(["crypto", "keygen", "--bits", "1024", "--out", str(tmp_path / "k")])
    assert rc == 2 and "--insecure" in capsys.readouterr().err
    assert not (tmp_path / "k").exists()


def test_top_level_api_is_discoverable():
    names = dir(veil)
    for name in ("read", "write", "scan", "Policy", "apply", "__version__"):
        assert name in names


def test_warnings_are_one_line_and_empty_out_is_refused(tmp_path, capsys) -> None:
    import warnings

    import pandas as pd

    from veil.cli import main as cli

    src = tmp_path / "t.csv"
    pd.DataFrame({"q": list("aabb"), "s": list("xyxy")}).to_csv(src, index=False)
    rc = cli.main(["check", str(src), "--qi", "q", "--k", "2", "--t", "s:0.9",
                   "--t-distance", "ordered"])  # fmt: skip
    err = capsys.readouterr().err
    assert rc == 0 and "veil: warning: t-closeness with the ordered distance" in err
    assert "warnings.warn" not in err and ".py:" not in err  # no source path, no code line
    assert warnings.showwarning is not cli._show_warning  # restored after the command
    pol = tmp_path / "p.yaml"
    pol.write_text("version: 1\ncolumns:\n  q: insensitive\n  s: insensitive\n")
    assert cli.main(["anonymize", str(src), "--policy", str(pol), "--out", ""]) == 2
    assert "--out must name a folder" in capsys.readouterr().err
    assert cli.main(["crypto", "keygen", "--out", " "]) == 2
    assert "--out must name a folder" in capsys.readouterr().err


def test_usage_errors_are_one_line(capsys):
    """A mistyped option prints one line (no usage block) naming the option and where help is,
    exit 2, for every command."""
    import pytest

    cases = [
        ["check", "x.csv", "--qi", "a", "--k", "abc"],
        ["query", "x.csv", "SELECT COUNT(*) FROM data", "--epsilon", "abc"],
        ["anonymize", "x.csv"],
        ["scan"],
        ["crypto", "keygen", "--bits", "many"],
        ["nope"],
    ]
    for argv in cases:
        with pytest.raises(SystemExit) as e:
            main(argv)
        err = capsys.readouterr().err
        assert e.value.code == 2, argv
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("veil: error: "), (argv, err)
        assert "--help" in lines[0] and "usage:" not in err


def test_check_with_names_does_not_say_the_columns_are_col_n(tmp_path, capsys) -> None:
    """A headerless file named by ``--names``: a misspelt --qi column is not answered with
    'its columns are named col_1..col_n' (they are the names given)."""
    p = tmp_path / "raw.data"
    p.write_text("".join(f"{20 + i % 7}, {'FM'[i % 2]}, x\n" for i in range(40)))
    rc = main(["check", str(p), "--names", "age,sex,y", "--qi", "agex,sex", "--k", "2"])
    err = capsys.readouterr().err
    assert rc == 2 and "agex" in err
    assert "col_1" not in err and "no header row" not in err
