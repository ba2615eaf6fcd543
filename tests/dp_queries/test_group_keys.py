"""Group codes and key tables of multi-column GROUP BYs with many distinct values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.dp.frame import PrivateFrame
from veil.dp.frame._partition import encode_groups

pytestmark = pytest.mark.filterwarnings("ignore::veil.errors.InsecureRandomWarning")


def _wide(n: int = 60_000) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({c: rng.permutation(n) for c in "abcd"})


def test_key_table_matches_the_rows_beyond_int64_combinations() -> None:
    """Four columns of 60,000 values: the mixed-radix code (product 1.3e19) overflowed int64,
    and decoding it labelled 17,299 of 60,000 groups with keys no row has -- under private
    selection such a label can carry another person's rare value, outside the selection."""
    df = _wide()
    codes, keys = encode_groups(df, list("abcd"))
    assert len(keys) == len(df)
    expected = df.iloc[np.unique(codes, return_index=True)[1]].reset_index(drop=True)
    pd.testing.assert_frame_equal(keys, expected, check_dtype=False)
    assert (keys.to_numpy()[codes] == df.to_numpy()).all()  # every row under its own key


def test_private_selection_releases_the_groups_own_keys() -> None:
    """Before the fix the 300-person group was released as (40280, 22876, 11182, 35479): four
    values each held by ONE other person, whose own one-person groups selection withholds --
    a release that is impossible without those persons (unbounded privacy loss)."""
    df = _wide(60_000).assign(pid=np.arange(60_000))
    big = pd.DataFrame({"a": -1, "b": -2, "c": -3, "d": -4, "pid": np.arange(100, 400) + 10**6})
    pf = PrivateFrame(pd.concat([df, big], ignore_index=True), "pid", accountant=False,
                      random_state=4)  # fmt: skip
    out = pf.groupby(list("abcd")).agg(n="count", epsilon=2.0, delta=1e-6)
    assert out[list("abcd")].to_numpy().tolist() == [[-1, -2, -3, -4]]
