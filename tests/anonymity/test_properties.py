"""Property tests (hypothesis): invariants of every release of the lattice search."""

from __future__ import annotations

import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veil.anonymity import AnonymizationConfig, Hierarchy, anonymize
from veil.errors import UnsatisfiableError


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(5, 80),
    k=st.integers(1, 6),
    limit=st.sampled_from([0.0, 0.05, 0.2]),
    algorithm=st.sampled_from(["optimal", "heuristic"]),
    objective=st.sampled_from(["loss", "dm", "entropy", "precision", "aecs", "dm_star"]),
)
def test_release_invariants(oracle, seed, n, k, limit, algorithm, objective):
    df, hiers = oracle.random_table(seed, n=n)
    df.index = pd.Index([f"r{(i * 7919) % 1000}" for i in range(n)])
    before = df.copy(deep=True)
    qi = {c: Hierarchy.from_mapping(m) for c, m in hiers.items()}
    cfg = AnonymizationConfig(
        qi,
        k=min(k, n),
        suppression_limit=limit,
        algorithm=algorithm,
        objective=objective,
        time_limit=5.0,
    )
    try:
        res = anonymize(df, cfg)
    except UnsatisfiableError:
        return
    pd.testing.assert_frame_equal(df, before)  # input untouched
    out = res.data
    assert out.index.equals(df.index)
    assert res.suppressed.sum() <= int(limit * n + 1e-9)
    for c, lv in res.node.items():
        allowed = set(qi[c].labels(lv)) | {"*"}
        assert set(out[c].astype(str)) <= allowed
        kept = ~res.suppressed
        expect = qi[c].generalize(df[c].to_numpy()[kept], lv)
        assert list(out[c].astype(str).to_numpy()[kept]) == list(expect)
    for c in ("s", "x"):
        pd.testing.assert_series_equal(out[c], df[c])
    kept = out[~res.suppressed]
    if len(kept):
        assert kept.groupby(list(hiers), observed=True).size().min() >= min(k, n)
    again = anonymize(df, cfg)
    assert again.node == res.node
    pd.testing.assert_frame_equal(again.data, out)
