"""One infinite cell does not change every other record's output (neighbouring inputs).

A relative noise scale took the std of a column holding inf (NaN: every value blanked), and a
mean split took its mean (inf: everyone else '< inf'; inf and -inf: '< nan').
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.deid.operators import OperatorContext, get_operator

BASE = [31.0, 45.0, 52.0, 38.0, 61.0, 27.0, 49.0, 55.0]


@pytest.mark.parametrize("extra", [[np.inf], [-np.inf], [np.inf, -np.inf]])
@pytest.mark.parametrize("split", ["mean", "median"])
def test_split_of_the_others_does_not_change(extra: list[float], split: str) -> None:
    op = get_operator("generalize", {"split": split})
    d0 = op.apply(pd.DataFrame({"x": BASE}), "x", OperatorContext())["x"].tolist()
    t0 = op.stats()["threshold"]
    d1 = op.apply(pd.DataFrame({"x": BASE + extra}), "x", OperatorContext())["x"].tolist()
    assert op.stats()["threshold"] == t0  # the threshold of the finite values
    assert d1[: len(BASE)] == d0
    assert all(
        lab == (f">= {t0:g}" if v > 0 else f"< {t0:g}") for v, lab in zip(extra, d1[len(BASE) :])
    )


@pytest.mark.parametrize("extra", [[np.inf], [np.inf, -np.inf]])
def test_relative_noise_of_the_others_is_not_blanked(extra: list[float]) -> None:
    op = get_operator("noise", {"scale": 0.1, "relative": True})
    out = op.apply(pd.DataFrame({"x": BASE + extra}), "x", OperatorContext())["x"]
    got = out.to_numpy(dtype=float)
    assert np.isfinite(got[: len(BASE)]).all()
    assert op.stats()["absolute_scale"] == pytest.approx(0.1 * np.std(BASE))
    assert np.isinf(got[len(BASE) :]).all()
