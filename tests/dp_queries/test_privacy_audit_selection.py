"""Audit of private partition selection (no public keys, delta > 0) and of the accountant.

``D'`` adds ONE person with rows in group ``b`` and in twenty groups ``z0..z19`` that exist only
because of that person; the query bounds each person to ``max_groups=2`` groups.  For every
event ``S`` the (epsilon, delta) inequality ``P[D in S] <= e^eps P[D' in S] + delta`` must hold
(Clopper-Pearson bounds); in particular some ``z`` group may appear with probability at most
about delta.  Before the fix in ``QueryPlan._select`` groups emptied by the bounding stayed
candidates with count 0, so all twenty ``z`` groups could appear (about 0.38 > delta = 0.05):
:func:`test_selection_audit_catches_unbounded_groups` reproduces that rate with the bounding
switched off.
"""

from __future__ import annotations

import pandas as pd
import pytest

from veil.dp.frame import PrivateFrame

from ._neighbours import certified_excess, releases, unbounded, with_person
from .test_accounting import Recorder

pytestmark = pytest.mark.filterwarnings("ignore::veil.errors.InsecureRandomWarning")
EPS, DELTA, RUNS = 1.0, 0.05, 1200
KW = dict(keys=None, max_groups=2, max_rows=2, epsilon=EPS, delta=DELTA, n="count")


def tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    # 'a' is always released; 'b' sits at the selection threshold (26 persons)
    base = pd.DataFrame({"pid": range(66), "g": ["a"] * 40 + ["b"] * 26, "x": 1.0})
    return base, with_person(base, {"b": 12, **{f"z{i}": 2 for i in range(20)}}, 1.0)


def events(df: pd.DataFrame, seed: int, runs: int) -> tuple[list, list]:
    out = releases(df, seed, runs, **KW)
    new = [any(str(k).startswith("z") for k in r["g"]) for r in out]
    return new, ["b" in set(r["g"]) for r in out]


def test_partition_selection_satisfies_eps_delta() -> None:
    d, d2 = tables()
    new, b = events(d, 1, RUNS)
    new2, b2 = events(d2, 2, RUNS)
    assert not any(new)  # the z groups do not exist in D
    assert certified_excess(new2, new, EPS) <= DELTA  # a person-only group: P <= ~delta
    assert certified_excess(b, b2, EPS) <= DELTA
    assert certified_excess(b2, b, EPS) <= DELTA


def test_selection_audit_catches_unbounded_groups(monkeypatch: pytest.MonkeyPatch) -> None:
    d, d2 = tables()
    new, _ = events(d, 3, 600)
    with unbounded(monkeypatch, max_groups=10**6):
        new2, _ = events(d2, 4, 600)
    assert certified_excess(new2, new, EPS) > DELTA


def test_groups_emptied_by_where_are_never_released() -> None:
    base = pd.DataFrame({"pid": range(40), "g": "a", "x": 1.0})
    extra = pd.DataFrame({"pid": 999, "g": [f"z{i}" for i in range(10)], "x": 0.0})
    pf = PrivateFrame(pd.concat([base, extra]), privacy_unit="pid", accountant=False,
                      random_state=5)  # fmt: skip
    plan = pf.where("x > 0.5").groupby("g").plan(n="count", epsilon=EPS, delta=DELTA)
    for _ in range(300):  # before the fix: P(some z group) ~ 0.18 per run
        assert set(plan.execute()["g"]) <= {"a"}


@pytest.mark.parametrize(
    "agg",
    [("x", "sum", (0, 10)), ("x", "mean", (0, 10)), ("x", "median", (0, 10)),
     ("y", "median", (0, 10)), "count"],
)  # fmt: skip
@pytest.mark.parametrize("keys", [["a", "b"], None])
def test_accountant_charged_once_per_query(agg, keys) -> None:
    d, _ = tables()
    d = d.assign(y=1)  # a declared integer column: the integer quantile path
    acc = Recorder()
    pf = PrivateFrame(d, privacy_unit="pid", accountant=acc, random_state=6, max_groups=2,
                      max_rows=2, integer_columns=["y"])  # fmt: skip
    pf.groupby("g", keys=keys).agg(s=agg, epsilon=0.7, delta=1e-6)
    assert acc.calls == [(0.7, 1e-6 if keys is None else 0.0)]
    func = "COUNT(*)" if agg == "count" else f"{agg[1].upper()}({agg[0]})"
    pf.bounds.update({"x": (0, 10), "y": (0, 10)})
    pf.sql(f"SELECT g, {func} FROM data GROUP BY g", epsilon=0.3, delta=1e-6,
           keys=None if keys is None else {"g": keys})  # fmt: skip
    assert acc.calls[1:] == [(0.3, 1e-6 if keys is None else 0.0)]
