"""Mondrian's rendered cells, read back from CSV, against the models it enforced.

Rendered cells can coincide with raw values or with each other: a set ``{a,b}`` next to a raw
value ``{a,b}``, an interval ``[30, 40]`` next to a text ``[30, 40]``, a hierarchy label
``Other`` under two parents.  A reader merges the classes printed alike; every merged group must
still satisfy k and distinct l (merging classes that each satisfy them keeps them).  The oracle
is a plain ``groupby`` over the file read back as text; it shares no code with the engine.
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from veil.anonymity import AnonymizationConfig, DistinctLDiversity, anonymize
from veil.schema import Hierarchy


def _groups_as_read(release: pd.DataFrame, qi: list[str], sensitive: str) -> pd.DataFrame:
    buf = io.StringIO()
    release.to_csv(buf, index=False)
    buf.seek(0)
    read = pd.read_csv(buf, dtype=str, keep_default_na=False)
    key = read[qi].agg("\x1f".join, axis=1)
    return read.groupby(key)[sensitive].agg(["size", "nunique"])


def _frame(values: list, n: int = 48, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    q = np.empty(n, dtype=object)
    q[:] = [values[i % len(values)] for i in range(n)]
    return pd.DataFrame(
        {"q": q, "age": rng.integers(25, 45, n), "s": rng.choice(list("xyz"), n)},
        index=[f"r{i % 4}" for i in range(n)],
    )


CASES = {
    "set_lookalike": (["a", "b", "{a,b}", "{a,b,c}", "c"], None),
    "interval_lookalike": (["[30, 40]", "30", "40", "[25, 44]"], None),
    "label_under_two_parents": (
        list("abcd"),
        Hierarchy.from_mapping(
            {
                "a": ["X", "Other", "*"],
                "b": ["X", "Other", "*"],
                "c": ["Other", "Y", "*"],
                "d": ["Z", "Y", "*"],
            }
        ),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("mode", ["strict", "relaxed"])
@pytest.mark.parametrize("k", [2, 4])
def test_mondrian_groups_as_read_meet_k_and_l(case, mode, k):
    values, hier = CASES[case]
    df = _frame(values)
    cfg = AnonymizationConfig(
        {"q": hier, "age": None},
        k=k,
        models=[DistinctLDiversity("s", 2)],
        algorithm="mondrian",
        options={"mode": mode},
    )
    res = anonymize(df, cfg)
    groups = _groups_as_read(res.data, ["q", "age"], "s")
    assert groups["size"].min() >= k
    assert groups["nunique"].min() >= 2
    assert groups.shape[0] <= int(np.max(res.partitions)) + 1  # merged, never split
    pd.testing.assert_series_equal(res.data["s"], df["s"])
