"""The release's target re-check decides entropy and recursive l-diversity exactly, as the
engine does since 6f3ecf2 / 8479e71: a margin of 1e-9 accepted a class of
25,001 and 25,000 records at l = 2 (exp(H) = 2 (1 - 2e-10)), and 1.1 * 50 rounding up to
55.00000000000001 accepted r1 = 55 at c = 1.1."""

from __future__ import annotations

from types import SimpleNamespace as NS

import pandas as pd

from veil.deid._targets import verify_targets


def _table(counts: list[int]) -> pd.DataFrame:
    ill = [v for i, c in enumerate(counts) for v in [f"v{i}"] * c]
    return pd.DataFrame({"age": ["<30"] * len(ill), "ill": ill})


def test_entropy_just_below_l_is_unmet() -> None:
    t = NS(
        k=None, l={"column": "ill", "l": 2, "variant": "entropy"}, t=None, suppression_limit=None
    )
    assert not verify_targets(_table([25001, 25000]), ["age"], t)["l"]["met"]
    assert verify_targets(_table([3, 3]), ["age"], t)["l"]["met"]  # exactly 2: met


def test_recursive_c_l_is_compared_exactly() -> None:
    spec = {"column": "ill", "l": 2, "variant": "recursive", "c": 1.1}
    t = NS(k=None, l=spec, t=None, suppression_limit=None)
    assert not verify_targets(_table([55, 25, 25]), ["age"], t)["l"]["met"]  # 55 < 55 is false
    assert verify_targets(_table([54, 25, 25]), ["age"], t)["l"]["met"]
