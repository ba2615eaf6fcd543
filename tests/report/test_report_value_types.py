"""The report's equivalence classes are check()'s: ``True``, ``1`` and ``1.0`` are three values.

Python's ``True == 1 == 1.0`` merged them in the report's factorization: a class written as
``True`` x3 and ``1`` x2 was reported as one class of 5.  The oracle groups cells by
``(type, value)``, the classes :func:`veil.anonymity.check` forms.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd

from veil.anonymity import check
from veil.deid._targets import verify_targets
from veil.report import class_codes, risk_indicators
from veil.report._factors import factorize


def _same_partition(a, b) -> bool:
    a, b = np.asarray(a).tolist(), np.asarray(b).tolist()
    return len(set(zip(a, b))) == len(set(a)) == len(set(b))


def _kind(v) -> str:
    """Booleans, integers, floats and texts of Python and numpy: four kinds (oracle)."""
    for kind, base in (("bool", (bool, np.bool_)), ("int", (int, np.integer))):
        if isinstance(v, base):
            return kind
    return "float" if isinstance(v, (float, np.floating)) else type(v).__name__


def _oracle(df: pd.DataFrame, qi: list[str]) -> list[tuple]:
    return [
        tuple(None if pd.isna(v) else (_kind(v), v) for v in row)
        for row in df[qi].itertuples(index=False)
    ]


def test_true_and_one_are_not_one_class_of_five():
    df = pd.DataFrame({"q": pd.Series([True, True, True, 1, 1], dtype=object)})
    r = risk_indicators(df, ["q"], k=5)
    assert r["classes"] == 2 and r["smallest_class"] == 2 and r["records_below_k"] == 5
    assert not check(df, ["q"], k=5).holds


def test_report_classes_equal_check_classes_on_mixed_cells():
    rng = np.random.default_rng(3)
    pool = [True, False, 1, 0, 1.0, 0.0, "1", np.int64(1), np.True_, None, float("nan"), "a"]
    df = pd.DataFrame(
        {
            "a": pd.Series([pool[i] for i in rng.integers(0, len(pool), 300)], dtype=object),
            "b": rng.integers(0, 3, 300),
        }
    )
    codes, sizes = class_codes(df, ["a", "b"])
    assert _same_partition(codes, pd.factorize(pd.Series(_oracle(df, ["a", "b"])))[0])
    res = check(df, ["a", "b"], k=2)
    assert len(sizes) == res.n_classes
    r = risk_indicators(df, ["a", "b"], k=2)
    assert r["smallest_class"] == int(res.smallest["size"].min())


def test_factorize_keeps_one_cell_per_code():
    cells = [True, 1, 1.0, None, True, {"x": 1}]  # a dict: grouped by its text
    codes, uniq = factorize(pd.Series(cells, dtype=object))
    assert codes.tolist() == [0, 1, 2, -1, 0, 3]
    assert [type(u) for u in uniq[:3]] == [bool, int, float]


def _targets(**kw):
    return SimpleNamespace(**{"k": None, "l": None, "t": None, "suppression_limit": None, **kw})


def test_target_check_counts_sensitive_values_as_the_engine_does():
    # one class; True and 1 are written differently (two values), True and "True" alike (one)
    for cells in ([True, 1, True, 1], [True, "True", True, "True"]):
        df = pd.DataFrame({"q": ["a"] * 4, "s": pd.Series(cells, dtype=object)})
        got = verify_targets(df, ["q"], _targets(l={"column": "s", "l": 2}))["l"]
        assert got["met"] == check(df, ["q"], l={"s": 2}).holds
        assert got["achieved"] == len({str(v) for v in cells})


def test_target_check_t_closeness_sees_true_and_one_apart():
    df = pd.DataFrame({"q": ["a", "a", "b", "b"], "s": pd.Series([True, True, 1, 1], dtype=object)})
    got = verify_targets(df, ["q"], _targets(t={"column": "s", "t": 0.2}))["t"]
    assert got["achieved"] == 0.5  # each class holds one of two equally frequent values
    assert got["met"] is False and not check(df, ["q"], t={"s": 0.2}).holds


def test_target_check_on_text_columns_of_every_dtype_counts_as_the_engine_does():
    # pandas 3 reads text as the str dtype: '' and a missing cell are written alike (one
    # value), '1' and '1.0' are read back as one number
    for dtype in (object, "string", None):
        for cells, l_read in ((["", None, "", None], 1), (["1", "1.0", "2", "2.0"], 2)):
            df = pd.DataFrame({"q": ["a"] * 4, "s": pd.Series(cells, dtype=dtype)})
            got = verify_targets(df, ["q"], _targets(l={"column": "s", "l": l_read + 1}))["l"]
            assert got["achieved"] == l_read, (dtype, cells, got)
            assert got["met"] is False and not check(df, ["q"], l={"s": l_read + 1}).holds


def test_target_check_t_closeness_keeps_texts_a_reader_may_merge_apart():
    # '0.1' / '0.10' (and '' / 'NA') are one value for l-diversity, two for t-closeness: a
    # reader of the text sees '0.1' in half of class x and a quarter of the table
    for a, b in (("0.1", "0.10"), ("", "NA")):
        s = pd.Series([a, a, "5", "6", b, b, "5", "6", a, b, "5", "6"], dtype=object)
        df = pd.DataFrame({"q": ["x"] * 4 + ["z"] * 4 + ["y"] * 4, "s": s})
        got = verify_targets(
            df, ["q"], _targets(t={"column": "s", "t": 0.2}, l={"column": "s", "l": 3})
        )
        assert got["t"]["achieved"] == 0.25 and got["t"]["met"] is False
        assert got["l"]["achieved"] == 3 and got["l"]["met"] is True
        assert not check(df, ["q"], t={"s": 0.2}).holds and check(df, ["q"], l={"s": 3}).holds
