"""The accountant is charged once per query, with the query's total, before any computation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.dp._rng import BitSource, SecureRandom
from veil.dp.frame import PrivateFrame
from veil.errors import BudgetError

pytestmark = pytest.mark.filterwarnings("ignore::veil.errors.InsecureRandomWarning")
B = (0.0, 100.0)


class Recorder:
    """Duck-typed accountant recording every charge; refuses beyond ``limit``."""

    def __init__(self, limit: float = float("inf")) -> None:
        self.calls: list[tuple[float, float]] = []
        self.limit = limit

    def check(self, epsilon: float, delta: float) -> bool:
        if sum(e for e, _ in self.calls) + epsilon > self.limit:
            raise BudgetError("privacy spend exceeds the remaining budget")
        return True

    def spend(self, epsilon: float, delta: float) -> None:
        self.check(epsilon, delta)
        self.calls.append((epsilon, delta))


class CountingBits(BitSource):
    """Bit source counting how many words were drawn."""

    def __init__(self) -> None:
        self.inner = SecureRandom(5)
        self.drawn = 0

    def raw(self, n: int) -> np.ndarray:
        self.drawn += int(n)
        return self.inner.raw(n)


@pytest.fixture()
def df() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    return pd.DataFrame(
        {
            "pid": rng.integers(0, 40, 300),
            "g": rng.choice(list("abc"), 300),
            "x": rng.uniform(0, 100, 300),
        }
    )


def test_one_charge_with_query_total_for_many_outputs(df: pd.DataFrame) -> None:
    acc = Recorder()
    pf = PrivateFrame(df, privacy_unit="pid", max_groups=3, accountant=acc, random_state=1)
    pf.groupby("g", keys=list("abc")).agg(
        n="count", s=("x", "sum", B), m=("x", "mean", B), sd=("x", "std", B),
        med=("x", "median", B), epsilon=0.8, delta=1e-6,
    )  # fmt: skip
    assert acc.calls == [(0.8, 0.0)]  # Laplace + public keys: delta unused, not charged
    pf.groupby("g").agg(n="count", epsilon=0.5, delta=1e-6)
    assert acc.calls[-1] == (0.5, 1e-6)  # private partition selection uses delta
    pf.groupby("g", keys=list("abc")).agg(
        s=("x", "sum", B), epsilon=0.3, delta=1e-7, mechanism="gaussian"
    )
    assert acc.calls[-1] == (0.3, 1e-7)
    assert len(acc.calls) == 3


def test_component_budgets_add_up_to_the_charge(df: pd.DataFrame) -> None:
    pf = PrivateFrame(df, privacy_unit="pid", max_groups=2, accountant=Recorder(), random_state=1)
    plan = pf.groupby("g").plan(
        n="count", m=("x", "mean", B), v=("x", "var", B), epsilon=1.0, delta=1e-6
    )
    total = plan.eps_selection + sum(c.epsilon for c in plan.components)
    assert total == pytest.approx(plan.epsilon) == pytest.approx(1.0)
    # count(*), ncount(x), csum(x), csq(x): the mean and variance share the count of x's
    # numbers and csum(x) (the same on every dtype: a dtype-made plan told text cells apart)
    kinds = sorted((c.kind, c.column or "") for c in plan.components)
    assert kinds == [("count", ""), ("csq", "x"), ("csum", "x"), ("ncount", "x")]


def test_plan_and_accuracy_spend_nothing(df: pd.DataFrame) -> None:
    acc = Recorder()
    pf = PrivateFrame(df, accountant=acc, random_state=1)
    plan = pf.groupby("g", keys=list("abc")).plan(n="count", m=("x", "mean", B), epsilon=1.0)
    acc_table = plan.accuracy(0.05, group_size=100)
    assert acc.calls == []
    assert set(acc_table.index) == {"n", "m"}
    assert (acc_table["ci_halfwidth"] > 0).all()


def test_accuracy_lists_a_means_noise_scales_one_per_mechanism(df: pd.DataFrame) -> None:
    """A mean has two noisy parts; its scales were joined as '4/146', which reads as a ratio."""
    pf = PrivateFrame(df, accountant=Recorder(), random_state=1)
    plan = pf.groupby("g", keys=list("abc")).plan(m=("x", "mean", B), epsilon=1.0)
    row = plan.accuracy(0.05, group_size=100).loc["m"]
    scales = [float(v) for v in row["noise_scale"].split(", ")]
    assert len(scales) == len(row["mechanism"].split("+")) == 2
    assert sorted(scales) == pytest.approx(sorted(c.scale for c in plan.components), rel=1e-3)


def test_overspend_refused_before_any_noise_is_drawn(df: pd.DataFrame) -> None:
    acc = Recorder(limit=1.0)
    bits = CountingBits()
    pf = PrivateFrame(df, accountant=acc, random_state=bits)
    pf.groupby("g", keys=list("abc")).agg(n="count", epsilon=0.9)
    drawn = bits.drawn
    assert drawn > 0
    with pytest.raises(BudgetError):
        pf.groupby("g", keys=list("abc")).agg(n="count", epsilon=0.2)
    assert bits.drawn == drawn  # nothing computed
    assert len(acc.calls) == 1


def test_each_execution_is_charged(df: pd.DataFrame) -> None:
    acc = Recorder()
    plan = PrivateFrame(df, accountant=acc, random_state=1).plan(n="count", epsilon=0.25)
    plan.execute()
    plan.execute()
    assert acc.calls == [(0.25, 0.0), (0.25, 0.0)]


def test_real_budget_accountant_and_default(df: pd.DataFrame) -> None:
    from veil.dp import BudgetAccountant

    acc = BudgetAccountant(epsilon=1.0, delta=1e-5)
    pf = PrivateFrame(df, privacy_unit="pid", max_groups=2, accountant=acc, random_state=2)
    pf.groupby("g").agg(n="count", m=("x", "mean", B), epsilon=0.6, delta=1e-6)
    assert len(acc) == 1
    assert tuple(acc.total()) == pytest.approx((0.6, 1e-6))
    with pytest.raises(BudgetError):
        pf.groupby("g", keys=list("abc")).agg(n="count", epsilon=0.5)
    assert len(acc) == 1
    pf_default = PrivateFrame(df, random_state=3)  # built before the default is set
    with BudgetAccountant(epsilon=2.0) as default:
        pf_default.agg(n="count", epsilon=0.5)
        assert tuple(default.total()) == pytest.approx((0.5, 0.0))


def test_replacement_query_charged_once(df: pd.DataFrame) -> None:
    acc = Recorder()
    pf = PrivateFrame(df, accountant=acc, random_state=4)
    pf.agg(n="count", s=("x", "sum", B), m=("x", "mean", B), epsilon=0.4, neighbouring="replace")
    assert acc.calls == [(0.4, 0.0)]
