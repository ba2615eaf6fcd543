"""Released Arrow dictionary columns drop the entries no released record holds.

``pd.ArrowDtype(pa.dictionary(...))`` keeps its whole dictionary when rows are taken, as a
Categorical keeps its categories, and Parquet writes it as the column's dictionary: a record
removed by a ``suppress`` condition left its diagnosis in the written file.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from veil.deid import apply
from veil.io import write


@pytest.mark.parametrize("ordered", [False, True])
def test_suppressed_value_not_in_the_written_dictionary(tmp_path: Path, ordered: bool) -> None:
    values = ["flu", "flu", "hiv", "cold", None, "cold"]
    arr = pa.array(values).dictionary_encode()
    if ordered:
        arr = pa.DictionaryArray.from_arrays(arr.indices, arr.dictionary, ordered=True)
    df = pd.DataFrame({"dx": pd.arrays.ArrowExtensionArray(arr), "age": [30, 30, 99, 40, 30, 40]})
    policy = {"columns": {"dx": "sensitive", "age": "quasi"}, "suppress": ["age > 90"]}
    release, _ = apply(df, policy)
    assert release["dx"].tolist() == ["flu", "flu", "cold", pd.NA, "cold"]
    assert release["dx"].dtype.pyarrow_dtype.ordered is ordered
    write(release, tmp_path / "r.parquet")
    column = pq.read_table(tmp_path / "r.parquet").column("dx")
    assert "hiv" not in column.combine_chunks().dictionary.to_pylist()
    assert b"hiv" not in (tmp_path / "r.parquet").read_bytes()
    assert column.to_pylist() == ["flu", "flu", "cold", None, "cold"]


def test_untouched_dictionary_is_kept_as_it_is() -> None:
    arr = pa.array(["a", "b", "a"]).dictionary_encode()
    df = pd.DataFrame({"c": pd.arrays.ArrowExtensionArray(arr), "q": [1, 2, 3]})
    release, _ = apply(df, {"columns": {"c": "sensitive", "q": "quasi"}})
    assert release["c"].tolist() == ["a", "b", "a"]
    whole = release["c"].array.__arrow_array__().combine_chunks()
    assert whole.dictionary.to_pylist() == ["a", "b"]
