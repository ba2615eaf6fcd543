"""Operators read one instant as one text, whatever Python type holds it.

``canonical_str`` wrote a ``Timestamp`` at midnight as its date (``1980-01-02``, so that a
date parsed by ``veil.io.read`` and the same text agree) but a ``datetime.datetime`` at
midnight as ``1980-01-02 00:00:00`` and a ``numpy.datetime64`` as
``1980-01-02T00:00:00.000000000``: one date got three pseudonyms (three fakes, three mask
lengths) depending on the library that built the column, and the releases of two such
tables did not join.  Each cell is pseudonymized in a frame of its own, as two files are.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest
from _helpers import ctx

from veil.deid.operators import get_operator
from veil.deid.operators._util import canonical_str

MIDNIGHT = [
    pd.Timestamp("1980-01-02"),
    dt.datetime(1980, 1, 2),
    np.datetime64("1980-01-02"),
    np.datetime64("1980-01-02T00:00:00.000000000"),
    dt.date(1980, 1, 2),
    "1980-01-02",
]
TIMED = [
    pd.Timestamp("1980-01-02 10:30:05.25"),
    dt.datetime(1980, 1, 2, 10, 30, 5, 250000),
    np.datetime64("1980-01-02T10:30:05.250"),
]
UTC = [
    pd.Timestamp("1980-01-02 10:30", tz="UTC"),
    dt.datetime(1980, 1, 2, 10, 30, tzinfo=dt.timezone.utc),
]


def _one(op: str, params: dict, value: object) -> str:
    df = pd.DataFrame({"d": pd.Series([value], dtype=object)})
    return get_operator(op, params).apply(df, "d", ctx())["d"].iloc[0]


@pytest.mark.parametrize("group", [MIDNIGHT, TIMED, UTC], ids=["midnight", "time", "utc"])
@pytest.mark.parametrize(
    ("op", "params"),
    [("pseudonymize", {}), ("mask", {"keep_first": 4}), ("fake", {"kind": "name"})],
)
def test_one_instant_one_output(group: list, op: str, params: dict) -> None:
    outs = {_one(op, params, v) for v in group}
    assert len(outs) == 1, outs


def test_instants_stay_apart() -> None:
    texts = [canonical_str(v) for v in (MIDNIGHT[0], TIMED[0], UTC[0])]
    assert len(set(texts)) == 3
    assert canonical_str(dt.datetime(1980, 1, 2)) == "1980-01-02"
    assert canonical_str(np.datetime64("1980-01-02T10:30")) == canonical_str(
        pd.Timestamp("1980-01-02 10:30")
    )
