"""Percentile codes are taken over the finite values: one infinite cell must not switch top or
bottom coding off (code inf) or blank the whole column (code NaN)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.deid.operators import OperatorContext, get_operator


def _run(values: list[float], params: dict) -> tuple[np.ndarray, dict]:
    op = get_operator("top_bottom_code", params)
    out = op.apply(pd.DataFrame({"x": values}), "x", OperatorContext())
    return out["x"].to_numpy(dtype=float), op.stats()


@pytest.mark.parametrize(
    ("extra", "params"),
    [
        ([np.inf], {"top_percentile": 99}),
        ([np.inf, -np.inf], {"top_percentile": 99}),
        ([-np.inf], {"bottom_percentile": 1}),
        ([np.inf, -np.inf], {"top_percentile": 99, "bottom_percentile": 1}),
    ],
)
def test_one_infinite_cell_does_not_switch_coding_off(extra: list[float], params: dict) -> None:
    rng = np.random.default_rng(0)
    base = list(rng.normal(50_000, 10_000, 50))  # the 99th percentile lies next to the max
    y0, st0 = _run(base, params)  # D
    y1, st1 = _run(base + extra, params)  # D': one more record holding an infinite value
    assert not np.isnan(y1).any()
    for code in ("top", "bottom"):
        if st1.get(code) is not None:
            assert np.isfinite(st1[code])
            assert st1[code] == pytest.approx(st0[code], rel=0.05)
    hi = st1.get("top") if st1.get("top") is not None else np.inf
    lo = st1.get("bottom") if st1.get("bottom") is not None else -np.inf
    coded = [c for c in ("top", "bottom") if st1.get(c) is not None]
    assert (y1 <= hi).all() and (y1 >= lo).all()  # no value beyond a code, infinite ones included
    assert coded
