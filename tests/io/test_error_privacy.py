"""Date parsing errors count the bad cells instead of quoting them (errors end up in logs)."""

from __future__ import annotations

import pandas as pd
import pytest

from veil.errors import InputError
from veil.io import read
from veil.io._dates import parse_date_column

SENTINEL = "SENTINEL-7731"


def test_value_not_in_the_date_format_is_counted():
    s = pd.Series(["2024-02-01", None, "2024-13-45", SENTINEL, "2024-02-03"])
    with pytest.raises(InputError, match=r"2 value\(s\) not in date format.*first at row 2") as e:
        parse_date_column(s, "%Y-%m-%d", name="d")
    assert SENTINEL not in str(e.value) and "2024-13-45" not in str(e.value)
    assert "\n" not in str(e.value)


def test_column_with_no_date_format_is_not_quoted(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text(f"d,v\n{SENTINEL},1\nalice-secret,2\n")
    with pytest.raises(InputError, match="no single date format") as e:
        read(p, parse_dates=["d"])
    assert SENTINEL not in str(e.value) and "alice-secret" not in str(e.value)


@pytest.mark.parametrize("cells", [[1, SENTINEL, 2.5], [b"x", SENTINEL, {"k": 1}]])
def test_parquet_write_of_mixed_column_names_it_without_the_value(tmp_path, cells):
    pytest.importorskip("pyarrow")
    from veil.io import write

    df = pd.DataFrame({"ok": [1, 2, 3], "mixed": pd.Series(cells, dtype=object)})
    with pytest.raises(InputError, match="cannot write out.parquet as Parquet") as e:
        write(df, tmp_path / "out.parquet")
    assert SENTINEL not in str(e.value) and "\n" not in str(e.value)
    assert not (tmp_path / "out.parquet").exists()
