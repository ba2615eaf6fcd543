"""check()'s equivalence classes against a plain pandas groupby oracle over typed values.

The encoders group object columns by object identity first (``_encode._identity_codes``: an
address table, or a verified hash when the objects lie far apart), text and categorical
columns by their codes, and check() reads class sizes without the rows when no model reads a
sensitive column (``_class_sizes``).  None of this may merge two values or split one.  The
oracle writes each cell as its typed value (``True``, ``1``, ``1.0`` and ``"1"`` are four
values; every missing marker one; ``0.0`` and ``-0.0`` one, as
:func:`~veil.schema._hierarchy.factorize_typed` documents) and groups those texts with
``DataFrame.groupby(dropna=False)``.  Tables are drawn at random over the layouts that pick
the encoders' paths: few objects, strings built one by one, objects first seen after the
probe of the first rows (also the lowest address), more identities than a byte holds, small
and very long strings (far apart in memory), columns long enough for the address table, and
DataFrame views (strided, reversed, filtered) with a non-default index.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.anonymity import check
from veil.anonymity._encode import _PROBE, _TABLE_MIN_ROWS, _object_pointers, group_columns


def _typed(v: object) -> str:
    """The oracle's text of one cell: kind and value, missing markers all alike."""
    if v is None or v is pd.NA or v is pd.NaT or (isinstance(v, float) and v != v):
        return "missing"
    if isinstance(v, (bool, np.bool_)):
        return f"bool:{bool(v)}"
    if isinstance(v, (int, np.integer)):
        return f"int:{int(v)}"
    if isinstance(v, (float, np.floating)):
        return f"float:{float(v) + 0.0!r}"  # -0.0 and 0.0: one value
    assert isinstance(v, str), type(v)
    return f"str:{v!r}"


def _oracle(df: pd.DataFrame, qi: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(class id of each row, sizes, first row) by ``groupby(dropna=False)`` of typed texts."""
    keys = pd.DataFrame({c: [_typed(v) for v in df[c].tolist()] for c in qi})
    gb = keys.groupby(qi, dropna=False, sort=False)
    ids = gb.ngroup().to_numpy()
    sizes = np.bincount(ids)
    first = np.full(sizes.shape[0], len(df), dtype=np.int64)
    np.minimum.at(first, ids, np.arange(len(df)))
    return ids, sizes, first


def _fresh_nan() -> float:
    return float("nan") * 1.0  # a new float object each call


def _built(i: int) -> str:
    return "".join(["s", str(i)])  # a new str object each call


def _mixed_pool() -> list[object]:
    return [True, False, 1, 0, 1.0, 0.0, -0.0, np.int64(1), np.float64(1.0), "1", "True"]


def _column(kind: str, n: int, rng: np.random.Generator) -> pd.Series | np.ndarray:
    """One QI column of the layout ``kind`` (values, not yet placed in a frame)."""
    head = min(n, _PROBE)
    if kind == "mixed":  # True / 1 / 1.0 / "1" / missing markers, nan objects many
        pool = [*_mixed_pool(), None, np.nan, pd.NA, "a", "b"]
        out = np.empty(n, dtype=object)
        idx = rng.integers(0, len(pool) + 1, n)
        out[:] = [_fresh_nan() if j == len(pool) else pool[j] for j in idx.tolist()]
        return out
    if kind == "built":  # strings built one by one: one object per row, few values
        return np.array([_built(j) for j in rng.integers(0, 6, n).tolist()], dtype=object)
    if kind == "late":  # a few objects in the probe, then many more (built: many identities)
        out = np.empty(n, dtype=object)
        out[:head] = [["p", "q", "r"][j] for j in rng.integers(0, 3, head).tolist()]
        out[head:] = [
            _built(j) if j % 3 else ["p", "q", "r"][j % 3]
            for j in rng.integers(0, 40, n - head).tolist()
        ]
        return out
    if kind == "low_late":  # the lowest address is first seen after the probe
        objs = [_built(j) for j in range(40)] + ["w" * (700 + j) for j in range(4)]
        arr = np.empty(len(objs), dtype=object)
        arr[:] = objs
        order = np.argsort(_object_pointers(arr))
        low, rest = order[0], order[1:]
        idx = np.concatenate([rng.choice(rest, head), rng.choice(order, n - head)])
        if n > head:
            idx[head + int(rng.integers(0, n - head))] = low
        return arr[idx]
    if kind == "wide":  # 256 identities in the probe (the most it allows), then 300 more
        objs = np.empty(556, dtype=object)
        objs[:] = [_built(j) for j in range(556)]
        idx = np.concatenate([np.arange(head) % 256, rng.integers(0, 556, n - head)])
        return objs[idx]
    if kind == "far":  # small strings and long ones (malloc'd apart), None and nan objects
        pool = ["x", "y", "w" * 5000, "v" * 9000, None, np.nan, "z" * 3]
        out = np.empty(n, dtype=object)
        out[:] = [pool[j] for j in rng.integers(0, len(pool), n).tolist()]
        return out
    if kind == "compact":  # CPython's static objects (near each other): the address table
        pool = [chr(j) for j in range(97, 110)] + [*range(-5, 8), True, False, None]
        out = np.empty(n, dtype=object)
        out[:] = [pool[j] for j in rng.integers(0, len(pool) - 6, n).tolist()]
        if n > head:  # and some objects only after the probe (one of them the lowest or not)
            tail = rng.integers(head, n, 20)
            out[tail] = [pool[j] for j in rng.integers(0, len(pool), 20).tolist()]
        return out
    if kind == "pool":  # a few strings made one after the other (one allocator pool), reused
        objs = np.empty(24, dtype=object)
        objs[:] = [_built(j % 20) for j in range(24)]  # four values held by two objects each
        idx = np.concatenate([rng.integers(0, 12, head), rng.integers(0, 24, n - head)])
        return objs[idx]
    if kind == "category":
        return pd.Categorical(rng.choice(["a", "b", None], n))
    if kind == "str":  # pandas' str dtype (pyarrow-backed in pandas 3)
        return pd.array(rng.choice(["a", "b", "c"], n).astype(object), dtype="str")
    assert kind == "int"
    return rng.integers(0, 4, n)


KINDS = [
    "mixed",
    "compact",
    "pool",
    "built",
    "late",
    "low_late",
    "wide",
    "far",
    "category",
    "str",
    "int",
]
SIZES = [7, _PROBE, _PROBE + 1, _TABLE_MIN_ROWS - 1, _TABLE_MIN_ROWS, 9000, 40_000]


def _table(seed: int) -> tuple[pd.DataFrame, list[str]]:
    rng = np.random.default_rng(seed)
    n = SIZES[seed % len(SIZES)]
    n_qi = int(rng.integers(1, 4))
    kinds = [KINDS[seed % len(KINDS)], *rng.choice(KINDS, n_qi - 1).tolist()]
    cols = {f"q{i}": _column(kind, n, rng) for i, kind in enumerate(kinds)}
    cols["s"] = rng.choice(["u", "v", "w"], n)
    index = rng.permutation(n) + 10_000  # a non-default index
    df = pd.DataFrame(cols, index=index)
    view = seed % 4
    if view == 1:
        df = df.iloc[::2]  # strided view of the blocks
    elif view == 2:
        df = df.iloc[::-1]
    elif view == 3:
        df = df[rng.random(n) < 0.7]
    return df, list(cols)[:-1]


@pytest.mark.parametrize("seed", range(44))
def test_classes_match_a_groupby_of_typed_values(seed):
    df, qi = _table(seed)
    ids, sizes, first = _oracle(df, qi)
    want = sorted(range(sizes.shape[0]), key=lambda c: (sizes[c], first[c]))
    n = len(df)

    # the grouping itself: the same partition of the rows
    got_ids = group_columns([df[c] for c in qi]).ids()
    assert len(set(zip(got_ids.tolist(), ids.tolist()))) == sizes.shape[0]
    assert len(set(got_ids.tolist())) == sizes.shape[0]

    k = int(np.partition(sizes, min(2, sizes.shape[0] - 1))[min(2, sizes.shape[0] - 1)])
    k = min(max(k, 2), n)
    for light in (True, False):  # class sizes only (k), or the rows of each class (l reads s)
        for show in (3, sizes.shape[0]):
            r = check(df, qi, k=k, l=None if light else {"s": 1}, suppression_limit=1.0, show=show)
            assert r.n_classes == sizes.shape[0]
            assert r.n_suppressed == int(sizes[sizes < k].sum())
            sm = r.smallest
            assert sm["size"].tolist() == [int(sizes[c]) for c in want[:show]]
            for col in qi:  # the values shown are those of each class's first row
                shown = [_typed(v) for v in sm[col].tolist()]
                assert shown == [_typed(df[col].iloc[first[c]]) for c in want[:show]]
