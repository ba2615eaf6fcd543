"""Property: what veil.io writes, veil.io reads back unchanged (CSV, TSV, Parquet)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.io import read, write

text = st.text(alphabet="abcXYZ,;\"' é|\t", min_size=1, max_size=10).filter(
    lambda s: s.strip() not in ("", "NA", "?") and s == s.strip()
)


@st.composite
def frames(draw: st.DrawFn) -> pd.DataFrame:
    n = draw(st.integers(1, 20))
    ncol = draw(st.integers(1, 4))
    data = {}
    for j in range(ncol):
        kind = draw(st.sampled_from(["int", "float", "str"]))
        if kind == "int":
            data[f"n{j}"] = draw(st.lists(st.integers(-(10**9), 10**9), min_size=n, max_size=n))
        elif kind == "float":
            finite = st.floats(-1e12, 1e12, allow_nan=False, allow_subnormal=False)
            data[f"f{j}"] = draw(st.lists(st.one_of(st.none(), finite), min_size=n, max_size=n))
        else:
            data[f"s{j}"] = draw(st.lists(text, min_size=n, max_size=n))
    return pd.DataFrame(data)


@settings(max_examples=40, deadline=None)
@given(df=frames(), suffix=st.sampled_from([".csv", ".tsv", ".parquet"]))
def test_write_then_read_is_identity(df: pd.DataFrame, suffix: str) -> None:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / f"t{suffix}"
        write(df, path)
        back = read(path, parse_dates=False)
    assert list(back.columns) == list(df.columns)
    for col in df.columns:
        if col.startswith("f"):
            a = back[col].to_numpy(dtype=float, na_value=np.nan)
            b = df[col].to_numpy(dtype=float, na_value=np.nan)
            np.testing.assert_array_equal(a, b)  # exact: shortest round-trip repr
        else:
            assert back[col].astype(object).tolist() == df[col].astype(object).tolist(), col
