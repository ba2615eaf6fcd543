"""A long text cell compared with a timestamp is not parsed: the parser's run time grew faster
than the text (20 s for one cell of a million characters), so one person's cell stalled a
query -- a timing channel and a denial of service.  Such text is no timestamp (unknown)."""

from __future__ import annotations

import time

import pandas as pd

from veil.dp import _canon
from veil.dp.sql import evaluate, parse_condition

LONG = "x" * 1_000_000  # about 20 s to refuse as a timestamp; a few ms to skip


def test_long_text_against_a_timestamp_is_unknown_and_fast() -> None:
    ts = pd.Timestamp("2020-01-01")
    df = pd.DataFrame(
        {
            "a": pd.Series([ts, ts, ts], dtype=object),
            "b": pd.Series(["2019-06-01", LONG, "x"], dtype=object),
        }
    )
    start = time.perf_counter()
    kept = evaluate(parse_condition("a > b OR NOT a > b"), df).tolist()
    assert time.perf_counter() - start < 2.0
    assert kept == [True, False, False]  # the long cell reads as the unparsable 'x' does
    assert _canon.compare(_canon.canonical("2020-01-01 " * 20), ">", ts) == (False, False)
