"""Output paths of every command: a missing folder is created (as `veil anonymize --out DIR`
always did), only once the run's checks passed, and removed again when the run fails."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

import veil.io._write
from veil.cli.main import main

pytestmark = pytest.mark.filterwarnings("ignore::veil.errors.InsecureRandomWarning")


@pytest.fixture()
def table(tmp_path: Path) -> Path:
    src = tmp_path / "t.csv"
    pd.DataFrame({"age": [30, 40, 50, 60] * 3, "city": list("abab") * 3}).to_csv(src, index=False)
    return src


@pytest.fixture()
def policy(tmp_path: Path) -> Path:
    pol = tmp_path / "p.yaml"
    pol.write_text("version: 1\ncolumns:\n  age: insensitive\n  city: insensitive\n")
    return pol


def _query(table: Path, out: Path, *extra: str) -> list[str]:
    return ["query", str(table), "SELECT city, COUNT(*) AS n FROM data GROUP BY city",
            "--epsilon", "1", "--keys", "city=a,b", "--seed", "1", "--out", str(out),
            *extra]  # fmt: skip


def test_query_out_creates_a_missing_folder(table: Path, tmp_path: Path, capsys) -> None:
    """`veil query --out new/sub/o.csv` refused the missing folder that anonymize creates."""
    out = tmp_path / "new" / "sub" / "o.csv"
    assert main(_query(table, out)) == 0
    written = pd.read_csv(out, dtype=str)
    assert list(written.columns[:2]) == ["city", "n"] and sorted(written.city) == ["a", "b"]
    assert "written to" in capsys.readouterr().err


@pytest.mark.parametrize("extra", [["--epsilon", "-1"], ["--bounds", "nope=0:1"]])
def test_query_creates_no_folder_when_a_check_fails(
    table: Path, tmp_path: Path, capsys, extra: list[str]
) -> None:
    out = tmp_path / "new" / "sub" / "o.csv"
    assert main(_query(table, out, *extra)) == 2
    assert capsys.readouterr().out == ""
    assert not (tmp_path / "new").exists()


def test_query_failed_write_removes_the_folders_it_created(
    table: Path, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(*a: object, **k: object) -> bool:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(veil.io._write, "_arrow_csv", full)
    out = tmp_path / "new" / "sub" / "o.csv"
    assert main(_query(table, out)) == 2
    assert capsys.readouterr().out == ""  # nothing released
    assert sorted(os.listdir(tmp_path)) == ["t.csv"]


@pytest.mark.parametrize("cmd", ["query", "anonymize", "scan", "keygen", "reidentify"])
def test_a_path_through_a_file_is_refused_first(
    cmd: str, table: Path, policy: Path, tmp_path: Path, capsys
) -> None:
    """A folder that cannot be made (under a file) is refused before any work, naming the
    option; keygen and anonymize used to fail with the system's error after the work."""
    (tmp_path / "afile").write_text("x")
    out = tmp_path / "afile" / "sub"
    argv = {
        "query": _query(table, out / "o.csv"),
        "anonymize": ["anonymize", str(table), "--policy", str(policy), "--out", str(out)],
        "scan": ["scan", str(table), "--policy-out", str(out / "p.yaml")],
        "keygen": ["crypto", "keygen", "--bits", "1024", "--insecure", "--out", str(out)],
        "reidentify": ["reidentify", str(table), "--columns", "city", "--out", str(out / "o.csv")],
    }[cmd]
    assert main(argv) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and "afile is not a folder" in cap.err and "--" in cap.err, cap


def test_scan_policy_out_creates_a_missing_folder(table: Path, tmp_path: Path) -> None:
    out = tmp_path / "drafts" / "p.yaml"
    assert main(["scan", str(table), "--policy-out", str(out)]) == 0
    assert "columns:" in out.read_text()


def test_anonymize_failure_removes_every_folder_it_created(
    table: Path, policy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the deepest folder of --out a/b/c was removed on error: a/b stayed behind."""
    import veil.io

    def broken(*a: object, **k: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(veil.io, "write_json", broken)
    out = tmp_path / "a" / "b" / "c"
    assert main(["anonymize", str(table), "--policy", str(policy), "--out", str(out)]) == 2
    assert sorted(os.listdir(tmp_path)) == ["p.yaml", "t.csv"]


def test_anonymize_failure_keeps_folders_that_existed(
    table: Path, policy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import veil.io

    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "mine.txt").write_text("mine")

    def broken(*a: object, **k: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(veil.io, "write_json", broken)
    out = tmp_path / "a" / "b" / "c"
    assert main(["anonymize", str(table), "--policy", str(policy), "--out", str(out)]) == 2
    assert sorted(os.listdir(tmp_path / "a")) == ["mine.txt"]
