"""Audit: the ``veil.dp.tools`` quantile mechanism is a declared choice, never the input's dtype.

Integer candidates (permute-and-flip, integer releases) used to be selected by an integer or
boolean dtype, Smith's interval mechanism (releases that are almost surely not integers) by a
float one.  pandas infers the dtype from the values: a column of whole numbers read with
``read_csv`` is ``int64``, and the same column with one record replaced by ``30.5`` (or, for
the ``nan*`` functions, one more person whose value is missing) is ``float64``.  On such
neighbours the two supports are disjoint, an unbounded privacy loss.  Now ``integer=True``
declares the integer path and the default is continuous whatever the dtype.

The audits bucket the releases into windows of +-0.1 around every integer and the gaps between
them: an integer release always lands in a window, a continuous one only ~20% of the time, so
the buckets' probability ratio exposes a change of mechanism (the negative controls) while two
continuous releases on neighbours stay within ``e^eps``.
"""

from __future__ import annotations

import inspect
import io

import numpy as np
import pandas as pd
import pytest

import veil.dp as dp
from veil.errors import ConfigError

from ._audit import audit

pytestmark = pytest.mark.filterwarnings("ignore::veil.errors.InsecureRandomWarning")

EPS, N_DRAWS = 1.0, 10_000
_W = 0.1  # half-width of the window around each integer
BINS = np.sort(np.concatenate([np.arange(0, 101) - _W, np.arange(0, 101) + _W]))
FUNCS = ("quantile", "nanquantile", "percentile", "nanpercentile", "median", "nanmedian")


def _ages_csv() -> tuple[str, np.ndarray]:
    ages = np.random.default_rng(1).integers(20, 61, 41)
    rows = [f"{i},{a}" for i, a in enumerate(ages)]
    return "pid,age\n" + "\n".join(rows) + "\n", ages


def _read(text: str) -> pd.Series:
    return pd.read_csv(io.StringIO(text))["age"]  # the natural way: dtype inferred


def _draws(f, data, seed: int, **kw) -> np.ndarray:
    rng, acc = np.random.default_rng(seed), dp.BudgetAccountant()
    return np.array(
        [
            f(data, epsilon=EPS, bounds=(0, 100), random_state=rng, accountant=acc, **kw)
            for _ in range(N_DRAWS)
        ],
        dtype=float,
    )


def test_replacing_a_value_by_a_fraction_does_not_change_the_mechanism():
    text, ages = _ages_csv()
    lines = text.splitlines()
    i = int(np.argsort(ages)[20])
    lines[1 + i] = f"{i},30.5"  # replace the median record (one record)
    d, d2 = _read(text), _read("\n".join(lines) + "\n")
    assert d.dtype == np.int64 and d2.dtype == np.float64  # the premise: inferred dtypes
    a = _draws(dp.tools.median, d, 1)
    b = _draws(dp.tools.median, d2, 2)
    assert audit(a, b, BINS) <= EPS
    # negative control: the old dtype-following choice (integer candidates for the int64
    # column only) is flagged by the same audit
    a_old = _draws(dp.tools.median, d, 3, integer=True)
    assert audit(a_old, b, BINS) > EPS


def test_adding_a_missing_value_does_not_change_the_mechanism():
    text, _ = _ages_csv()
    d, d2 = _read(text), _read(text + "999,\n")  # one more person, age missing: float64 + NaN
    assert d.dtype == np.int64 and d2.dtype == np.float64 and d2.isna().sum() == 1
    a = _draws(dp.tools.nanmedian, d, 4)
    b = _draws(dp.tools.nanmedian, d2, 5)
    assert audit(a, b, BINS) <= EPS
    a_old = _draws(dp.tools.nanmedian, d, 6, integer=True)  # negative control
    assert audit(a_old, b, BINS) > EPS


def test_declared_integer_releases_integers_on_both_neighbours():
    text, ages = _ages_csv()
    lines = text.splitlines()
    i = int(np.argsort(ages)[20])
    lines[1 + i] = f"{i},30.5"
    for data in (_read(text), _read("\n".join(lines) + "\n")):
        out = np.array(
            [dp.tools.median(data, epsilon=EPS, bounds=(0, 100), integer=True, random_state=s)
             for s in range(200)]
        )  # fmt: skip
        assert np.all(out == np.floor(out)) and np.all((out >= 0) & (out <= 100))


def test_integer_dtypes_alone_stay_continuous():
    ints = np.random.default_rng(2).integers(0, 50, 101)
    for data in (ints, pd.Series(ints, dtype="Int64"), ints > 20, pd.Series(ints).astype(float)):
        out = np.array(
            [dp.tools.median(data, epsilon=EPS, bounds=(0, 50), random_state=s) for s in range(50)]
        )
        assert np.mean(out == np.floor(out)) < 0.2  # Smith's draws: integers with probability 0


def test_declared_integer_rounds_each_value():
    # a huge epsilon releases the median of the rounded values: 30.4 -> 30, 30.6 -> 31
    for value, want in ((30.4, 30.0), (30.6, 31.0)):
        x = np.full(101, value)
        assert (
            dp.tools.median(x, epsilon=1e6, bounds=(0, 100), integer=True, random_state=1) == want
        )


@pytest.mark.parametrize("name", FUNCS)
def test_integer_is_keyword_only_default_false(name):
    p = inspect.signature(getattr(dp.tools, name)).parameters["integer"]
    assert p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is False


def _call(name: str, data, **kw):
    f = getattr(dp.tools, name)
    pos = (0.5,) if "quantile" in name else (50,) if "percentile" in name else ()
    return f(data, *pos, epsilon=1.0, bounds=(0, 10), **kw)


@pytest.mark.parametrize("name", FUNCS)
def test_bad_declarations_are_refused_before_any_charge(name):
    x = np.array([1.0, 2.0, 3.0])
    acc = dp.BudgetAccountant()
    for bad in (1, "yes", None, 1.0):
        with pytest.raises(ConfigError, match="integer must be True or False"):
            _call(name, x, integer=bad, accountant=acc)
    # a public list already fixes the support: integer=True with it is refused, not ignored
    with pytest.raises(ConfigError, match="integer=True and candidates"):
        _call(name, x, integer=True, candidates=[1, 2, 3], accountant=acc)
    assert len(acc) == 0
    out = _call(name, x, integer=np.bool_(True), accountant=acc, random_state=1)
    assert float(out) == np.floor(out) and len(acc) == 1
    out = _call(name, x, integer=False, candidates=[1.5, 2.5], accountant=acc, random_state=1)
    assert float(out) in (1.5, 2.5)


def test_integer_without_an_integer_in_the_bounds_is_refused_before_the_charge() -> None:
    """integer=True promises an integer release; bounds (0.2, 0.8) hold none, and the floored
    Smith release was 0.2-0.8 (not an integer) or outside the bounds: refused, nothing spent."""
    from veil.dp import BudgetAccountant
    from veil.errors import ConfigError

    acc = BudgetAccountant(epsilon=1.0)
    with pytest.raises(ConfigError, match="no integer"):
        dp.tools.quantile(
            np.array([0.3, 0.5]), 0.5, epsilon=0.5, bounds=(0.2, 0.8), integer=True, accountant=acc
        )
    assert acc.spent_budget == []
