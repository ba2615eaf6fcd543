"""The report of a numeric column holding infinite or extreme values.

More than k infinite values failed the report (``np.histogram_bin_edges``: "autodetected
range of [5.0, inf] is not finite", a cell value in the message), and so did -1e308 .. 1e308
(the width overflows).  Edges are finite, the tails still pooled.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.deid import apply
from veil.report import render_html

K = 5


@pytest.mark.parametrize(
    "extra",
    [[np.inf] * 6, [-np.inf, np.inf] * 6, [1e308, -1e308] * 6, [np.inf] * 60, [np.inf, 1.0]],
    ids=["6-inf", "6-both", "1e308", "60-inf", "1-inf"],
)
def test_report_of_infinite_values(extra: list[float]) -> None:
    x = list(np.arange(100.0)) + extra
    df = pd.DataFrame({"x": x, "q": (["a", "b"] * len(x))[: len(x)]})
    _, rep = apply(df, {"columns": {"x": "sensitive", "q": "quasi"}, "privacy": {"k": K}})
    assert render_html(rep).startswith("<!DOCTYPE html>")
    for side in ("original", "release"):
        d = rep["distributions"]["x"][side]
        assert d["kind"] == "numeric" and np.isfinite(d["edges"]).all()
        assert sum(d["counts"]) + d["missing"] == len(x)  # infinite values counted, not lost
    finite = np.sort([v for v in x if np.isfinite(v)])
    edges = rep["distributions"]["x"]["original"]["edges"]
    assert finite[K] <= edges[0] and edges[-1] <= finite[-1 - K]  # no extreme value shown


@pytest.mark.parametrize("n", [20, 40])
def test_report_of_values_closer_than_twenty_bins_at_their_magnitude(n: int) -> None:
    """Near 1e17 neighbouring floats are 16 apart: 20 distinct values 16 apart span too little
    for 20 distinct equal-width edges, and np.histogram_bin_edges failed the whole run with
    "Too many bins for data range"; the edges that exist are used."""
    x = 1e17 + 16.0 * np.arange(n)
    df = pd.DataFrame({"x": x, "q": (["a", "b"] * n)[:n]})
    _, rep = apply(df, {"columns": {"x": "sensitive", "q": "quasi"}, "privacy": {"k": K}})
    assert render_html(rep).startswith("<!DOCTYPE html>")
    for side in ("original", "release"):
        d = rep["distributions"]["x"][side]
        if d["kind"] == "numeric":
            assert (np.diff(d["edges"]) > 0).all() and sum(d["counts"]) == n
    edges = rep["distributions"]["x"]["original"].get("edges")
    if edges is not None:  # the tails stay pooled: no extreme value shown
        assert x[K] <= edges[0] and edges[-1] <= x[-1 - K]
