"""Roll-ups between lattice nodes equal a direct grouping of the rows, whatever the path."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from veil.anonymity import AnonymizationConfig, Hierarchy
from veil.anonymity._lattice import EncodedTable, factorize_packed
from veil.anonymity._objectives import make_objective
from veil.anonymity._search import LatticeSearch


def _table(seed: int, n: int = 400) -> tuple[pd.DataFrame, AnonymizationConfig, dict]:
    rng = np.random.default_rng(seed)
    data, maps = {}, {}
    for j in range(4):
        m = int(rng.integers(3, 40))
        vals = [f"c{j}v{i}" for i in range(m)]
        data[f"c{j}"] = rng.choice(vals, size=n)
        maps[f"c{j}"] = {v: [f"g{i // 2}", f"h{i // 6}", "*"] for i, v in enumerate(vals)}
    qi = {c: Hierarchy.from_mapping(m) for c, m in maps.items()}
    return pd.DataFrame(data), AnonymizationConfig(qi, k=2), maps


def _direct(df: pd.DataFrame, maps: dict, levels: tuple[int, ...]):
    """Classes of ``levels`` by pandas alone: sizes in order of each class's first row."""
    cols = []
    for (c, m), lv in zip(maps.items(), levels):
        cols.append(df[c] if lv == 0 else df[c].map({v: up[lv - 1] for v, up in m.items()}))
    key = pd.Series(list(zip(*cols)))
    codes, uniq = pd.factorize(key)
    return np.bincount(codes, minlength=len(uniq)), codes


def test_factorize_packed_equals_plain_factorize():
    rng = np.random.default_rng(0)
    for bits in (3, 20, 40, 62):
        uniq = rng.integers(0, 1 << bits, 300, dtype=np.int64)
        keys = uniq[rng.integers(0, 300, 5000)]
        inv, u = factorize_packed(keys)
        codes, ref = pd.factorize(keys)
        assert np.array_equal(inv, codes) and np.array_equal(u, ref)


@pytest.mark.parametrize("seed", range(3))
def test_rollup_chains_equal_direct_grouping(seed):
    df, cfg, maps = _table(seed)
    enc = EncodedTable(df, cfg)
    heights = [int(h) for h in enc.heights]
    nodes = list(itertools.product(*[range(h) for h in heights]))
    rng = np.random.default_rng(seed)
    for i in rng.choice(len(nodes), 25, replace=False):
        node = nodes[int(i)]
        sizes, codes = _direct(df, maps, node)
        t, row_cls = enc.row_classes(node)
        assert np.array_equal(t.sizes, sizes) and np.array_equal(row_cls, codes)
        # through a random chain of intermediate nodes: same classes in the same order
        src = enc.base
        mid = tuple(int(rng.integers(0, lv + 1)) for lv in node)
        for step in (mid, node):
            src, _ = enc.rollup(src, step)
        assert np.array_equal(src.sizes, sizes)
        assert np.array_equal(src.key, t.key)


@pytest.mark.parametrize("seed", range(3))
def test_packed_ancestor_choice_equals_plain(seed):
    df, cfg, _ = _table(seed)
    enc = EncodedTable(df, cfg)
    packed = LatticeSearch(enc, cfg.all_models(), 10, make_objective("loss", enc))
    plain = LatticeSearch(enc, cfg.all_models(), 10, make_objective("loss", enc))
    plain._guard = 0  # the level-by-level comparison
    a, b = packed.optimal(), plain.optimal()
    assert a.node == b.node and a.value == b.value and a.n_checked == b.n_checked
    heights = [int(h) for h in enc.heights]
    for node in itertools.product(*[range(h) for h in heights]):
        ta, tb = packed.table(node), plain.table(node)
        assert np.array_equal(ta.sizes, tb.sizes) and np.array_equal(ta.key, tb.key)
