"""k-map and average-risk models inside the lattice search; result summary."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from veil.anonymity import AnonymizationConfig, AverageRisk, Hierarchy, KMap, anonymize
from veil.errors import ConfigError


def _gen(df, qi, node):
    return pd.DataFrame({c: qi[c].generalize(df[c].to_numpy(), lv) for c, lv in node.items()})


def test_kmap_release_matches_population(oracle):
    df, hiers = oracle.random_table(11, n=120)
    qi = {c: Hierarchy.from_mapping(m) for c, m in hiers.items()}
    pop_extra = df.sample(400, replace=True, random_state=1)
    pop = pd.concat([df, pop_extra], ignore_index=True)
    res = anonymize(df, AnonymizationConfig(qi, models=[KMap(6, pop)]))
    g_sample = _gen(df, qi, res.node)
    g_pop = _gen(pop, qi, res.node)
    counts = g_pop.value_counts()
    per_record = g_sample.apply(tuple, axis=1).map(lambda t: counts.get(t, 0))
    assert per_record.min() >= 6
    # optimal: equals the brute force over the whole lattice with the same criterion
    best = None
    import itertools

    for node in itertools.product(*[range(qi[c].height) for c in qi]):
        nd = dict(zip(qi, node))
        gs, gp = _gen(df, qi, nd), _gen(pop, qi, nd)
        cnt = gp.value_counts()
        if gs.apply(tuple, axis=1).map(lambda t, cnt=cnt: cnt.get(t, 0)).min() < 6:
            continue
        v = oracle.objective(df, hiers, node, np.zeros(len(df), bool), None, "loss")
        if (
            best is None
            or v < best[0] - 1e-12
            or (abs(v - best[0]) <= 1e-12 and (sum(node), node) < best[1])
        ):
            best = (v, (sum(node), node))
    assert tuple(res.node.values()) == best[1][1]


def test_average_risk_model(oracle):
    df, hiers = oracle.random_table(12, n=200)
    qi = {c: Hierarchy.from_mapping(m) for c, m in hiers.items()}
    res = anonymize(df, AnonymizationConfig(qi, models=[AverageRisk(0.05)]))
    classes = _gen(df, qi, res.node).drop_duplicates().shape[0]
    assert classes / len(df) <= 0.05
    summary = res.summary()
    json.dumps(summary)  # JSON-able
    assert summary["risk_after"]["prosecutor"]["average"] <= 0.05 + 1e-12
    assert summary["risk_before"]["records"] == len(df)


# ------------------------------------------------------------------ journalist risk and
# population uniqueness reach the result, the policy and the report


def _zayatz(sizes, pi):
    """Plain-Python Zayatz estimate (share of records population-unique)."""
    sizes = [int(s) for s in sizes if s > 0]
    n = sum(sizes)
    f1 = sum(1 for s in sizes if s == 1)
    denom = sum(s * (1 - pi) ** (s - 1) for s in sizes)  # sum_i i f_i (1-pi)^(i-1)
    return 0.0 if f1 == 0 or denom == 0 else f1 * (f1 / denom) / n


def _kmap_case():
    rng = np.random.default_rng(7)
    vals = [f"z{i}" for i in range(12)]
    pop = pd.DataFrame({"zip": rng.choice(vals, 3000), "sex": rng.choice(["F", "M"], 3000)})
    df = pop.sample(150, random_state=3).reset_index(drop=True)
    df["y"] = rng.choice(["a", "b"], len(df))
    qi = {
        "zip": Hierarchy.from_mapping({v: [f"g{int(v[1:]) // 4}", "*"] for v in vals}),
        "sex": Hierarchy.from_mapping({"F": ["*"], "M": ["*"]}),
    }
    return df, pop, qi


def test_kmap_journalist_risk_and_uniqueness_in_result():
    df, pop, qi = _kmap_case()
    res = anonymize(df, AnonymizationConfig(qi, k=3, models=[KMap(20, pop)]))
    for when, node in (("before", {c: 0 for c in qi}), ("after", res.node)):
        r = getattr(res, f"risk_{when}")
        keep = np.ones(len(df), bool) if when == "before" else ~res.suppressed
        gs = _gen(df[keep], qi, node)
        counts = _gen(pop, qi, node).value_counts()
        big_f = gs.apply(tuple, axis=1).map(lambda t, c=counts: c.get(t, 0)).to_numpy()
        assert r["journalist"] is not None, when
        assert r["journalist"]["highest"] == pytest.approx(1 / big_f.min())
        assert r["journalist"]["average"] == pytest.approx(np.mean(1 / big_f))
        # sampling fraction defaults to n / N of the k-map population
        sizes = gs.value_counts().to_numpy()
        assert r["population_uniqueness"] == pytest.approx(_zayatz(sizes, len(df) / len(pop)))
    assert res.risk_after["journalist"]["highest"] <= 1 / 20


def test_sampling_fraction_config():
    df, _, qi = _kmap_case()
    res = anonymize(df, AnonymizationConfig(qi, k=2, sampling_fraction=0.05))
    assert res.risk_after["journalist"] is None  # no population table
    gs = _gen(df[~res.suppressed], qi, res.node)
    assert res.risk_after["population_uniqueness"] == pytest.approx(
        _zayatz(gs.value_counts().to_numpy(), 0.05)
    )
    before = _gen(df, qi, {c: 0 for c in qi}).value_counts().to_numpy()
    assert res.risk_before["population_uniqueness"] == pytest.approx(_zayatz(before, 0.05))
    assert AnonymizationConfig(qi, k=2, sampling_fraction=1).sampling_fraction == 1.0
    for bad in (0, 0.0, -0.1, 1.5, True, "0.1"):
        with pytest.raises(ConfigError, match="sampling_fraction"):
            AnonymizationConfig(qi, k=2, sampling_fraction=bad)
    for alg in ("mondrian", "mdav"):
        num = pd.DataFrame({"a": np.arange(40) % 7, "b": np.arange(40) % 5})
        r = anonymize(
            num, AnonymizationConfig(["a", "b"], k=2, algorithm=alg, sampling_fraction=0.2)
        )
        assert r.risk_before["population_uniqueness"] is not None, alg
        assert r.risk_after["population_uniqueness"] is not None, alg


def test_sampling_fraction_policy_key_reaches_the_report():
    from veil.deid import Policy, apply
    from veil.errors import PolicyError
    from veil.report._anonymity_view import anonymity_view

    df, _, _ = _kmap_case()
    cols = {
        "zip": {
            "role": "quasi",
            "hierarchy": {f"z{i}": [f"g{i // 4}", "*"] for i in range(12)},
        },
        "sex": {"role": "quasi", "hierarchy": {"F": ["*"], "M": ["*"]}},
        "y": {"role": "insensitive"},
    }
    priv = {"k": 2, "algorithm": "optimal", "sampling_fraction": 0.05}
    _, report = apply(df, Policy.from_dict({"version": 1, "columns": cols, "privacy": priv}))
    after = report["anonymity"]["risk_after"]
    assert after["population_uniqueness"] is not None
    view = anonymity_view(report["anonymity"])
    rows = {r["label"]: r for r in view["risk"]}
    assert rows["population uniqueness (estimate)"]["after"] != "n/a"
    for bad in (0, 2):
        with pytest.raises(PolicyError, match="sampling_fraction"):
            Policy.from_dict(
                {"version": 1, "columns": cols, "privacy": {**priv, "sampling_fraction": bad}}
            )
