"""generalize bins: distinct bins get distinct labels, even when their edges agree to the
default 6 significant digits (equal-width bins on [1e6, 1e6 + 1] all printed 1e+06).  The
texts stay rounded to the digits needed (like pandas' precision), so they are not promised to
bracket every value."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from veil.deid.operators import OperatorContext, get_operator

NUM = r"-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"


def test_close_edges_give_distinct_ordered_labels() -> None:
    x = np.linspace(1e6, 1e6 + 1, 40)
    out = get_operator("generalize", {"bins": 4}).apply(
        pd.DataFrame({"x": x}), "x", OperatorContext()
    )
    labels = out["x"].astype(str).tolist()
    assert len(set(labels)) == 4  # one label per bin (each holds 10 values)
    bounds = [
        tuple(map(float, re.fullmatch(rf"\[({NUM}), ({NUM})[)\]]", lab).groups()))  # type: ignore[union-attr]
        for lab in dict.fromkeys(labels)
    ]
    assert all(lo < hi for lo, hi in bounds)  # each bin's text an interval of its own
    assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:]))  # adjacent, in order
    assert bounds[0][0] == x.min() and bounds[-1][1] == x.max()


def test_ordinary_edges_keep_their_short_text() -> None:
    df = pd.DataFrame({"age": [0, 10, 20, 30, 40, 50, 60]})
    out = get_operator("generalize", {"bins": 3}).apply(df, "age", OperatorContext())
    assert sorted(set(out["age"].astype(str))) == ["[0, 20)", "[20, 40)", "[40, 60]"]
