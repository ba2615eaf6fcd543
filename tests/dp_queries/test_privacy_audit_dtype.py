"""Audit: the quantile mechanism must not be chosen by a column type inferred from the data.

``veil query`` reads its input with type inference: an ``age`` column of whole numbers is
``int64``, but one missing (or fractional) age anywhere makes the whole column ``float64``.
The quantile mechanism used to follow that dtype -- permute-and-flip over the integers for
``int64`` (an integer release), Smith's interval mechanism for ``float64`` (a release that is
almost surely not an integer) -- so whether the released median is a whole number told
whether *some* person had a missing or fractional age: neighbouring tables ``D`` (all ages
whole) and ``D'`` (``D`` plus one person whose age is missing) gave the event "median is an
integer" probabilities 1 and 0, an unbounded privacy loss.  Integer candidates are now used
only for columns declared public-ly integer (``--integer COL``, ``PrivateFrame(...,
integer_columns=[...])``).  The released group keys had the same flaw (their column type).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from veil.cli.main import main
from veil.dp.frame import PrivateFrame
from veil.errors import ConfigError

from ._neighbours import certified_excess

pytestmark = pytest.mark.filterwarnings("ignore::veil.errors.InsecureRandomWarning")
EPS, RUNS = 1.0, 60


def _tables(tmp_path: Path) -> tuple[Path, Path]:
    rng = np.random.default_rng(7)
    base = pd.DataFrame({"pid": range(80), "age": rng.integers(20, 60, 80)})
    d = tmp_path / "d.csv"
    base.to_csv(d, index=False)
    d2 = tmp_path / "d2.csv"  # one more person, whose age is missing
    d2.write_text(d.read_text() + "999,\n")
    return d, d2


def _is_integer_release(path: Path, tmp_path: Path, runs: int, *extra: str) -> list[bool]:
    out = tmp_path / "o.csv"
    events = []
    for seed in range(runs):
        rc = main(
            ["query", str(path), "SELECT MEDIAN(age) AS med FROM data", "--epsilon", str(EPS),
             "--privacy-unit", "pid", "--bounds", "age=0:100", "--seed", str(seed),
             "--out", str(out), *extra]
        )  # fmt: skip
        assert rc == 0
        med = float(pd.read_csv(out)["med"].iloc[0])
        events.append(med.is_integer())
    return events


def test_median_release_does_not_reveal_a_missing_value(tmp_path: Path, capsys) -> None:
    d, d2 = _tables(tmp_path)
    xs = _is_integer_release(d, tmp_path, RUNS)
    ys = _is_integer_release(d2, tmp_path, RUNS)
    assert certified_excess(xs, ys, EPS) <= 0.0  # pure epsilon-DP: delta = 0
    assert certified_excess(ys, xs, EPS) <= 0.0


def test_declared_integer_column_is_integer_in_both_neighbours(tmp_path: Path, capsys) -> None:
    d, d2 = _tables(tmp_path)
    xs = _is_integer_release(d, tmp_path, 20, "--integer", "age")
    ys = _is_integer_release(d2, tmp_path, 20, "--integer", "age")
    assert all(xs) and all(ys)  # the declared support, whatever the inferred dtype


def test_frame_declaration_overrides_the_dtype() -> None:
    ints = pd.DataFrame({"age": np.arange(20, 60)})
    floats = ints.astype(float).assign(age=lambda t: t["age"] + 0.25)
    for df in (ints, floats):
        pf = PrivateFrame(df, accountant=False, random_state=1, integer_columns=["age"])
        med = pf.agg(m=("age", "median", (0, 100)), epsilon=1.0)["m"].iloc[0]
        assert float(med).is_integer()
        pf = PrivateFrame(df, accountant=False, random_state=1, integer_columns=[])
        med = pf.agg(m=("age", "median", (0, 100)), epsilon=1.0)["m"].iloc[0]
        assert not float(med).is_integer()


def test_integer_columns_must_exist() -> None:
    from veil.errors import ConfigError

    with pytest.raises(ConfigError, match="'nope'"):
        PrivateFrame(pd.DataFrame({"a": [1]}), accountant=False, integer_columns=["nope"])


@pytest.mark.parametrize("keys", [["--keys", "zone=1,2"], ["--delta", "1e-3"]])
def test_released_keys_do_not_reveal_a_missing_value(tmp_path: Path, capsys, keys) -> None:
    """The key column of the release was written with the column's inferred type: int64 when
    every zone is whole, float64 once one person's zone is missing -- a Parquet output's schema
    (int64 vs double) told the neighbours apart with certainty, public keys or not."""
    base = pd.DataFrame({"pid": range(80), "zone": [1, 2] * 40})
    d, d2 = tmp_path / "d.csv", tmp_path / "d2.csv"
    base.to_csv(d, index=False)
    d2.write_text(d.read_text() + "999,\n")
    released = []
    for path in (d, d2):
        out = tmp_path / f"{path.stem}.parquet"
        rc = main(
            ["query", str(path), "SELECT zone, COUNT(*) AS n FROM data GROUP BY zone",
             "--epsilon", "5", "--privacy-unit", "pid", "--seed", "1", "--out", str(out), *keys]
        )  # fmt: skip
        assert rc == 0
        released.append(pd.read_parquet(out)["zone"])
    assert released[0].dtype == released[1].dtype
    assert released[0].tolist() == released[1].tolist() == ["1", "2"]


def test_frame_default_is_continuous_whatever_the_dtype() -> None:
    # no declaration: the dtype (int64, bool, Int64) is not consulted -- continuous releases
    ints = np.random.default_rng(3).integers(20, 60, 81)
    for col in (ints, ints > 40, pd.array(ints, dtype="Int64")):
        pf = PrivateFrame(pd.DataFrame({"age": col}), accountant=False, random_state=2)
        meds = [pf.agg(m=("age", "median", (0, 100)), epsilon=1.0)["m"].iloc[0] for _ in range(20)]
        assert not any(float(m).is_integer() for m in meds)
    with pytest.raises(ConfigError, match="'age'"):  # a bare string is one column, not letters
        PrivateFrame(pd.DataFrame({"a": [1]}), accountant=False, integer_columns="age")
