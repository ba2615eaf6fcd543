"""End-to-end `veil scan` / `veil anonymize` runs and every bad-input path (exit 2, one line,
nothing written, --debug shows the traceback)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from veil.cli.main import main
from veil.io import read

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def _engine_available() -> bool:
    try:
        import veil.anonymity._policy_bridge  # noqa: F401
    except ModuleNotFoundError:
        return False
    return True


def test_quickstart_insurance(
    tmp_path: Path,
    insurance_csv: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("VEIL_KEY", raising=False)
    before = insurance_csv.read_bytes()
    out = tmp_path / "release"
    rc = main(
        [
            "anonymize",
            str(insurance_csv),
            "--policy",
            str(EXAMPLES / "insurance_ke.yaml"),
            "--out",
            str(out),
        ]
    )
    assert rc == 0, capsys.readouterr().err
    assert insurance_csv.read_bytes() == before
    assert sorted(p.name for p in out.iterdir()) == [
        "Insurance_data_ke.csv",
        "report.html",
        "report.json",
    ]
    release = read(out / "Insurance_data_ke.csv")
    assert "id" not in release.columns
    from veil.schema import Hierarchy

    age = Hierarchy.from_csv(EXAMPLES / "hierarchies" / "insurance_ke" / "age.csv")
    allowed = {str(v) for level in range(age.height) for v in age.labels(level)}
    assert set(release["Age"].dropna().astype(str)) <= allowed
    report = json.loads((out / "report.json").read_text())
    assert report["input"]["records"] == 1001 and report["release"]["records"] == len(release)
    assert report["risk"]["before"]["unique_share"] == 1.0
    assert report["risk"]["after"]["unique_share"] < report["risk"]["before"]["unique_share"]
    if _engine_available():
        assert report["targets"]["all_met"] and report["targets"]["mode"] == "enforced"
    html = (out / "report.html").read_text()
    assert "data:image/png;base64," in html and "Illness_category" in html
    assert "release:" in capsys.readouterr().out


def test_adult_end_to_end(
    tmp_path: Path, adult_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r"
    rc = main(
        ["anonymize", str(adult_data), "--policy", str(EXAMPLES / "adult.yaml"), "--out", str(out)]
    )
    assert rc == 0, capsys.readouterr().err
    # the release keeps the input's layout: no header row, ", " between fields
    first = (out / "adult.data").read_text().splitlines()[0]
    assert ", " in first and "age" not in first and first.count(", ") == 13
    names = yaml.safe_load((EXAMPLES / "adult.yaml").read_text())["input"]["names"]
    release = read(out / "adult.data", names=[c for c in names if c != "education-num"])
    assert len(release.columns) == 14
    assert (release["fnlwgt"] % 1000 == 0).all()
    report = json.loads((out / "report.json").read_text())
    assert report["suppression"]["records_removed_by_conditions"] == 32561 - 30162
    assert report["input"]["records"] == 32561
    assert report["release"]["records"] <= 30162


def test_scan_then_anonymize(
    tmp_path: Path, insurance_csv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    draft = tmp_path / "draft.yaml"
    assert main(["scan", str(insurance_csv), "--policy-out", str(draft)]) == 0
    text = capsys.readouterr().out
    assert "Illness_category" in text and "identifier" in text and "unique" in text
    d = yaml.safe_load(draft.read_text())
    assert d["columns"]["id"]["role"] == "identifier"
    assert (
        main(
            ["anonymize", str(insurance_csv), "--policy", str(draft), "--out", str(tmp_path / "o")]
        )
        == 0
    )
    assert "id" not in read(tmp_path / "o" / "Insurance_data_ke.csv").columns
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert report["targets"]["all_met"] and report["targets"]["mode"] == "enforced"
    assert d["privacy"]["algorithm"] == "mondrian"


def test_scan_then_anonymize_adult_headerless(
    tmp_path: Path, adult_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the drafted policy works as it stands: no hierarchies, no edits, targets enforced
    draft = tmp_path / "draft.yaml"
    assert main(["scan", str(adult_data), "--policy-out", str(draft)]) == 0
    note = [ln for ln in capsys.readouterr().err.splitlines() if "no header row" in ln]
    assert len(note) == 1 and "col_1..col_15" in note[0] and "--names" in note[0]
    d = yaml.safe_load(draft.read_text())
    assert d["privacy"]["algorithm"] == "mondrian" and d["privacy"]["k"] == 5
    out = tmp_path / "o"
    rc = main(["anonymize", str(adult_data), "--policy", str(draft), "--out", str(out)])
    assert rc == 0, capsys.readouterr().err
    report = json.loads((out / "report.json").read_text())
    assert report["targets"]["all_met"] and report["targets"]["mode"] == "enforced"
    assert report["risk"]["after"]["smallest_class"] >= 5
    assert (out / "adult.data").exists()


def test_scan_json(insurance_csv: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scan", str(insurance_csv), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {c["column"]: c["role"] for c in data["columns"]}["Illness_category"] == "sensitive"


def test_keyed_pseudonyms_consistent_across_runs(
    tmp_path: Path, insurance_csv: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    policy = tmp_path / "p.yaml"
    policy.write_text(
        "version: 1\ncolumns:\n  id: {role: identifier, operator: pseudonymize}\ndefault_role: insensitive\n"
    )
    monkeypatch.setenv("VEIL_KEY", "0f1e" * 16)
    outs = []
    for i in range(2):
        assert (
            main(
                [
                    "anonymize",
                    str(insurance_csv),
                    "--policy",
                    str(policy),
                    "--out",
                    str(tmp_path / f"o{i}"),
                ]
            )
            == 0
        )
        outs.append(read(tmp_path / f"o{i}" / "Insurance_data_ke.csv")["id"])
    assert outs[0].tolist() == outs[1].tolist() and outs[0].nunique() == 1001
    assert "0f1e" * 16 not in (tmp_path / "o0" / "report.json").read_text()


def test_parquet_in_parquet_out(tmp_path: Path, insurance_csv: Path) -> None:
    src = tmp_path / "ins.parquet"
    read(insurance_csv).to_parquet(src)
    pol = _policy(
        tmp_path, "columns:\n  id: {role: identifier, operator: drop}\ndefault_role: insensitive\n"
    )
    assert main(["anonymize", str(src), "--policy", str(pol), "--out", str(tmp_path / "o")]) == 0
    assert (tmp_path / "o" / "ins.parquet").read_bytes()[:4] == b"PAR1"
    assert "id" not in read(tmp_path / "o" / "ins.parquet").columns


def test_subprocess_quickstart(tmp_path: Path, insurance_csv: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "VEIL_KEY"}
    env["CI"] = "1"
    proc = subprocess.run(
        [sys.executable, "-m", "veil", "anonymize", str(insurance_csv), "--policy", str(EXAMPLES / "insurance_ke.yaml"), "--out", str(tmp_path / "rel")],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "rel" / "report.html").is_file()
    assert "\x1b[" not in proc.stdout + proc.stderr  # no progress bar / colour codes off a tty


# ------------------------------------------------------------------ bad input


def _policy(tmp_path: Path, text: str) -> Path:
    if not (tmp_path / "hierarchies").exists():
        shutil.copytree(EXAMPLES / "hierarchies", tmp_path / "hierarchies")
    n = len(list(tmp_path.glob("policy*.yaml")))
    p = tmp_path / f"policy{n}.yaml"
    p.write_text(text)
    return p


INS_POLICY = (EXAMPLES / "insurance_ke.yaml").read_text()


def _cases(tmp_path: Path, insurance_csv: Path) -> dict[str, tuple[list[str], str]]:
    good = str(EXAMPLES / "insurance_ke.yaml")
    empty = tmp_path / "empty.csv"
    empty.write_text("a,b\n")
    bad_bytes = tmp_path / "bad.csv"
    bad_bytes.write_bytes("County,Age\nMurang\xe1,3\n".encode("cp1252"))
    copy = tmp_path / "data" / "Insurance_data_ke.csv"
    copy.parent.mkdir()
    shutil.copy(insurance_csv, copy)
    local = tmp_path / "hier"
    local.mkdir()
    (local / "county.csv").write_text("Nairobi (County),Nairobi,*\nKisii,Nyanza,*\n")
    return {
        "missing file": (["anonymize", str(tmp_path / "nope.csv"), "--policy", good], "not found"),
        "unreadable (a directory)": (["anonymize", str(tmp_path), "--policy", good], "directory"),
        "undecodable bytes": (
            ["anonymize", str(bad_bytes), "--encoding", "utf-8", "--policy", good],
            "decode",
        ),
        "empty table": (["anonymize", str(empty), "--policy", good], "empty"),
        "unknown column": (
            [
                "anonymize",
                str(insurance_csv),
                "--policy",
                str(_policy(tmp_path, INS_POLICY.replace("  Tier:", "  Tear:"))),
            ],
            "unknown column 'Tear'",
        ),
        "invalid operator parameters": (
            [
                "anonymize",
                str(insurance_csv),
                "--policy",
                str(_policy(tmp_path, INS_POLICY.replace("date: year", "date: fortnight"))),
            ],
            "Date_of_entry",
        ),
        "unknown operator": (
            [
                "anonymize",
                str(insurance_csv),
                "--policy",
                str(_policy(tmp_path, INS_POLICY.replace("operator: drop", "operator: shred"))),
            ],
            "unknown operator 'shred'",
        ),
        "hierarchy lacking values": (
            [
                "anonymize",
                str(insurance_csv),
                "--policy",
                str(
                    _policy(
                        tmp_path,
                        INS_POLICY.replace(
                            "hierarchies/insurance_ke/county.csv", "hier/county.csv"
                        ),
                    )
                ),
            ],
            "missing from its hierarchy",
        ),
        "hierarchy file missing": (
            [
                "anonymize",
                str(insurance_csv),
                "--policy",
                str(
                    _policy(
                        tmp_path,
                        INS_POLICY.replace("hierarchies/insurance_ke/county.csv", "hier/none.csv"),
                    )
                ),
            ],
            "not found",
        ),
        "missing key": (
            [
                "anonymize",
                str(insurance_csv),
                "--policy",
                str(
                    _policy(
                        tmp_path, INS_POLICY.replace("operator: drop", "operator: pseudonymize")
                    )
                ),
            ],
            "VEIL_KEY",
        ),
        "missing key file": (
            ["anonymize", str(insurance_csv), "--policy", good, "--key-file", str(tmp_path / "k")],
            "key file",
        ),
        "missing policy": (
            ["anonymize", str(insurance_csv), "--policy", str(tmp_path / "none.yaml")],
            "not found",
        ),
        "release over its input": (
            ["anonymize", str(copy), "--policy", good, "--out-here"],
            "refusing",
        ),
    }


CASE_NAMES = [
    "missing file", "unreadable (a directory)", "undecodable bytes", "empty table", "unknown column",
    "invalid operator parameters", "unknown operator", "hierarchy lacking values", "hierarchy file missing",
    "missing key", "missing key file", "missing policy", "release over its input",
]  # fmt: skip


@pytest.mark.parametrize("case", CASE_NAMES)
def test_bad_input(
    case: str,
    tmp_path: Path,
    insurance_csv: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("VEIL_KEY", raising=False)
    args, fragment = _cases(tmp_path, insurance_csv)[case]
    if args[-1] == "--out-here":
        out = Path(args[1]).parent
        args = args[:-1] + ["--out", str(out)]
        before = sorted(p.name for p in out.iterdir())
    else:
        out = tmp_path / "out"
        args = args + ["--out", str(out)]
    rc = main(args)
    err = capsys.readouterr().err
    assert rc == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("veil: error: "), err
    assert fragment in lines[0], lines[0]
    assert "Traceback" not in err
    if case == "release over its input":
        assert sorted(p.name for p in out.iterdir()) == before
    else:
        assert not out.exists()
    # --debug shows the traceback instead
    rc = main(["--debug", *args])
    assert rc == 2 and "Traceback" in capsys.readouterr().err


def test_nothing_written_when_writing_fails_midway(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "in.csv"
    src.write_text("name,age\nAnn,30\nBob,41\n")
    pol = _policy(tmp_path, "columns:\n  name: {role: identifier, operator: drop}\n  age: quasi\n")

    def boom(*a: object, **k: object) -> None:
        raise OSError("disk full")

    out = tmp_path / "out"
    monkeypatch.setattr("veil.io.write_json", boom)
    # an OS error is reported on one line with exit code 2, and nothing is left behind
    assert main(["anonymize", str(src), "--policy", str(pol), "--out", str(out)]) == 2
    assert not out.exists()
    out.mkdir()
    (out / "keep.txt").write_text("x")
    assert main(["anonymize", str(src), "--policy", str(pol), "--out", str(out)]) == 2
    assert [p.name for p in out.iterdir()] == ["keep.txt"]


def test_usage_error_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["anonymize", "x.csv"])
    assert info.value.code == 2
    assert "--policy" in capsys.readouterr().err


def test_out_is_a_file(
    tmp_path: Path, insurance_csv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "f"
    f.write_text("")
    assert (
        main(
            [
                "anonymize",
                str(insurance_csv),
                "--policy",
                str(EXAMPLES / "insurance_ke.yaml"),
                "--out",
                str(f),
            ]
        )
        == 2
    )
    assert "folder" in capsys.readouterr().err


def test_input_frame_unchanged_by_cli_apply(insurance_csv: Path) -> None:
    from veil.deid import Policy, apply

    df = read(insurance_csv)
    snapshot = df.copy(deep=True)
    apply(df, Policy.from_yaml(EXAMPLES / "insurance_ke.yaml"))
    pd.testing.assert_frame_equal(df, snapshot)


def test_progress_bar_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    from veil.cli import _anonymize

    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert _anonymize._use_progress()
    with _anonymize._progress() as tick:
        assert tick is not None
        tick("generalize Age", 1, 3)
    monkeypatch.setenv("CI", "1")
    assert not _anonymize._use_progress()
    monkeypatch.delenv("CI")
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    assert not _anonymize._use_progress()


def test_scan_headerless_with_names_and_parquet(
    tmp_path: Path, adult_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    names = "age,workclass,fnlwgt,education,education-num,marital-status,occupation,relationship,race,sex,capital-gain,capital-loss,hours-per-week,native-country,income"
    draft = tmp_path / "a.yaml"
    assert main(["scan", str(adult_data), "--names", names, "--policy-out", str(draft)]) == 0
    assert "no header row" not in capsys.readouterr().err
    d = yaml.safe_load(draft.read_text())
    assert d["input"]["names"] == names.split(",") and d["columns"]["income"]["role"] == "sensitive"
    pq = tmp_path / "a.parquet"
    read(adult_data, names=names.split(",")).head(500).to_parquet(pq)
    capsys.readouterr()
    assert main(["scan", str(pq), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["n_rows"] == 500


def test_engine_error_names_privacy_line(
    tmp_path: Path, insurance_csv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("veil.anonymity._policy_bridge")
    pol = _policy(
        tmp_path,
        "columns:\n  id: {role: identifier, operator: drop}\n  County: quasi\ndefault_role: insensitive\n"
        "privacy:\n  k: 5\n  algorithm: optimal\n",
    )
    out = tmp_path / "o"
    assert main(["anonymize", str(insurance_csv), "--policy", str(pol), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"veil: error: {pol.name}, line 7: privacy:") and "hierarchy" in err
    assert not out.exists()


# ------------------------------------------------------------------ unmet privacy targets

UNMET = (
    "columns:\n  id: {role: identifier, operator: drop}\n  Age: quasi\n  County: quasi\n"
    "default_role: insensitive\nprivacy:\n  k: 5\n  suppression_limit: 0.0\n"
)


def test_unmet_targets_exit_1_and_write_nothing(
    tmp_path: Path, insurance_csv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pol = _policy(tmp_path, UNMET)
    out = tmp_path / "o"
    rc = main(["anonymize", str(insurance_csv), "--policy", str(pol), "--out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and not out.exists()
    assert len(err) == 1, err
    assert err[0].startswith("veil: error: privacy targets not met: k=5 achieved 1;")
    assert "privacy.algorithm" in err[0] and "--allow-unmet" in err[0]
    assert "suppression_limit" not in err[0]  # met targets are not named
    # an existing --out folder is left exactly as it was
    out.mkdir()
    (out / "keep.txt").write_text("x")
    assert main(["anonymize", str(insurance_csv), "--policy", str(pol), "--out", str(out)]) == 1
    assert [p.name for p in out.iterdir()] == ["keep.txt"]


def test_unsatisfiable_targets_exit_1_name_the_model_and_write_nothing(
    tmp_path: Path, insurance_csv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """l = 9 on a column with fewer distinct values per county group than that cannot be met
    even at the top of the lattice: exit 1, one line naming the model, nothing written, and
    --allow-unmet cannot change it (there is no release to write)."""
    assert "l: 2, variant: distinct" in INS_POLICY
    pol = _policy(
        tmp_path, INS_POLICY.replace("l: 2, variant: distinct", "l: 9, variant: distinct")
    )
    privacy_line = INS_POLICY.splitlines().index("privacy:") + 1
    out = tmp_path / "o"
    args = ["anonymize", str(insurance_csv), "--policy", str(pol), "--out", str(out)]
    for extra in ([], ["--allow-unmet"]):
        assert main([*args, *extra]) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1, err
        assert f"{pol.name}, line {privacy_line}: privacy:" in err[0]
        assert "distinct-l-diversity(column=Illness_category, l=9) fails" in err[0]
        assert "--allow-unmet cannot help" in err[0]
        assert not out.exists()


def test_allow_unmet_writes_and_says_not_met(
    tmp_path: Path, insurance_csv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pol = _policy(tmp_path, UNMET)
    out = tmp_path / "o"
    args = ["anonymize", str(insurance_csv), "--policy", str(pol), "--out", str(out)]
    assert main([*args, "--allow-unmet"]) == 0
    assert "privacy targets (verified): NOT met" in capsys.readouterr().out
    assert {p.name for p in out.iterdir()} == {
        "Insurance_data_ke.csv",
        "report.json",
        "report.html",
    }
    report = json.loads((out / "report.json").read_text())
    assert report["targets"]["all_met"] is False and report["targets"]["k"]["met"] is False


def test_anonymize_help_documents_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["anonymize", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--allow-unmet" in text and "1 privacy targets not met" in text


def test_scan_refuses_to_write_the_draft_over_its_input(
    tmp_path: Path, insurance_csv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "in.csv"
    shutil.copy(insurance_csv, src)
    before = src.read_bytes()
    link = tmp_path / "link.csv"
    link.symlink_to(src)
    for target in (src, link, tmp_path / "." / "in.csv"):
        assert main(["scan", str(src), "--policy-out", str(target)]) == 2
        captured = capsys.readouterr()
        err = captured.err.strip().splitlines()
        assert len(err) == 1 and "refusing to write the draft policy over its input" in err[0]
        assert captured.out == ""  # refused before any work
        assert src.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "link.csv"]


def test_negative_seed_is_a_one_line_error(
    tmp_path: Path, insurance_csv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "release"
    argv = ["anonymize", str(insurance_csv), "--policy", str(EXAMPLES / "insurance_ke.yaml")]
    assert main([*argv, "--out", str(out), "--seed", "-1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("veil: error:") and "seed" in err and "\n" not in err
    assert not out.exists()
