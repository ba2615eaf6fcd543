"""``veil query`` option validation: --max-groups/--max-rows, --bounds, a tiny --epsilon."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from veil.cli.main import main
from veil.dp.frame._noise import discrete_laplace_halfwidth

pytestmark = pytest.mark.filterwarnings("ignore::veil.errors.InsecureRandomWarning")


COUNT = "SELECT county, COUNT(*) FROM data GROUP BY county"


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--max-groups", "0", "--privacy-unit", "pid"], "--max-groups must be a positive"),
        (["--max-rows", "0", "--privacy-unit", "pid"], "--max-rows must be a positive"),
        (["--max-groups", "-3", "--privacy-unit", "pid"], "--max-groups must be a positive"),
        (["--max-groups", "0"], "--max-groups must be a positive"),  # not ignored without unit
        (["--max-rows", "0"], "--max-rows must be a positive"),
        (["--max-rows", "2"], "--privacy-unit"),
        (["--bounds", "nope=0:10"], "no column 'nope'"),
        (["--bounds", "age=18:100", "--bounds", "age=0:10"], "--bounds age: given twice"),
        (["--epsilon", "1e-300"], "--epsilon 1e-300 is too small for this query"),
    ],
)
def test_option_errors_exit_2(table: Path, capsys, args: list[str], fragment: str) -> None:
    rc = main(["query", str(table), COUNT, "--epsilon", "1", "--keys", "county=a,b", *args])
    assert rc == 2
    err = capsys.readouterr().err
    assert err.startswith("veil: error:") and fragment in err, err
    assert err.count("\n") == 1


def test_tiny_epsilon_with_private_selection_names_the_option(table: Path, capsys) -> None:
    rc = main(["query", str(table), COUNT, "--epsilon", "1e-300", "--delta", "1e-6"])
    assert rc == 2
    err = capsys.readouterr().err
    assert "--epsilon 1e-300" in err and "too small" in err and err.count("\n") == 1


@pytest.mark.parametrize(
    "args",
    [
        ["--max-groups", "1", "--max-rows", "1"],  # what a row means without --privacy-unit
        ["--max-groups", "2", "--max-rows", "3", "--privacy-unit", "pid"],
        ["--bounds", "age=0:100"],  # a table column the query does not use: allowed
    ],
)
def test_valid_options_run(table: Path, args: list[str]) -> None:
    rc = main(
        ["query", str(table), COUNT, "--epsilon", "1", "--keys", "county=a,b", "--seed", "0",
         *args]
    )  # fmt: skip
    assert rc == 0


def test_tiny_epsilon_dry_run_reports_huge_halfwidth(table: Path, capsys) -> None:
    rc = main(["query", str(table), COUNT, "--epsilon", "1e-300", "--keys", "county=a,b",
               "--dry-run"])  # fmt: skip
    assert rc == 0
    assert "e+300" in capsys.readouterr().out


@pytest.mark.parametrize("scale", [0.3, 1.0, 3.0, 47.5, 1e3])
@pytest.mark.parametrize("alpha", [0.05, 0.01])
def test_discrete_laplace_halfwidth_is_the_smallest_valid(scale: float, alpha: float) -> None:
    p = math.exp(-1.0 / scale)

    def tail(t: float) -> float:  # P(|Z| > t) for the two-sided geometric
        return 2 * p ** (t + 1) / (1 + p)

    t = discrete_laplace_halfwidth(scale, alpha)
    assert tail(t) <= alpha * (1 + 1e-9)
    assert t == 0 or tail(t - 1) > alpha


def test_discrete_laplace_halfwidth_for_scales_where_p_rounds_to_one() -> None:
    # p = exp(-1/scale) is 1.0 in floating point; the tail is then that of Laplace(scale)
    for scale in (1e17, 1e300):
        t = discrete_laplace_halfwidth(scale, 0.05)
        assert math.isfinite(t)
        assert t == pytest.approx(scale * math.log(1 / 0.05), rel=1e-9)


@pytest.mark.parametrize("where", ["folder", "file/o.csv", "file/missing/o.csv"])
def test_bad_out_path_is_refused_before_anything_is_released(
    table: Path, tmp_path: Path, capsys, where: str
) -> None:
    """An --out that cannot be written used to fail only after the noisy table was printed:
    a release with exit status 2, which invites a second run (a second release).  (A missing
    folder is created when writing: tests/cli_deid/test_cli_output_folders.py.)"""
    (tmp_path / "folder").mkdir()
    (tmp_path / "file").write_text("x")
    rc = main(["query", str(table), "SELECT COUNT(*) FROM data", "--epsilon", "1",
               "--out", str(tmp_path / where)])  # fmt: skip
    cap = capsys.readouterr()
    assert rc == 2 and cap.out == "" and cap.err.count("\n") == 1, cap
    assert "--out" in cap.err


@pytest.mark.parametrize("size", ["0", "-5", "nan", "inf"])
def test_group_size_must_be_a_positive_number(table: Path, capsys, size: str) -> None:
    """--group-size 0, -5, nan or inf used to print half-widths of some other group size."""
    rc = main(["query", str(table), "SELECT AVG(age) FROM data", "--epsilon", "1",
               "--bounds", "age=0:100", "--dry-run", "--group-size", size])  # fmt: skip
    cap = capsys.readouterr()
    assert rc == 2 and cap.out == "" and "group_size" in cap.err.replace("-", "_"), cap


def test_accuracy_group_size_must_be_a_positive_number() -> None:
    import pandas as pd

    from veil.dp.frame import PrivateFrame
    from veil.errors import ConfigError

    plan = PrivateFrame(pd.DataFrame({"x": [1.0]}), accountant=False).plan(
        m=("x", "mean", (0, 1)), epsilon=1.0
    )
    for size in (0, -5, math.nan, math.inf):
        with pytest.raises(ConfigError, match="group_size"):
            plan.accuracy(0.05, group_size=size)


def test_dry_run_help_says_what_it_reads(table: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--help promised that --dry-run reads "nothing but the header"; it reads the table."""
    import veil.io
    from veil.cli.main import build_parser

    calls = []
    real = veil.io.read
    monkeypatch.setattr(veil.io, "read", lambda *a, **k: calls.append(a) or real(*a, **k))
    rc = main(["query", str(table), "SELECT COUNT(*) FROM data", "--epsilon", "1", "--dry-run"])
    assert rc == 0 and calls  # the whole table is read
    sub = build_parser()._subparsers._group_actions[0].choices["query"]
    (action,) = [a for a in sub._actions if "--dry-run" in a.option_strings]
    assert "header" not in action.help and "nothing is released" in action.help


def test_out_to_a_fifo_or_device_is_written_not_replaced(table: Path, tmp_path: Path) -> None:
    """--out /dev/null (or /dev/stdout, a FIFO) was written through a temporary file renamed
    over the target: the device node was replaced by a regular file (as root, /dev/null)."""
    import os
    import stat
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()), daemon=True)
    reader.start()
    rc = main(["query", str(table), "SELECT COUNT(*) AS n FROM data", "--epsilon", "1",
               "--seed", "1", "--out", str(fifo)])  # fmt: skip
    if not stat.S_ISFIFO(os.stat(fifo).st_mode):  # replaced: unblock nothing, just fail
        pytest.fail("--out replaced the FIFO by a regular file")
    reader.join(10)
    assert rc == 0 and got and got[0].splitlines()[0].startswith("n,")


def test_released_key_text_follows_release_key() -> None:
    """Key text is written from the released key alone; every missing form (NaT, a float32 NaN
    of a Parquet column) is a missing key, not the text 'NaT' / 'nan'."""
    import numpy as np
    import pandas as pd

    from veil.cli._query import _key_text

    for missing in (None, pd.NA, math.nan, np.float32("nan"), pd.NaT):
        assert math.isnan(_key_text(missing))
    assert [_key_text(v) for v in (30, 30.0, np.float32(30.0), "30", True, 2.5)] == [
        "30",
        "30",
        "30",
        "30",
        "True",
        "2.5",
    ]
