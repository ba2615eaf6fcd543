"""Equal date/time cells that Veil groups as one value are written with one text.

``check`` / ``anonymize`` group the cells of an ``object`` column with
:func:`~veil.schema._hierarchy.factorize_typed`: equal cells of one kind are one value.  Equal
``numpy.datetime64`` cells of different units (``1980-01-02`` in days, in nanoseconds),
equal time-zone-aware timestamps of different zones (10:00 UTC, 11:00 in Paris) and equal
``numpy.timedelta64`` cells of different units printed differently, so a class checked as
k = 5 read as several smaller groups to anyone grouping the written text.  The oracle groups
the written CSV's texts; it shares no code with the writer.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from veil.anonymity import check
from veil.io import write

D = np.datetime64
TD = np.timedelta64
UTC = pd.Timestamp("1980-01-02 10:00", tz="UTC")

COLUMNS = {
    "datetime64-units": (
        [D("1980-01-02"), D("1980-01-02T00:00:00.000000000"), D("1980-01-02T00:00", "s")]
        + [D("1980-01-02", "D")] * 2
        + [D("1981-05-06T07:08", "m"), D("1981-05-06T07:08:00", "s")] * 2
        + [D("1981-05-06T07:08:00.000", "ms")]
    ),
    "tz-zones": (
        [UTC, UTC.tz_convert("Europe/Paris"), UTC.tz_convert("Asia/Tokyo"), UTC, UTC]
        + [pd.Timestamp("1990-06-01", tz="UTC")] * 5
    ),
    "timedelta64-units": (
        [TD(1, "D"), TD(24, "h"), TD(86400, "s"), TD(1, "D"), TD(1440, "m")]
        + [TD(90, "m"), TD(5400, "s"), TD(90, "m"), TD(90, "m"), TD(5400000, "ms")]
    ),
    "mixed-with-text": (
        [D("1980-01-02"), D("1980-01-02T00:00:00.000000000")] * 2
        + [D("1980-01-02", "D")]
        + ["n/a"] * 5
    ),
}


@pytest.mark.parametrize("name", list(COLUMNS))
def test_equal_time_cells_are_written_with_one_text(tmp_path: Path, name: str) -> None:
    cells = COLUMNS[name]
    df = pd.DataFrame({"x": pd.Series(cells, dtype=object), "y": ["a", "b", "c", "d", "e"] * 2})
    assert check(df, ["x"], k=5).holds  # two values of five records each to the engine
    before = [type(v) for v in df["x"]]
    path = write(df, tmp_path / "rel.csv")
    text = pd.read_csv(path, dtype=str, keep_default_na=False)["x"]
    assert text.groupby(text).size().min() >= 5, text.tolist()
    assert text[:5].nunique() == 1 and text[5:].nunique() == 1
    assert text[0] != text[5]
    assert [type(v) for v in df["x"]] == before  # the caller's frame is not modified


def test_cells_written_alike_already_keep_their_text(tmp_path: Path) -> None:
    cells = [D("1980-01-02")] * 5 + [pd.Timestamp("1990-06-01 12:30")] * 5
    df = pd.DataFrame({"x": pd.Series(cells, dtype=object)})
    path = write(df, tmp_path / "rel.csv")
    text = pd.read_csv(path, dtype=str)["x"]
    assert text.tolist() == ["1980-01-02"] * 5 + ["1990-06-01 12:30:00"] * 5
