"""Time-budgeted heuristic: large lattices, deadlines, validity of the result."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.anonymity import AnonymizationConfig, Hierarchy, anonymize
from veil.errors import ConfigError


def _wide(n=400, q=22, seed=0):
    rng = np.random.default_rng(seed)
    data, qi = {}, {}
    for j in range(q):
        vals = [f"v{i}" for i in range(4)]
        data[f"c{j}"] = rng.choice(vals, n)
        qi[f"c{j}"] = Hierarchy.from_mapping({v: [f"g{int(v[1:]) // 2}", "*"] for v in vals})
    data["y"] = rng.normal(size=n)
    return pd.DataFrame(data), qi


def test_huge_lattice_optimal_refuses_heuristic_works():
    df, qi = _wide()
    with pytest.raises(ConfigError, match="too many for the optimal search"):
        anonymize(df, AnonymizationConfig(qi, k=3))
    cfg = AnonymizationConfig(
        qi, k=3, algorithm="heuristic", time_limit=3.0, suppression_limit=0.02
    )
    res = anonymize(df, cfg)
    assert res.optimal is False
    assert res.n_nodes_total == 3**22
    kept = res.data[~res.suppressed]
    assert kept.groupby(list(qi), observed=True).size().min() >= 3
    assert res.suppressed.sum() <= 8
    # better than suppressing every QI: some column keeps detail
    assert sum(res.node.values()) < 2 * 22


def test_heuristic_small_lattice_is_valid_and_deterministic(oracle):
    df, hiers = oracle.random_table(3, n=150)
    qi = {c: Hierarchy.from_mapping(m) for c, m in hiers.items()}
    cfg = AnonymizationConfig(qi, k=4, algorithm="heuristic", time_limit=2.0)
    a, b = anonymize(df, cfg), anonymize(df, cfg)
    assert a.node == b.node
    best = oracle.brute_force(df, hiers, "loss", k=4)
    assert a.objective_value >= best[0] - 1e-12
