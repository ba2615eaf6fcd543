"""Independent plain-pandas oracle for the anonymity tests (no code shared with the engine)."""

from __future__ import annotations

import itertools
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ADULT_COLS = [
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
    "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week",
    "native-country", "salary",
]  # fmt: skip
ADULT_QI = {
    "age": "age",
    "education": "education",
    "marital-status": "marital",
    "native-country": "country",
    "race": "race",
    "sex": "sex",
    "workclass": "workclass",
    "occupation": "occupation",
}


def read_adult(path: Path) -> pd.DataFrame:
    df = pd.read_csv(path, header=None, names=ADULT_COLS, skipinitialspace=True, na_values="?")
    return df.dropna().reset_index(drop=True)


def random_hierarchy(rng: np.random.Generator, values: list[str], height: int) -> dict:
    """value -> list of higher levels (a random tree of the given height, top '*')."""
    rows = {v: [] for v in values}
    groups = {v: v for v in values}
    for level in range(1, height - 1):
        labels = sorted(set(groups.values()))
        n_parents = max(1, len(labels) // int(rng.integers(2, 4)))
        parent = {lab: f"L{level}_{int(rng.integers(0, n_parents))}" for lab in labels}
        groups = {v: parent[g] for v, g in groups.items()}
        for v in values:
            rows[v].append(groups[v])
    for v in values:
        rows[v].append("*")
    return rows


def random_table(seed: int, n: int = 120, n_qi: int = 3) -> tuple[pd.DataFrame, dict]:
    rng = np.random.default_rng(seed)
    data, hiers = {}, {}
    for j in range(n_qi):
        m = int(rng.integers(2, 7))
        vals = [f"q{j}v{i}" for i in range(m)]
        p = rng.dirichlet(np.ones(m) * 0.7)
        data[f"q{j}"] = rng.choice(vals, size=n, p=p)
        hiers[f"q{j}"] = random_hierarchy(rng, vals, int(rng.integers(2, 5)))
    data["s"] = rng.choice(["a", "b", "c", "d"], size=n, p=[0.4, 0.3, 0.2, 0.1])
    data["x"] = rng.normal(size=n)
    return pd.DataFrame(data), hiers


def generalize(series: pd.Series, mapping: dict, level: int) -> pd.Series:
    if level == 0:
        return series.astype(str)
    return series.astype(str).map({v: up[level - 1] for v, up in mapping.items()})


def height(mapping: dict) -> int:
    return len(next(iter(mapping.values()))) + 1


def emd_equal(cls: pd.Series, glob: pd.Series) -> float:
    p = cls.reindex(glob.index, fill_value=0)
    return 0.5 * float(np.abs(p - glob).sum())


def evaluate_node(df, hiers, node, k=1, limit=0.0, l_div=None, t_close=None):
    """(anonymous, suppressed mask, generalized QI frame) with pandas group-bys."""
    qi = list(hiers)
    g = pd.DataFrame({c: generalize(df[c], hiers[c], lv) for c, lv in zip(qi, node)})
    key = g.groupby(qi, sort=False).ngroup()
    size = key.map(key.value_counts())
    bad = size < k
    if l_div is not None:
        col, ell = l_div
        nun = df.groupby(key)[col].nunique()
        bad |= key.map(nun) < ell
    if t_close is not None:
        col, t = t_close
        glob = df[col].value_counts(normalize=True)
        dist = {
            kk: emd_equal(grp.value_counts(normalize=True), glob)
            for kk, grp in df.groupby(key)[col]
        }
        bad |= key.map(dist) > t + 1e-9
    ok = int(bad.sum()) <= math.floor(limit * len(df) + 1e-9)
    return ok, bad.to_numpy(), g, key


def objective(df, hiers, node, suppressed, key, name):
    qi = list(hiers)
    n, q = len(df), len(qi)
    sup = suppressed
    if name in ("loss", "precision", "entropy"):
        total = 0.0
        for c, lv in zip(qi, node):
            mp = hiers[c]
            h = height(mp)
            orig = df[c].astype(str)
            gen = generalize(df[c], mp, lv)
            if name == "loss":
                leaves = (
                    pd.Series([v for v in mp])
                    .map(lambda v, lv=lv, mp=mp: v if lv == 0 else mp[v][lv - 1])
                    .value_counts()
                )
                d = max(len(mp) - 1, 1)
                cell = (gen.map(leaves) - 1) / d
                cell[sup] = 1.0 if len(mp) > 1 else 0.0
            elif name == "precision":
                cell = pd.Series(lv / max(h - 1, 1), index=df.index)
                cell[sup] = 1.0
            else:
                f = orig.map(orig.value_counts())
                big = gen.map(gen.value_counts())
                cell = -np.log2(f / big)
                cell[sup] = -np.log2(f[sup] / n)
            total += float(cell.sum())
        return total if name == "entropy" else total / (n * q)
    kept = key[~sup]
    sizes = kept.value_counts()
    n_sup = int(sup.sum())
    if name == "dm":
        return float((sizes**2).sum()) + n_sup * n
    if name == "dm_star":
        return float((sizes**2).sum()) + n_sup**2
    if name == "aecs":
        return n / max(len(sizes) + (1 if n_sup else 0), 1)
    raise ValueError(name)


def brute_force(df, hiers, name, **model):
    """Best node by exhaustive search (same tie-breaking rule as documented)."""
    return brute_force_all(df, hiers, [name], **model)[name]


def brute_force_all(df, hiers, names, **model):
    """Best node for each objective in ``names``, one exhaustive scan of the lattice."""
    qi = list(hiers)
    best = dict.fromkeys(names)
    for node in itertools.product(*[range(height(hiers[c])) for c in qi]):
        ok, sup, g, key = evaluate_node(df, hiers, node, **model)
        if not ok:
            continue
        for name in names:
            v = objective(df, hiers, node, sup, key, name)
            cand = (v, sum(node), node)
            b = best[name]
            if b is None:
                best[name] = cand
                continue
            tol = 1e-9 * max(1.0, abs(b[0]))
            if v < b[0] - tol or (v <= b[0] + tol and (sum(node), node) < (b[1], b[2])):
                best[name] = cand
    return best


@pytest.fixture(scope="session")
def oracle():
    return sys.modules[__name__]
