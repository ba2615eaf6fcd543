"""The policy bridge: privacy targets of a policy drive the engine."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.anonymity._policy_bridge import enforce
from veil.errors import ConfigError, UnsatisfiableError, VeilError

Policy = pytest.importorskip("veil.deid").Policy


def _data(n: int = 300, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(20, 40, n),
            "sex": rng.choice(["F", "M"], n),
            "dx": rng.choice(["a", "b", "c"], n),
            "note": [f"n{i}" for i in range(n)],
        },
        index=pd.Index([f"id{i}" for i in rng.permutation(n)]),
    )


def _policy(privacy: dict, age_h: bool = True) -> Policy:
    age = {
        str(a): [f"{a // 5 * 5}-{a // 5 * 5 + 4}", f"{a // 10 * 10}s", "*"] for a in range(20, 40)
    }
    cols = {
        "age": {"role": "quasi", **({"hierarchy": age} if age_h else {})},
        "sex": {"role": "quasi", "hierarchy": {"F": ["*"], "M": ["*"]}},
        "dx": {"role": "sensitive"},
        "note": {"role": "insensitive"},
    }
    return Policy.from_dict({"version": 1, "columns": cols, "privacy": privacy})


def test_enforce_meets_targets():
    df = _data()
    pol = _policy(
        {"k": 10, "l": {"column": "dx", "l": 2}, "suppression_limit": 0.05, "algorithm": "optimal"}
    )
    out, info = enforce(df, pol)
    assert info["optimal"] is True and set(info["node"]) == {"age", "sex"}
    assert len(out) == len(df) - info["suppressed"]
    assert out.index.isin(df.index).all()
    g = out.groupby([out["age"].astype(str), out["sex"].astype(str)], observed=True)
    assert g.size().min() >= 10
    assert g["dx"].nunique().min() >= 2
    pd.testing.assert_series_equal(out["note"], df.loc[out.index, "note"])


def test_mask_mode_keeps_rows():
    df = _data(seed=1)
    pol = _policy({"k": 25, "suppression_limit": 0.1, "algorithm": "optimal", "suppressed": "mask"})
    out, info = enforce(df, pol)
    assert len(out) == len(df)
    assert info["suppressed_records"] == "masked"


def test_enforce_errors():
    df = _data()
    with pytest.raises(UnsatisfiableError, match="distinct-l-diversity"):
        enforce(df, _policy({"k": 2, "l": {"column": "dx", "l": 4}, "algorithm": "optimal"}))
    with pytest.raises(ConfigError, match="hierarchy.*'age'"):
        enforce(df, _policy({"k": 2, "algorithm": "optimal"}, age_h=False))
    with pytest.raises(ConfigError, match="larger than the table"):
        enforce(df, _policy({"k": 1000, "algorithm": "optimal"}))
    with pytest.raises(VeilError):
        enforce(df, _policy({"k": 0, "algorithm": "optimal"}))
