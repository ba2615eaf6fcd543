"""Fast paths of check() against plain oracles.

Identity codes of object columns (``_encode._identity_codes``) must be exactly those of hashing
every row's pointer with pandas' hash table (first-appearance order), on the address-table path
and on the verified-hash path (forced by shrinking the table bound), with objects the probe of
the first rows does not see, and with more identities than a byte holds.  The smallest classes
(``_check._k_smallest``) must be those of sorting the classes by (size, first row).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.anonymity import _encode
from veil.anonymity._encode import _PROBE, _identity_codes, _object_pointers, factorize_objects
from veil.anonymity._stats import factorize_int64


def _objects(n_head: int, n_late: int, rows: int, seed: int, compact: bool = False) -> np.ndarray:
    """``rows`` cells: objects of a pool of ``n_head`` drawn in the probe rows, then those and
    ``n_late`` more afterwards.  ``compact``: objects close in memory (CPython's cached one-
    character strings and small integers: static arrays); else strings of mixed lengths (small
    ones from Python's allocator, long ones from malloc: far apart) and ``None`` and ``nan``."""
    rng = np.random.default_rng(seed)
    if compact:
        pool = [chr(i) for i in range(256)] + list(range(-5, 257))
        pool = [pool[(i * 7) % len(pool)] for i in range(n_head + n_late)]  # 7: coprime to 518
    else:
        pool = [
            "v" * (1 + i % 7) + str(i) if i % 5 else "w" * (600 + i) for i in range(n_head + n_late)
        ]
        pool[0] = None
        if len(pool) > 3:
            pool[3] = float("nan")
    objs = np.empty(len(pool), dtype=object)
    objs[:] = pool
    head = rng.integers(0, n_head, min(rows, _PROBE))
    tail = rng.integers(0, n_head + n_late, max(rows - _PROBE, 0))
    return objs[np.concatenate([head, tail])]


def _check(arr: np.ndarray) -> None:
    ptr = _object_pointers(arr)
    want, uniq = factorize_int64(ptr)
    head, probe = factorize_int64(ptr[: min(len(ptr), _PROBE)])
    codes, late = _identity_codes(ptr, probe)
    assert np.array_equal(codes.astype(np.int64), want)  # same codes, same numbering
    n_late = uniq.shape[0] - probe.shape[0]
    if n_late == 0:
        assert late is None
    else:  # a row of each identity the probe missed, in order
        assert np.array_equal(ptr[late], uniq[probe.shape[0] :])
    assert codes.max() < np.iinfo(codes.dtype).max  # never wrapped


CASES = [(5, 0, 30_000), (5, 3, 30_000), (40, 30, 5000), (200, 300, 20_000), (256, 10, 4000)]


@pytest.mark.parametrize("path", ["table", "hashed"])
@pytest.mark.parametrize(("n_head", "n_late", "rows"), CASES)
def test_identity_codes_match_hashing_every_pointer(path, n_head, n_late, rows, monkeypatch):
    if path == "hashed":  # no address table is small enough: a bit window, verified per row
        monkeypatch.setattr(_encode, "_SLOTS_MIN", 0)
        monkeypatch.setattr(_encode, "_SLOTS_MAX", 0)
    for seed in range(3):
        arr = _objects(n_head, n_late, rows, seed, compact=path == "table")
        if path == "table":  # the precondition of the address table
            ptr = _object_pointers(arr)
            assert int(ptr.max()) - int(ptr.min()) < 1 << 18  # so at most 2**15 slots
        _check(arr)
        codes, card = factorize_objects(arr)
        want, uniq = pd.factorize(pd.Series(arr), use_na_sentinel=True)
        want = np.where(want < 0, len(uniq), want)
        assert card == len(set(want.tolist()))
        assert len(set(zip(codes.tolist(), want.tolist()))) == card  # same partition


def test_identity_codes_when_no_multiplier_separates_the_probe(monkeypatch):
    monkeypatch.setattr(_encode, "_SLOTS_MIN", 0)
    monkeypatch.setattr(_encode, "_SLOTS_MAX", 0)
    monkeypatch.setattr(_encode, "_MULTIPLIERS", (2**63,))  # one slot: hash every pointer
    _check(_objects(7, 2, 6000, 0))


def test_identity_codes_of_one_object():
    arr = np.array(["only"], dtype=object)[np.zeros(3000, dtype=np.int64)]
    _check(arr)
    assert factorize_objects(arr)[1] == 1


def test_identity_codes_with_a_pointer_below_the_probe():
    """The lowest address may belong to an object first seen after the probe."""
    late = "z" * 20
    head = ["a" * 30, "b" * 40]
    objs = np.empty(3, dtype=object)
    objs[:] = [*head, late]
    ptr = _object_pointers(objs)
    order = np.argsort(ptr)  # the lowest address last: rows of it only after the probe
    idx = np.concatenate([np.tile(order[1:], _PROBE), np.tile(order, 500)])
    _check(objs[idx])


@pytest.mark.parametrize("one_key", [True, False])
@pytest.mark.parametrize("seed", range(4))
def test_k_smallest_orders_by_size_then_first_row(one_key, seed, monkeypatch):
    """``_check._k_smallest`` (one partition of ``size * n + first``, or the lexsort used past
    2**30 rows) against sorting the (size, first row, class) triples."""
    from veil.anonymity import _check

    if not one_key:
        monkeypatch.setattr(_check, "_KEY_ROWS", 0)
    rng = np.random.default_rng(seed)
    g = int(rng.integers(1, 400))
    sizes = rng.integers(1, 6, g)
    n = int(sizes.sum())
    first = rng.permutation(n)[:g]  # distinct first rows below n
    among = rng.random(g) < 0.4
    for show in sorted({0, 1, 3, 10, g // 2, g, g + 5}):
        want = sorted(range(g), key=lambda c: (sizes[c], first[c]))[:show]
        assert _check._k_smallest(sizes, first, show, n).tolist() == want
        cand = [c for c in sorted(range(g), key=lambda c: (sizes[c], first[c])) if among[c]]
        m = min(show, len(cand))
        got = _check._k_smallest(sizes, first, m, n, among)
        assert got.tolist() == cand[:m]


@pytest.mark.parametrize("seed", range(6))
def test_class_sizes_match_the_full_grouping(seed, monkeypatch):
    """``ClassSizes`` (keys sorted without the rows; first rows of the shown classes found by a
    scan) against ``group_rows``: same sizes in the same class order, same smallest classes and
    first rows, also when the scan gives up and when the show-th size has few classes."""
    from veil.anonymity import _class_sizes
    from veil.anonymity._class_sizes import class_sizes
    from veil.anonymity._encode import group_columns

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 6000))
    skew = rng.random() < 0.5  # rare values: classes of the smallest size are few and late
    df = pd.DataFrame(
        {
            "a": rng.choice(["x", "y", "z", "w"], n, p=[0.7, 0.2, 0.09, 0.01] if skew else None),
            "b": rng.integers(0, 2 + seed * 7, n),
            "c": pd.Categorical(rng.choice(["p", "q", None], n)),
        }
    )
    cols = [df[c] for c in df.columns]
    full = group_columns(cols)
    want_order = sorted(range(full.n_classes), key=lambda c: (full.sizes[c], full.first[c]))
    if seed % 2:
        monkeypatch.setattr(_class_sizes, "_FIRST_STEP", 1)  # many short steps
    cs = class_sizes(cols)
    assert cs.sizes.tolist() == full.sizes.tolist()
    g = cs.grouping()
    assert g.rows.tolist() == full.rows.tolist() and g.starts.tolist() == full.starts.tolist()
    for show in (0, 1, 5, 40, full.n_classes + 3):
        got = cs.smallest(show)
        if got is None:  # gave up past a quarter of the rows: allowed, not for a full table
            assert show > 0 and n > _class_sizes._FIRST_STEP
            continue
        order, first = got
        assert order.tolist() == want_order[:show]
        assert first.tolist() == full.first[order].tolist()
