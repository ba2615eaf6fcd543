"""Column encoding and row grouping behind check(), against pandas on every column storage.

The oracle for a column is ``pandas.factorize`` with every missing value as one value; for a
table it is ``DataFrame.groupby(qi, sort=False, dropna=False)``: class sizes, the first row of
each class and the smallest / violating classes ordered by (size, first row).
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from veil.anonymity import _encode, check
from veil.anonymity._encode import encode_column, encode_columns, factorize_objects, group_rows
from veil.anonymity._risk import qi_class_ids as class_ids

pa = pytest.importorskip("pyarrow")


def _same_partition(a, b) -> bool:
    a, b = np.asarray(a).tolist(), np.asarray(b).tolist()
    return len(set(zip(a, b))) == len(set(a)) == len(set(b))


def _typed(v):
    """A cell as (type, value): ``True``, ``1`` and ``1.0`` are equal to Python but are written
    differently, so they are different classes (missing cells stay missing)."""
    return None if pd.isna(v) else (type(v).__name__, v)


def _oracle_codes(values) -> np.ndarray:
    s = pd.Series(values).astype(object)
    if len({type(v) for v in s if not pd.isna(v)}) > 1:
        s = s.map(_typed)
    codes, uniq = pd.factorize(s)
    return np.where(codes < 0, len(uniq), codes)


def _columns(seed: int, n: int) -> dict[str, pd.Series]:
    """One QI-like column per storage, with missing values where the storage allows them."""
    rng = np.random.default_rng(seed)
    words = np.array(["north", "south", "east", "west", "centre"], dtype=object)
    pick = rng.integers(0, 5, n)
    miss = rng.random(n) < 0.1
    text = words[pick].copy()  # the same five objects over and over (like read_csv)
    text[miss & (rng.random(n) < 0.5)] = None
    text[miss & (text != None)] = np.nan  # noqa: E711 - elementwise
    built = np.array([f"w{v}" for v in pick], dtype=object)  # a new object per row
    mixed = np.array(
        [[1, 1.0, "1", None, np.nan, True][v] for v in rng.integers(0, 6, n)], dtype=object
    )
    as_list = [None if m else w for w, m in zip(words[pick], miss)]
    return {
        "object": pd.Series(text),
        "object_built": pd.Series(built),
        "object_mixed": pd.Series(mixed),
        "object_strided": pd.Series(np.repeat(text, 2)[::2]),
        "category": pd.Series(pd.Categorical(as_list, categories=[*words, "unused"])),
        "arrow": pd.Series(as_list, dtype=pd.ArrowDtype(pa.string())),
        "str_pyarrow": pd.Series(as_list, dtype=pd.StringDtype("pyarrow")),
        "str_python": pd.Series(as_list, dtype=pd.StringDtype("python")),
        "int_small": pd.Series(rng.integers(17, 91, n)),
        "int_int8": pd.Series(rng.choice(np.array([-128, 0, 127], dtype=np.int8), n)),
        "int_wide": pd.Series(rng.integers(0, 7, n) * 10**15),
        "uint_huge": pd.Series(np.uint64(2**63) + rng.integers(0, 4, n).astype(np.uint64)),
        "bool": pd.Series(rng.random(n) < 0.3),
        "float_nan": pd.Series(np.where(miss, np.nan, pick * 0.5)),
        "nullable_int": pd.Series(pd.array(np.where(miss, None, pick), dtype="Int64")),
        "datetime": pd.Series(pd.to_datetime(np.where(miss, None, "2020-01-0" + (pick + 1).astype(str)))),
    }  # fmt: skip


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("n", [1, 7, 3000])
def test_encode_column_matches_factorize(seed, n):
    for name, s in _columns(seed, n).items():
        codes, card = encode_column(s)
        assert codes.dtype == np.int64 and codes.shape == (n,), name
        assert codes.min() >= 0 and codes.max() < card, name
        assert _same_partition(codes, _oracle_codes(s)), name


def test_objects_grouped_by_identity_then_value():
    a = np.array(["xy", "z"], dtype=object)[np.zeros(5000, dtype=np.int64)]
    b = np.array(["".join(["x", "y"]) for _ in range(5000)], dtype=object)  # equal, not same
    assert len({id(v) for v in a}) == 1 and len({id(v) for v in b}) > 1000
    mixed = np.concatenate([a, b, np.array([None, np.nan, "y"], dtype=object)])
    codes, card = factorize_objects(mixed)
    assert _same_partition(codes, _oracle_codes(mixed))
    assert card == 3 and codes[0] == codes[-4] and codes[-3] == codes[-2]
    # few distinct objects but several equal strings among them (interned differently)
    c = np.array(["ab", "".join(["a", "b"]), "cd"], dtype=object)[np.arange(6000) % 3]
    assert _same_partition(factorize_objects(c)[0], _oracle_codes(c))


def test_read_csv_columns_are_encoded_by_identity():
    text = "a,b\n" + "\n".join(f"{['u', 'v', 'w'][i % 3]},{i % 5}" for i in range(5000))
    df = pd.read_csv(io.StringIO(text), dtype={"a": object})
    codes, card = encode_column(df["a"])
    assert card == 3 and _same_partition(codes, _oracle_codes(df["a"]))


def _oracle_classes(df: pd.DataFrame, qi: list[str]) -> pd.DataFrame:
    d = df.reset_index(drop=True)
    for c in qi:  # a column of mixed types: one class per type and value (see _typed)
        if d[c].dtype == object and len({type(v) for v in d[c] if not pd.isna(v)}) > 1:
            d[c] = d[c].map(_typed)
    d["_row"] = np.arange(len(d))
    g = d.groupby(qi, sort=False, dropna=False, observed=True)["_row"]
    out = pd.DataFrame({"size": g.size().to_numpy(), "first": g.min().to_numpy()})
    return out.sort_values(["size", "first"], kind="stable").reset_index(drop=True)


def _norm(v):
    return None if v is None or (not isinstance(v, str) and pd.isna(v)) else v


def _rows(df: pd.DataFrame, qi: list[str], first: np.ndarray) -> list[tuple]:
    d = df.reset_index(drop=True)
    return [tuple(_norm(d[c].iloc[i]) for c in qi) for i in first]


def _reindex(df: pd.DataFrame, kind: str, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    if kind == "shuffled":
        return df.set_axis(rng.permutation(len(df)) + 11)
    if kind == "duplicated":
        return df.set_axis(rng.integers(0, 4, len(df)))
    if kind == "string":
        return df.set_axis([f"r{i}" for i in rng.permutation(len(df))])
    return df


QI_SETS = [
    ["object", "int_small"],
    ["category", "bool"],
    ["arrow", "object_mixed"],
    ["str_pyarrow", "str_python", "float_nan"],
    ["object_built", "uint_huge", "datetime"],
    ["object", "category", "arrow", "int_int8", "nullable_int"],
]


@pytest.mark.parametrize("qi", QI_SETS, ids=["+".join(q) for q in QI_SETS])
@pytest.mark.parametrize("kind", ["range", "shuffled", "duplicated", "string"])
def test_check_matches_groupby(qi, kind):
    df = _reindex(pd.DataFrame(_columns(3, 600)), kind, 3)
    oracle = _oracle_classes(df, qi)
    for k, show in [(2, 10), (4, 3), (1, 5), (len(df), 1000)]:
        r = check(df, qi, k=k, show=show)
        assert r.n_classes == len(oracle)
        viol = oracle[oracle["size"] < k]
        assert r.n_violating == len(viol) == r.models[0]["violating_classes"]
        assert r.models[0]["violating_records"] == int(viol["size"].sum())
        assert r.models[0]["achieved"] == oracle["size"].min()
        assert sum(b["records"] for b in r.class_sizes) == len(df)
        want = oracle.head(show)
        assert r.smallest["size"].tolist() == want["size"].tolist()
        got = [tuple(_norm(v) for v in row) for row in r.smallest[qi].itertuples(index=False)]
        assert got == _rows(df, qi, want["first"].to_numpy())
        want = viol.head(show)
        assert r.violating["size"].tolist() == want["size"].tolist()
        got = [tuple(_norm(v) for v in row) for row in r.violating[qi].itertuples(index=False)]
        assert got == _rows(df, qi, want["first"].to_numpy())


THREADED_SETS = [
    ["arrow", "str_pyarrow"],
    ["arrow", "object", "str_pyarrow", "category", "int_small"],
]


@pytest.mark.parametrize("qi", THREADED_SETS, ids=["+".join(q) for q in THREADED_SETS])
def test_check_matches_groupby_with_arrow_columns_on_threads(qi, monkeypatch):
    """Arrow string columns hashed on the thread pool (forced at any size) give the same classes."""
    monkeypatch.setattr(_encode, "_POOL_MIN_ROWS", 1)
    df = _reindex(pd.DataFrame(_columns(5, 800)), "shuffled", 5)
    oracle = _oracle_classes(df, qi)
    for _ in range(3):  # the pool is reused between calls
        r = check(df, qi, k=3, show=20)
        assert r.n_classes == len(oracle)
        assert r.smallest["size"].tolist() == oracle.head(20)["size"].tolist()
        got = [tuple(_norm(v) for v in row) for row in r.smallest[qi].itertuples(index=False)]
        assert got == _rows(df, qi, oracle.head(20)["first"].to_numpy())
    threaded = encode_columns([df[c] for c in qi])
    for c, (codes, card) in zip(qi, threaded):
        assert _same_partition(codes, _oracle_codes(df[c])) and codes.max() < card


def test_class_ids_partition_matches_groupby():
    df = _reindex(pd.DataFrame(_columns(4, 500)), "duplicated", 4)
    qi = ["object", "category", "float_nan"]
    ids, g = class_ids(df, qi)
    want = df.groupby(qi, sort=False, dropna=False, observed=True).ngroup().to_numpy()
    assert g == want.max() + 1 and _same_partition(ids, want)


@pytest.mark.parametrize("n", [1, 2, 5000])
def test_group_rows_with_wide_keys(n):
    """Key spaces past 2**62 (renumbering while combining) and past the row-number bits."""
    rng = np.random.default_rng(n)
    cols = [rng.integers(0, 3, n) * (2**20) for _ in range(5)]  # codes up to 2**21, sparse
    cards = [2**21 + 1] * 5
    want = pd.DataFrame(cols).T.groupby(list(range(5)), sort=False).ngroup().to_numpy()
    grp = group_rows([c.copy() for c in cols], cards)
    ids = grp.ids()
    assert grp.n_classes == want.max() + 1 and _same_partition(ids, want)
    assert grp.sizes.tolist() == np.bincount(ids).tolist()
    firsts = [int(np.flatnonzero(ids == j)[0]) for j in range(grp.n_classes)]
    assert grp.first.tolist() == firsts
    assert np.array_equal(np.sort(grp.rows), np.arange(n))


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64])
def test_group_rows_with_narrow_codes_past_int32(dtype):
    """Narrow code arrays, a key built in int32 then widened past 2**31, inputs left unchanged."""
    rng = np.random.default_rng(np.dtype(dtype).itemsize)
    n = 3000
    cards = [97, 16, 2, 31, 16, 5, 16, 9, 16, 3]  # 38 bits in all
    cols = [rng.integers(0, min(card, 3), n).astype(dtype) for card in cards]
    before = [c.copy() for c in cols]
    want = pd.DataFrame(cols).T.groupby(list(range(len(cols))), sort=False).ngroup().to_numpy()
    grp = group_rows(cols, cards)
    ids = grp.ids()
    assert grp.n_classes == want.max() + 1 and _same_partition(ids, want)
    assert grp.sizes.tolist() == np.bincount(ids).tolist()
    assert all(np.array_equal(a, b) and a.dtype == b.dtype for a, b in zip(cols, before))


def test_result_does_not_follow_later_edits_of_the_input():
    df = pd.DataFrame({"z": ["a", "a", "b", "c"], "y": [1, 1, 2, 3]})
    df["c"] = df["z"].astype("category")  # decoded on first access: must not follow edits either
    r = check(df, ["z", "y", "c"], k=2)
    df.loc[2, "z"] = "edited"
    df.loc[0, "y"] = 99
    df["c"] = df["c"].cat.rename_categories({"b": "B"})
    df.loc[3, "c"] = "a"
    assert sorted(r.smallest["z"].tolist()) == ["a", "b", "c"]
    assert r.violating["z"].tolist() == ["b", "c"] and r.violating["y"].tolist() == [2, 3]
    assert r.violating["c"].tolist() == ["b", "c"]
    assert r.to_dict()["smallest"][0] == {"z": "b", "y": 2, "c": "b", "size": 1}


def test_report_values_do_not_follow_later_assignments_to_the_table():
    """The report's class values are read lazily but from the data as it was at check time."""
    for dtype in ("str", "string[pyarrow]", "category", object):
        df = pd.DataFrame({"a": pd.Series(["x", "y", "y", "z"], dtype=dtype), "b": [1, 2, 2, 3]})
        r = check(df, ["a", "b"], k=2, show=3)
        if dtype == "category":
            df["a"] = df["a"].cat.rename_categories(["p", "q", "r"])
        else:
            df.loc[0, "a"] = "changed"
            df.loc[3, "a"] = "changed"
        assert sorted(r.smallest["a"].tolist()) == ["x", "y", "z"], dtype
        assert sorted(r.violating["a"].tolist()) == ["x", "z"], dtype
