"""One value identity everywhere classes are formed: ``True``, ``1`` and ``1.0`` are three values.

Python's ``True == 1 == 1.0`` merged them in the lattice search's hierarchy encoding and in the
sensitive-column encoding of l-diversity / t-closeness, while :func:`check` tells them apart
(they are written ``True``, ``1`` and ``1.0``).  The oracle here is the text a reader of the
release sees: a record is never written with a value it did not hold, and a sensitive value is
the text it is written as.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.anonymity import AnonymizationConfig, anonymize, check, encode_sensitive, risk
from veil.schema import Hierarchy
from veil.schema._hierarchy import as_str_values, factorize_typed


def _mixed(n_true: int, n_one: int) -> pd.Series:
    return pd.Series([True] * n_true + [1] * n_one, dtype=object)


def _kind(v) -> str:
    """Booleans, integers, floats and texts of Python and numpy: four kinds (oracle)."""
    for kind, base in (("bool", (bool, np.bool_)), ("int", (int, np.integer))):
        if isinstance(v, base):
            return kind
    return "float" if isinstance(v, (float, np.floating)) else type(v).__name__


def _text_classes(values) -> list[int]:
    """Sizes of the groups of ``values`` by (kind, value), the oracle of check's classes."""
    groups: dict[tuple[str, object], int] = {}
    for v in values:
        key = (_kind(v), v)
        groups[key] = groups.get(key, 0) + 1
    return sorted(groups.values())


def test_factorize_typed_tells_types_apart_and_keeps_the_cells():
    cells = [True, 1, 1.0, "1", True, None, np.int64(1), 1, np.True_, np.float64(1.0), "a"]
    codes, uniq = factorize_typed(np.array(cells, dtype=object))
    assert codes[5] == -1
    seen = [c for i, c in enumerate(codes.tolist()) if i != 5]
    kept = [v for i, v in enumerate(cells) if i != 5]
    assert sorted(np.bincount(seen).tolist()) == _text_classes(kept)
    assert len(set(seen)) == len(uniq)
    for c, v in zip(seen, kept):  # each code's distinct value is a cell of its kind and value
        assert _kind(uniq[c]) == _kind(v) and uniq[c] == v


@pytest.mark.parametrize(
    "cells",
    [
        ["a", None, "b", float("nan"), "a"],  # text and missing cells
        [None, "a", "b", "a"],  # a text column starting with a missing cell
        ["a", 1, "1", None],  # text first, then other kinds
        [1, np.int64(1), 2, None],  # one kind
    ],
)
def test_factorize_typed_paths_agree_with_the_oracle(cells):
    codes, uniq = factorize_typed(np.array(cells, dtype=object))
    miss = [pd.isna(v) for v in cells]
    assert [c < 0 for c in codes] == miss
    kept = [v for v, m in zip(cells, miss) if not m]
    seen = [c for c, m in zip(codes.tolist(), miss) if not m]
    assert sorted(np.bincount(seen).tolist()) == _text_classes(kept)
    for c, v in zip(seen, kept):
        assert _kind(uniq[c]) == _kind(v) and uniq[c] == v


def test_as_str_values_codes_follow_the_written_text():
    cells = [True, 1, 1.0, "1", "True", np.int64(1), 17.0, "17", None]
    codes, ustr = as_str_values(pd.Series(cells, dtype=object))
    assert len(set(ustr.tolist())) == len(ustr)  # no text twice
    written = ["True", "1", "1", "1", "True", "1", "17", "17", "nan"]
    assert [ustr[c] for c in codes] == written


def test_lattice_never_writes_a_record_with_a_value_it_did_not_hold():
    df = pd.DataFrame({"q": _mixed(6, 4), "s": list("abcdefghij")})
    h = Hierarchy([["True", "*"], ["1", "*"]])
    out = anonymize(df, AnonymizationConfig({"q": h}, k=2)).data
    assert out["q"].astype(str).tolist() == [str(v) for v in df["q"]]
    # k = 5: classes of 6 (True) and 4 (1): the value must be generalized
    out = anonymize(df, AnonymizationConfig({"q": h}, k=5)).data
    assert set(out["q"].astype(str)) == {"*"}


def test_lattice_risk_before_counts_check_classes():
    df = pd.DataFrame({"q": _mixed(3, 2)})
    res = anonymize(df, AnonymizationConfig({"q": Hierarchy([["True", "*"], ["1", "*"]])}, k=2))
    assert res.risk_before["classes"] == check(df, ["q"], k=2).n_classes == 2
    assert res.risk_before["prosecutor"] == risk(df, ["q"])["prosecutor"]


def test_sensitive_values_are_their_written_text():
    cells = [True, 1, "1", 1.0, "True", np.True_, 2]
    s = encode_sensitive(pd.Series(cells, dtype=object), "s")
    assert len(set(s.labels.tolist())) == len(s.labels)
    written = ["True", "1", "1", "1", "True", "True", "2"]
    assert [s.labels[c] for c in s.codes] == written


def test_l_diversity_does_not_count_one_written_value_twice():
    # True and "True" are written alike: the class shows one sensitive value
    df = pd.DataFrame({"q": ["a"] * 4, "s": pd.Series([True, "True", True, "True"], dtype=object)})
    assert not check(df, ["q"], l={"s": 2}).holds
    df["s"] = pd.Series([True, "x", True, "x"], dtype=object)
    assert check(df, ["q"], l={"s": 2}).holds


@pytest.mark.parametrize("l_variant", ["distinct", "entropy"])
def test_l_diversity_counts_values_written_differently(l_variant):
    df = pd.DataFrame({"q": ["a"] * 4, "s": _mixed(2, 2)})  # written True, True, 1, 1
    assert check(df, ["q"], l={"s": 2}, l_variant=l_variant).holds


def test_t_closeness_sees_values_written_differently():
    # class a holds only True, class b only 1: merged, both would match the table (distance 0)
    df = pd.DataFrame({"q": ["a", "a", "b", "b"], "s": _mixed(2, 2)})
    res = check(df, ["q"], t={"s": 0.2})
    assert not res.holds
    same = df.assign(s=pd.Series(["x", "x", "y", "y"], dtype=object))
    assert res.n_violating == check(same, ["q"], t={"s": 0.2}).n_violating == 2


def test_read_as_missing_is_what_csv_readers_take_for_missing():
    """l-diversity merges exactly the texts a default reader (pandas', Veil's) reads as missing:
    a text pandas adds to its defaults and READ_AS_MISSING lacks would count as a value."""
    import io

    from veil.anonymity._stats import READ_AS_MISSING
    from veil.io._read import DEFAULT_MISSING

    texts = sorted(READ_AS_MISSING - {""})
    csv = "s\n" + "".join(f"{t}\n" for t in texts) + '""\n'  # '': an empty quoted cell
    read = pd.read_csv(io.StringIO(csv), dtype=str, na_values=list(DEFAULT_MISSING))["s"]
    assert read.isna().all(), read[read.notna()].tolist()
    assert set(DEFAULT_MISSING) <= READ_AS_MISSING
    parsers = pytest.importorskip("pandas._libs.parsers")
    na_values = getattr(parsers, "STR_NA_VALUES", None)
    if na_values is not None:  # pandas' own list (a private name): nothing of it left out
        assert set(na_values) | {"?"} <= READ_AS_MISSING


@pytest.mark.parametrize("algorithm", ["optimal", "mondrian"])
def test_booleans_written_two_ways_are_one_sensitive_value(algorithm):
    """pandas' default reader reads a column of 'True' / 'true' / 'FALSE' ... as booleans: a
    class holding 'True' and 'true' shows one value (it was counted 2-diverse)."""
    import io

    from veil.anonymity import DistinctLDiversity

    s = ["True", "true"] * 2 + ["False", "FALSE"] * 2 + ["True", "False"] * 2
    df = pd.DataFrame({"g": ["x"] * 4 + ["y"] * 4 + ["z"] * 4, "s": s})

    def read_l(release: pd.DataFrame) -> int:
        read = pd.read_csv(io.StringIO(release.to_csv(index=False)))
        return int(read.groupby(read["g"].astype(str))["s"].nunique().min())

    assert read_l(df) == 1  # the oracle: x shows only True, y only False
    assert not check(df, "g", l={"s": 2}).holds
    assert check(df, "g", l={"s": 2}).models[0]["achieved"] == read_l(df)
    assert check(df.assign(s=df["s"] + "!"), "g", l={"s": 2}).holds  # texts: kept apart
    qi = {"g": Hierarchy.flat(["x", "y", "z"])} if algorithm == "optimal" else ["g"]
    cfg = AnonymizationConfig(qi, k=2, models=[DistinctLDiversity("s", 2)], algorithm=algorithm)
    assert read_l(anonymize(df, cfg).data) >= 2  # the top node ('*': True, False)
