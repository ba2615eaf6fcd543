"""Canonical values of extreme ``Decimal`` / ``Fraction`` cells (veil.dp._canon).

A ``Fraction`` beyond float64 raised ``OverflowError`` in :func:`canonical`, so one person's
cell made a query fail that ran without it; a tiny non-integral ``Decimal`` became the float
``0.0`` while a float cell ``0.0`` becomes the int ``0``: two equal canonical values of two
types, so a factorization labelled the merged group by whichever came first.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import pandas as pd

from veil.dp import PrivateFrame
from veil.dp._canon import canonical


def test_fraction_beyond_float_reads_as_infinite() -> None:
    assert canonical(Fraction(10**400, 3)) == math.inf
    assert canonical(Fraction(-(10**400), 7)) == -math.inf
    assert canonical(Fraction(7, 2)) == 3.5


def test_tiny_decimal_has_the_type_of_the_equal_float() -> None:
    a, b = canonical(Decimal("1.5e-400")), canonical(0.0)
    assert a == b
    assert type(a) is type(b)


def test_query_runs_with_a_huge_fraction_cell() -> None:
    base = [1.0, 2.0, 3.0] * 20
    df = pd.DataFrame({"x": pd.Series([*base, Fraction(10**400, 3)], dtype=object)})
    pf = PrivateFrame(df, bounds={"x": (0.0, 10.0)}, accountant=False, random_state=0)
    out = pf.agg(s=("x", "sum"), epsilon=1e6)
    assert abs(float(out["s"].iloc[0]) - (sum(base) + 10.0)) < 1.0  # clamped to the bound


def test_decimal_with_a_huge_exponent_is_read_quickly_as_infinite() -> None:
    import time

    start = time.perf_counter()
    assert canonical(Decimal("1e999999")) == math.inf
    assert canonical(Decimal("-1e999999")) == -math.inf
    assert time.perf_counter() - start < 1.0  # was 26 s (int() of a million digits)
    assert canonical(Decimal("1e300")) == 10**300  # integers of fewer digits stay exact
    text_digits = "9" * 4400  # beyond int(text)'s limit: a text cell reads as +inf too
    assert canonical(text_digits) == canonical(Decimal(text_digits)) == math.inf


def test_an_integer_beyond_4300_digits_reads_as_inf_whatever_its_type() -> None:
    """``10**5000`` stayed an exact int while its text and its Decimal read as inf; Python
    calls the int and the Decimal equal, so a group of both was labelled by whichever row
    came first -- one person's Decimal ahead of everybody's ints relabelled the key."""
    from decimal import Decimal
    from fractions import Fraction

    import pandas as pd

    from veil.dp._canon import canonical
    from veil.dp.frame import PrivateFrame

    big = 10**5000
    text = "1" + "0" * 5000
    forms = [big, Decimal(big), Fraction(big), text, float("inf")]
    assert {canonical(v) for v in forms} == {float("inf")}
    assert canonical(-big) == float("-inf") and canonical(10**4299) == 10**4299
    base = pd.DataFrame({"pid": range(300), "g": pd.Series([big] * 300, dtype=object)})
    first = pd.DataFrame({"pid": [999], "g": pd.Series([Decimal(big)], dtype=object)})
    labels = []
    for df in (base, pd.concat([first, base], ignore_index=True)):
        pf = PrivateFrame(df, "pid", accountant=False, random_state=1)
        labels.append(repr(pf.groupby("g").agg(n="count", epsilon=1.0, delta=1e-6)["g"].tolist()))
    assert labels[0] == labels[1]


def test_a_complex_number_without_imaginary_part_is_its_real_number() -> None:
    """``1+0j == 1`` and hashes alike: a group of both was labelled by the first row."""
    import numpy as np
    import pandas as pd

    from veil.dp._canon import canonical
    from veil.dp.frame import PrivateFrame

    assert canonical(1 + 0j) == 1 and type(canonical(np.complex128(2.5))) is float
    assert canonical(complex(float("nan"), 0)) is None and canonical(1 + 2j) == 1 + 2j
    base = pd.DataFrame({"pid": range(300), "g": pd.Series([1] * 300, dtype=object)})
    first = pd.DataFrame({"pid": [999], "g": pd.Series([1 + 0j], dtype=object)})
    labels = []
    for df in (base, pd.concat([first, base], ignore_index=True)):
        pf = PrivateFrame(df, "pid", accountant=False, random_state=1)
        labels.append(repr(pf.groupby("g").agg(n="count", epsilon=1.0, delta=1e-6)["g"].tolist()))
    assert labels[0] == labels[1]


def test_a_complex_column_reads_as_its_object_twin() -> None:
    """A complex128 column was read vectorized as float64 (``2+5j`` as 2) but cell by cell
    once one person's text cell made it object (``2+5j`` is no number): every other person's
    value in SUM / AVG / WHERE followed that one cell."""
    import pandas as pd

    from veil.dp.frame import PrivateFrame

    cells = pd.Series([1 + 0j, 2 + 5j, 3 + 0j, 4 - 1j] * 50)
    outs = []
    for s in (cells, cells.astype(object)):
        df = pd.DataFrame({"c": s})
        pf = PrivateFrame(df, accountant=False, random_state=4, bounds={"c": (0, 10)})
        q = pf.where("c > 1.5 OR c IS NULL")
        outs.append(q.agg(s=("c", "sum"), m=("c", "mean"), n=("c", "count"), k="count", epsilon=9))
    pd.testing.assert_frame_equal(outs[0], outs[1])


def test_a_numpy_timedelta_cell_is_a_duration_not_an_error() -> None:
    """numpy subclasses timedelta64 from np.integer, so canonical() took int() of it: a
    day-unit cell raised TypeError (after the charge in GROUP BY and SUM), a ns-unit one read
    as a number of nanoseconds.  It is a duration (pd.Timedelta), as in a timedelta column."""
    import numpy as np
    import pandas as pd

    from veil.dp._canon import canonical
    from veil.dp.frame import PrivateFrame

    assert canonical(np.timedelta64(1, "D")) == pd.Timedelta(days=1)
    assert (
        canonical(np.timedelta64(5, "ns")) == pd.Timedelta(5)
        and canonical(np.timedelta64("NaT")) is None
    )
    base = pd.DataFrame({"pid": range(50), "g": 1, "v": 3}).astype(object)
    cell = np.timedelta64(1, "D")
    person = pd.DataFrame(
        {"pid": [999], "g": pd.Series([cell], dtype=object), "v": pd.Series([cell], dtype=object)}
    )
    outs = []
    for df in (base, pd.concat([base, person], ignore_index=True)):
        pf = PrivateFrame(df, "pid", accountant=False, random_state=2, bounds={"v": (0, 10)})
        grouped = pf.groupby("g", keys=[1]).agg(n="count", s=("v", "sum"), epsilon=5.0)
        filtered = pf.where("g = 1 OR v > 0").agg(n="count", s=("v", "sum"), epsilon=5.0)
        outs.append(pd.concat([grouped, filtered], ignore_index=True))
    pd.testing.assert_frame_equal(outs[0], outs[1])


def test_a_comparison_numpy_broadcasts_is_unknown() -> None:
    """A tuple cell against a numpy complex cell: numpy broadcast the comparison to an array
    and bool() of it raised ValueError, so one person's two cells failed the WHERE."""
    import numpy as np
    import pandas as pd

    from veil.dp._canon import canonical, compare
    from veil.dp.frame import PrivateFrame

    assert compare((1, 2), "=", np.complex64(2 + 1j)) == (False, False)
    assert canonical(np.complex64(2)) == 2
    base = pd.DataFrame({"pid": range(40), "g": 1, "h": 2}).astype(object)
    person = pd.DataFrame(
        {"pid": [999], "g": pd.Series([(1, 2)], dtype=object), "h": [np.complex64(2 + 1j)]}
    ).astype(object)
    outs = []
    for df in (base, pd.concat([base, person], ignore_index=True)):
        pf = PrivateFrame(df, "pid", accountant=False, random_state=3)
        outs.append(pf.where("g = h OR g < h OR NOT g >= h").agg(n="count", epsilon=5.0))
    pd.testing.assert_frame_equal(outs[0], outs[1])


def test_tuples_of_equal_items_are_one_group_label() -> None:
    """``(1, 2) == (1.0, 2.0)`` (and a named tuple equals its plain tuple), hashing alike: a
    group of both was labelled by the first row, so one person's ``(1.0, 2.0)`` ahead of
    everybody's ``(1, 2)`` relabelled the released key."""
    from collections import namedtuple

    import numpy as np
    import pandas as pd

    from veil.dp._canon import canonical
    from veil.dp.frame import PrivateFrame

    point = namedtuple("point", "x y")
    forms = [(1, 2), (1.0, 2.0), (np.int8(1), "2"), point(1, 2.0), (True, 2)]
    assert {repr(canonical(v)) for v in forms} == {"(1, 2)"}
    assert canonical(frozenset({1.0, "a"})) == frozenset({1, "a"})
    deep: tuple = ()
    for _ in range(5000):  # deeper than the recursion limit: no RecursionError
        deep = (deep,)
    assert isinstance(canonical(deep), tuple)
    base = pd.DataFrame({"pid": range(300), "g": pd.Series([(1, 2)] * 300, dtype=object)})
    labels = []
    for cell in (None, (1.0, 2.0), point(1.0, 2)):
        first = pd.DataFrame({"pid": [999], "g": pd.Series([cell], dtype=object)})
        df = base if cell is None else pd.concat([first, base], ignore_index=True)
        pf = PrivateFrame(df, "pid", accountant=False, random_state=1)
        labels.append(repr(pf.groupby("g").agg(n="count", epsilon=1.0, delta=1e-6)["g"].tolist()))
    assert labels[0] == labels[1] == labels[2]


def test_clock_texts_are_not_timestamps() -> None:
    """pandas reads 'now' and 'today' as the current time: a person's cell 'now' compared with
    a timestamp matched WHERE d < '2030-01-01' today and not in 2031 -- the answer depended on
    when the query ran.  They are texts that do not parse (unknown), as 'NOW' always was."""
    from veil.dp._canon import compare

    when = canonical(pd.Timestamp("2030-01-01"))
    for text in ("now", "today", "NOW"):
        assert compare(canonical(text), "<", when) == (False, False)
        assert compare(when, ">", canonical(text)) == (False, False)
    assert compare(canonical("2020-05-01"), "<", when) == (True, True)
