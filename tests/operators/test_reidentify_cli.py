"""The ``veil reidentify`` command."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from _helpers import KEY, ctx

from veil.cli.main import main
from veil.deid.operators import get_operator


@pytest.fixture()
def release(tmp_path: Path) -> Path:
    df = pd.DataFrame({"ssn": ["078-05-1120", "219-09-9999"], "age": [34, 51], "note": ["?", "ok"]})
    out = get_operator("tokenize").apply(df, "ssn", ctx())
    p = tmp_path / "release.csv"
    out.to_csv(p, index=False)
    return p


@pytest.fixture()
def key_env(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("TEST_VEIL_KEY", KEY.hex())
    return "TEST_VEIL_KEY"


def test_reidentify_round_trip(release: Path, key_env: str, tmp_path: Path) -> None:
    out = tmp_path / "back.csv"
    rc = main(
        ["reidentify", str(release), "--columns", "ssn", "--out", str(out), "--key-env", key_env]
    )
    assert rc == 0
    back = pd.read_csv(out, keep_default_na=False)
    assert back["ssn"].tolist() == ["078-05-1120", "219-09-9999"]
    assert back["note"].tolist() == ["?", "ok"]  # other cells untouched
    assert not list(tmp_path.glob(".*tmp"))  # no temporary file left


def test_reidentify_out_creates_a_missing_folder(
    release: Path, key_env: str, tmp_path: Path
) -> None:
    """A missing folder of --out is created, as `veil anonymize --out DIR` does; a failed run
    (a wrong key) creates none."""
    out = tmp_path / "new" / "sub" / "back.csv"
    rc = main(["reidentify", str(release), "--columns", "ssn", "--out", str(out),
               "--key-env", key_env])  # fmt: skip
    assert rc == 0
    assert pd.read_csv(out)["ssn"].tolist() == ["078-05-1120", "219-09-9999"]
    bad = tmp_path / "other" / "back.csv"
    rc = main(["reidentify", str(release), "--columns", "age", "--out", str(bad),
               "--key-env", key_env])  # fmt: skip
    assert rc == 2 and not (tmp_path / "other").exists()


def test_reidentify_key_file(release: Path, tmp_path: Path) -> None:
    kf = tmp_path / "key.txt"
    kf.write_text(KEY.hex())
    out = tmp_path / "back.csv"
    assert (
        main(
            [
                "reidentify",
                str(release),
                "--columns",
                "ssn",
                "--out",
                str(out),
                "--key-file",
                str(kf),
            ]
        )
        == 0
    )
    assert pd.read_csv(out)["ssn"].iloc[0] == "078-05-1120"


def test_refuses_to_overwrite_input(
    release: Path, key_env: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before = release.read_bytes()
    rc = main(
        [
            "reidentify",
            str(release),
            "--columns",
            "ssn",
            "--out",
            str(release),
            "--key-env",
            key_env,
        ]
    )
    assert rc == 2 and release.read_bytes() == before
    assert "refusing to overwrite" in capsys.readouterr().err


def test_wrong_key_fails_and_writes_nothing(
    release: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("OTHER_KEY", "ff3e" * 16)
    out = tmp_path / "back.csv"
    rc = main(
        [
            "reidentify",
            str(release),
            "--columns",
            "ssn",
            "--out",
            str(out),
            "--key-env",
            "OTHER_KEY",
        ]
    )
    err = capsys.readouterr().err
    assert rc == 2 and not out.exists()
    assert "column 'ssn': 2 token(s) failed" in err and "ff" * 8 not in err
    assert err.count("\n") == 1  # one line, no traceback


def test_unknown_column_and_missing_key(
    release: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("NO_SUCH_KEY", raising=False)
    out = tmp_path / "b.csv"
    assert main(["reidentify", str(release), "--columns", "nope", "--out", str(out)]) == 2
    assert "'nope'" in capsys.readouterr().err
    rc = main(
        [
            "reidentify",
            str(release),
            "--columns",
            "ssn",
            "--out",
            str(out),
            "--key-env",
            "NO_SUCH_KEY",
        ]
    )
    assert rc == 2 and "NO_SUCH_KEY" in capsys.readouterr().err and not out.exists()


def test_reidentify_parquet(key_env: str, tmp_path: Path) -> None:
    df = pd.DataFrame({"member": [1001, 1002, 1001], "county": ["Kisii", "Lamu", "Kisii"]})
    rel = get_operator("tokenize", {"prefix": "tk_"}).apply(df, "member", ctx())
    src = tmp_path / "release.parquet"
    rel.to_parquet(src, index=False)
    out = tmp_path / "back.parquet"
    args = ["reidentify", str(src), "--columns", "member", "--prefix", "tk_", "--out", str(out)]
    assert main([*args, "--key-env", key_env]) == 0
    back = pd.read_parquet(out)
    assert back["member"].tolist() == [1001, 1002, 1001]
    assert back["county"].tolist() == ["Kisii", "Lamu", "Kisii"]


def test_renamed_column_needs_context(key_env: str, tmp_path: Path) -> None:
    df = pd.DataFrame({"ssn": ["078-05-1120"]})
    rel = get_operator("tokenize").apply(df, "ssn", ctx()).rename(columns={"ssn": "col_1"})
    src = tmp_path / "r.csv"
    rel.to_csv(src, index=False)
    out = tmp_path / "b.csv"
    base = ["reidentify", str(src), "--columns", "col_1", "--out", str(out), "--key-env", key_env]
    assert main(base) == 2 and not out.exists()
    assert main([*base, "--context", "col_1=ssn"]) == 0
    assert pd.read_csv(out)["col_1"].tolist() == ["078-05-1120"]


SECRET = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"


@pytest.mark.parametrize(
    "option",
    [
        ["--key-env", SECRET],  # `--key-env $VEIL_KEY`: the shell put the key in the name's place
        ["--key-env", "Correct-Horse-Battery-Staple!"],  # a text key
        ["--key-file", SECRET],
        ["--key-file", "base64:n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg="],
    ],
)
def test_a_key_given_in_place_of_its_name_is_not_echoed(
    release: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    option: list[str],
) -> None:
    monkeypatch.setenv("VEIL_KEY", SECRET)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "b.csv"
    rc = main(["reidentify", str(release), "--columns", "ssn", "--out", str(out), *option])
    err = capsys.readouterr().err
    assert rc == 2 and not out.exists() and err.count("\n") == 1
    assert option[1] not in err and SECRET[:16] not in err and "Horse" not in err
    assert "looks like a key" in err


def test_key_names_and_paths_are_still_shown(
    release: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("PSEUDONYM_KEY_PRODUCTION", raising=False)
    out = tmp_path / "b.csv"
    for option, shown in [
        (["--key-env", "PSEUDONYM_KEY_PRODUCTION"], "PSEUDONYM_KEY_PRODUCTION is not set"),
        (["--key-file", str(tmp_path / "veil.key")], "veil.key: No such file"),
    ]:
        rc = main(["reidentify", str(release), "--columns", "ssn", "--out", str(out), *option])
        assert rc == 2 and shown in capsys.readouterr().err


@pytest.mark.parametrize(
    "given",
    [
        "base64:SyJ3d9TdH8Ycb4hPSGQdArTRIdP9Moywi1Ux/Kzav4o=",  # a '/' near the end
        "SyJ3d9TdH8Ycb4hPSGQdArTRIdP9Moywi1Ux/Kzav4o=",
    ],
)
def test_a_base64_key_with_a_slash_given_as_key_file_is_not_echoed(
    release: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    given: str,
) -> None:
    # base64 keys contain '/': the file name is then only the key's last few characters,
    # short enough to pass as a name, but the message printed the whole path -- the key
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "b.csv"
    rc = main(
        ["reidentify", str(release), "--columns", "ssn", "--out", str(out), "--key-file", given]
    )
    err = capsys.readouterr().err
    assert rc == 2 and not out.exists()
    assert "SyJ3d9TdH8Ycb4hP" not in err and "looks like a key" in err
