"""Property tests (hypothesis): invariants of mechanisms, tools and the accountant."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import veil.dp as dp
from veil.dp import mechanisms as M
from veil.dp._samplers import grid_for, laplace_fp
from veil.dp.mechanisms._base import DPMechanism
from veil.errors import BudgetError

finite = st.floats(min_value=-1e9, max_value=1e9, allow_nan=False)
eps_st = st.floats(min_value=0.01, max_value=10.0)


@settings(max_examples=60, deadline=None)
@given(x=finite, eps=eps_st, sens=st.floats(min_value=1e-3, max_value=1e3))
def test_laplace_output_always_on_the_public_grid(x, eps, sens):
    m = M.Laplace(epsilon=eps, sensitivity=sens)
    out = m.randomise(x)
    g = grid_for(m.scale)
    assert math.isfinite(out)
    if abs(out) < 2**52 * g:
        assert (out / g) == round(out / g)


@settings(max_examples=20, deadline=None)
@given(
    lo=st.floats(min_value=-100, max_value=0),
    width=st.floats(min_value=0.1, max_value=100),
    x=finite,
    eps=eps_st,
)
def test_bounded_mechanisms_stay_in_bounds(lo, width, x, eps):
    hi = lo + width
    for cls in (M.LaplaceTruncated, M.LaplaceFolded, M.LaplaceBoundedDomain):
        out = cls(epsilon=eps, sensitivity=1.0, lower=lo, upper=hi).randomise(np.full(20, x))
        assert np.all((out >= lo) & (out <= hi))


@settings(max_examples=40, deadline=None)
@given(
    data=st.lists(st.floats(min_value=-50, max_value=150), min_size=1, max_size=50),
    eps=eps_st,
)
def test_tools_outputs_respect_bounds_and_do_not_mutate(data, eps):
    x = np.array(data)
    before = x.copy()
    m = dp.tools.mean(x, epsilon=eps, bounds=(0, 100))
    v = dp.tools.var(x, epsilon=eps, bounds=(0, 100))
    q = dp.tools.quantile(x, [0.1, 0.9], epsilon=eps, bounds=(0, 100))
    assert 0 <= m <= 100 and 0 <= v <= 2500
    assert np.all((q >= 0) & (q <= 100)) and q[0] <= q[1]
    assert np.array_equal(x, before)


@settings(max_examples=40, deadline=None)
@given(
    spends=st.lists(
        st.tuples(st.floats(min_value=0.001, max_value=1.0), st.sampled_from([0.0, 1e-7, 1e-6])),
        max_size=30,
    ),
    slack=st.sampled_from([0.0, 1e-6]),
)
def test_accountant_never_exceeds_its_budget(spends, slack):
    acc = dp.BudgetAccountant(epsilon=2.0, delta=1e-5, slack=slack)
    for e, d in spends:
        try:
            acc.spend(e, d)
        except BudgetError:
            pass
        total = acc.total()
        assert total.epsilon <= 2.0 + 1e-9 and total.delta <= 1e-5 + 1e-15


@settings(max_examples=30, deadline=None)
@given(eps=eps_st, k=st.integers(min_value=1, max_value=20))
def test_remaining_k_equal_spends_fit(eps, k):
    acc = dp.BudgetAccountant(epsilon=eps)
    acc.spend(eps / 3, 0)
    r = acc.remaining(k)
    for _ in range(k):
        acc.spend(r.epsilon * (1 - 1e-9), 0)
    assert acc.total().epsilon <= eps * (1 + 1e-9)


@settings(max_examples=30, deadline=None)
@given(vals=st.lists(finite, min_size=1, max_size=30))
def test_array_and_scalar_forms_agree_in_shape(vals):
    m: DPMechanism = M.Laplace(epsilon=1.0, sensitivity=1.0)
    arr = np.array(vals)
    out = m.randomise(arr)
    assert out.shape == arr.shape
    direct = laplace_fp(arr, 1.0, m._rng, sensitivity=1.0)
    assert direct.shape == arr.shape
