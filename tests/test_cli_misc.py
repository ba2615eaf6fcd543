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
