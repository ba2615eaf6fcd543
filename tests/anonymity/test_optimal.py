"""The optimal lattice search equals a brute-force scan of the whole lattice."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.anonymity import (
    AnonymizationConfig,
    DistinctLDiversity,
    EntropyLDiversity,
    Hierarchy,
    TCloseness,
    anonymize,
)
from veil.errors import ConfigError, UnsatisfiableError

OBJECTIVES = ["loss", "precision", "entropy", "dm", "dm_star", "aecs"]


def _config(hiers, **kw):
    qi = {c: Hierarchy.from_mapping(m) for c, m in hiers.items()}
    return AnonymizationConfig(qi, **kw)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("limit", [0.0, 0.08])
def test_optimum_equals_brute_force(oracle, seed, limit):
    df, hiers = oracle.random_table(seed, n=90)
    k = 2 + seed % 3
    bests = oracle.brute_force_all(df, hiers, OBJECTIVES, k=k, limit=limit)
    for name in OBJECTIVES:
        best = bests[name]
        res = anonymize(df, _config(hiers, k=k, suppression_limit=limit, objective=name))
        node = tuple(res.node.values())
        assert res.optimal
        assert res.objective_value == pytest.approx(best[0], rel=1e-9, abs=1e-9), name
        assert node == best[2], (name, node, best)


@pytest.mark.parametrize(
    "seed", [0, pytest.param(1, marks=pytest.mark.slow), pytest.param(2, marks=pytest.mark.slow)]
)
def test_optimum_with_l_and_t(oracle, seed):
    df, hiers = oracle.random_table(100 + seed, n=100)
    for limit in (0.0, 0.1):
        best = oracle.brute_force(df, hiers, "loss", k=2, limit=limit, l_div=("s", 2))
        res = anonymize(
            df,
            _config(hiers, k=2, models=[DistinctLDiversity("s", 2)], suppression_limit=limit),
        )
        assert tuple(res.node.values()) == best[2]
        best = oracle.brute_force(df, hiers, "loss", k=1, limit=limit, t_close=("s", 0.3))
        res = anonymize(
            df,
            _config(hiers, k=1, models=[TCloseness("s", 0.3)], suppression_limit=limit),
        )
        assert tuple(res.node.values()) == best[2]


@pytest.mark.parametrize("seed", range(4))
def test_release_satisfies_models(oracle, seed):
    df, hiers = oracle.random_table(200 + seed, n=150)
    df.index = pd.Index(np.random.default_rng(seed).permutation(1000)[:150] * 3)
    cfg = _config(
        hiers,
        k=3,
        models=[DistinctLDiversity("s", 2), EntropyLDiversity("s", 1.5)],
        suppression_limit=0.1,
    )
    res = anonymize(df, cfg)
    out = res.data
    assert out.index.equals(df.index)
    kept = out[~res.suppressed]
    key = kept[list(hiers)].astype(str).apply(lambda r: "|".join(r), axis=1)
    assert key.value_counts().min() >= 3
    assert kept.groupby(key)["s"].nunique().min() >= 2
    ent = kept.groupby(key)["s"].apply(
        lambda s: float(
            -(s.value_counts(normalize=True) * np.log(s.value_counts(normalize=True))).sum()
        )
    )
    assert ent.min() >= np.log(1.5) - 1e-9
    assert res.suppressed.sum() <= int(0.1 * len(df))
    assert (out.loc[res.suppressed, list(hiers)].astype(str) == "*").all().all()
    pd.testing.assert_series_equal(out["x"], df["x"])
    pd.testing.assert_series_equal(out["s"], df["s"])


def test_unsatisfiable_names_the_model(oracle):
    df, hiers = oracle.random_table(7, n=60)
    cfg = _config(hiers, k=2, models=[DistinctLDiversity("s", 9)])
    with pytest.raises(UnsatisfiableError, match="distinct-l-diversity"):
        anonymize(df, cfg)


def test_missing_hierarchy_named(oracle):
    df, hiers = oracle.random_table(8, n=60)
    qi = {c: Hierarchy.from_mapping(m) for c, m in hiers.items()}
    qi["x"] = None
    with pytest.raises(ConfigError, match="'x'"):
        anonymize(df, AnonymizationConfig(qi, k=2))


def test_config_errors(oracle):
    df, hiers = oracle.random_table(9, n=30)
    with pytest.raises(ConfigError, match="both quasi-identifier and sensitive"):
        _config(hiers, k=2, sensitive=["q0"])
    with pytest.raises(ConfigError, match="k must be"):
        _config(hiers, k=0)
    with pytest.raises(ConfigError, match="larger than the table"):
        anonymize(df, _config(hiers, k=31))
    with pytest.raises(ConfigError, match="suppression_limit"):
        _config(hiers, k=2, suppression_limit=1.5)
    with pytest.raises(ConfigError, match="objective"):
        _config(hiers, k=2, objective="utility")


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4, 16))
@pytest.mark.parametrize("limit", [0.0, 0.04, 0.15])
def test_optimum_equals_brute_force_more(oracle, seed, limit):
    test_optimum_equals_brute_force(oracle, seed, limit)
