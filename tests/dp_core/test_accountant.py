"""Budget accountant (diffprivlib semantics), composition theorems and zCDP."""

from __future__ import annotations

import itertools
import math
import threading

import numpy as np
import pytest

import veil.dp as dp
from veil.dp._composition import (
    advanced_composition,
    kov_heterogeneous_epsilon,
    optimal_composition,
    optimal_composition_delta,
)
from veil.dp._zcdp import ZCDPAccountant, gaussian_rho, zcdp_to_dp, zcdp_to_dp_simple
from veil.dp.mechanisms._gaussian import analytic_gaussian_delta
from veil.errors import BudgetError, ConfigError, InputError


def test_seed_walkthrough():
    acc = dp.BudgetAccountant(epsilon=1.2)
    acc.spend(0.5, 0)
    assert acc.total() == (0.5, 0.0)
    assert acc.remaining().epsilon == pytest.approx(0.7)
    assert acc.remaining(2).epsilon == pytest.approx(0.35)
    assert len(acc) == 1
    acc.spend(0.7, 0)
    with pytest.raises(BudgetError):
        acc.spend(0.01, 0)
    assert len(acc) == 2  # a refused spend is not recorded


def test_delta_and_slack_semantics():
    acc = dp.BudgetAccountant(epsilon=3, delta=1e-3, slack=1e-4)
    for _ in range(20):
        acc.spend(0.1, 1e-5)
    total = acc.total()
    # total delta = 1 - (1 - slack) prod(1 - delta_i)
    assert total.delta == pytest.approx(1 - (1 - 1e-4) * (1 - 1e-5) ** 20)
    # advanced composition beats the naive sum of 2.0
    assert total.epsilon < 2.0
    assert total.epsilon <= kov_heterogeneous_epsilon([0.1] * 20, 1e-4)
    with pytest.raises(ConfigError):
        acc.slack = 1.0  # more than delta
    rem = acc.remaining(5)
    trial = dp.BudgetAccountant(epsilon=3, delta=1e-3, slack=1e-4, spent_budget=acc.spent_budget)
    for _ in range(5):
        trial.spend(rem.epsilon * 0.999, rem.delta * 0.999)


def test_bad_spends():
    acc = dp.BudgetAccountant(epsilon=1)
    for bad in [(-1, 0), (0, 0), (0.1, 2), (float("nan"), 0)]:
        with pytest.raises(ConfigError):
            acc.spend(*bad)
    with pytest.raises(ConfigError):
        acc.remaining(0)
    with pytest.raises(ConfigError):
        dp.BudgetAccountant.load_default("not an accountant")


def test_concurrent_spends_never_overspend():
    acc = dp.BudgetAccountant(epsilon=1.0)
    ok = []
    barrier = threading.Barrier(8)

    def worker() -> None:
        barrier.wait()
        for _ in range(40):
            try:
                acc.spend(0.01, 0)
                ok.append(1)
            except BudgetError:
                pass

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert acc.total().epsilon <= 1.0 + 1e-9
    assert len(ok) == len(acc) >= 99  # 100 fit (float rounding may refuse the last)


def test_default_accountant_and_context_manager():
    before = dp.BudgetAccountant.pop_default()
    try:
        d = dp.BudgetAccountant.load_default(None)
        assert dp.BudgetAccountant.load_default(None) is d
        with dp.BudgetAccountant(epsilon=2) as acc:
            assert dp.BudgetAccountant.load_default(None) is acc
        assert dp.BudgetAccountant.load_default(None) is d
    finally:
        dp.BudgetAccountant.pop_default()
        if before is not None:
            before.set_default()


def test_parallel_composition():
    acc = dp.BudgetAccountant(epsilon=1.0)
    with acc.parallel():
        for eps in (0.3, 0.5, 0.2):
            acc.spend(eps, 0)
        with pytest.raises(BudgetError):
            acc.spend(1.5, 0)
    assert acc.total().epsilon == pytest.approx(0.5) and len(acc) == 1
    acc.spend(0.5, 0)
    with pytest.raises(BudgetError):
        acc.spend(0.1, 0)


def test_json_round_trip(tmp_path):
    acc = dp.BudgetAccountant(epsilon=2, delta=1e-5)
    acc.spend(0.5, 1e-6)
    path = tmp_path / "acc.json"
    acc.save(path)
    back = dp.BudgetAccountant.load(path)
    assert back.spent_budget == acc.spent_budget and back.epsilon == 2 and back.delta == 1e-5
    inf_acc = dp.BudgetAccountant.from_json(dp.BudgetAccountant().to_json())
    assert math.isinf(inf_acc.epsilon)
    with pytest.raises(InputError):
        dp.BudgetAccountant.from_json("{not json")
    tampered = acc.to_dict() | {"spent_budget": [[5.0, 0.0]]}
    with pytest.raises(BudgetError):
        dp.BudgetAccountant.from_dict(tampered)


def test_advanced_composition_published_formula():
    eps, delta = advanced_composition(0.1, 1e-7, 100, 1e-5)
    assert eps == pytest.approx(math.sqrt(200 * math.log(1e5)) * 0.1 + 100 * 0.1 * math.expm1(0.1))
    assert eps == pytest.approx(5.850, abs=1e-3)  # Dwork & Roth (2014), Theorem 3.20
    assert delta == pytest.approx(100 * 1e-7 + 1e-5)


def _rr_profile_bruteforce(eps: float, k: int, eps_total: float) -> float:
    """Hockey-stick divergence of k-fold randomized response, enumerating all outputs."""
    p = math.exp(eps) / (1 + math.exp(eps))
    d = 0.0
    for out in itertools.product([0, 1], repeat=k):
        wrong = sum(out)
        pa = p ** (k - wrong) * (1 - p) ** wrong
        pb = p**wrong * (1 - p) ** (k - wrong)
        d += max(0.0, pa - math.exp(eps_total) * pb)
    return d


@pytest.mark.parametrize("eps,k,eps_total", [(0.5, 6, 1.0), (1.0, 8, 3.0), (0.2, 10, 0.5)])
def test_optimal_composition_matches_bruteforce(eps, k, eps_total):
    assert optimal_composition_delta(eps, k, eps_total) == pytest.approx(
        _rr_profile_bruteforce(eps, k, eps_total), rel=1e-9, abs=1e-15
    )


def test_optimal_composition_is_tighter_but_valid():
    opt = optimal_composition(0.1, 0.0, 100, 1e-5)
    assert opt < advanced_composition(0.1, 0.0, 100, 1e-5)[0]
    assert opt < kov_heterogeneous_epsilon([0.1] * 100, 1e-5)
    assert optimal_composition_delta(0.1, 100, opt) <= 1e-5
    assert optimal_composition_delta(0.1, 100, opt * 0.99) > 1e-5


def test_zcdp_conversions():
    rho, delta = 0.5, 1e-5
    assert zcdp_to_dp_simple(rho, delta) == pytest.approx(0.5 + 2 * math.sqrt(0.5 * math.log(1e5)))
    tight = zcdp_to_dp(rho, delta)
    assert tight <= zcdp_to_dp_simple(rho, delta)
    alphas = np.linspace(1.001, 60, 200_000)
    brute = np.min(
        alphas * rho
        + (math.log(1 / delta) + (alphas - 1) * np.log1p(-1 / alphas) - np.log(alphas))
        / (alphas - 1)
    )
    assert tight == pytest.approx(brute, rel=1e-5)
    # conservative: never below the exact epsilon of the Gaussian mechanism it describes
    for sigma in (0.8, 2.0, 5.0, 20.0):
        eps = zcdp_to_dp(gaussian_rho(sigma), delta)
        assert analytic_gaussian_delta(eps, sigma, 1.0) <= delta * (1 + 1e-9)


def test_zcdp_accountant():
    acc = ZCDPAccountant(epsilon=1.0, delta=1e-6)
    acc.spend_gaussian(sigma=20.0)
    rem = acc.remaining_rho()
    acc.spend(rem * 0.999)
    with pytest.raises(BudgetError):
        acc.spend(rem * 0.01)
    assert acc.epsilon_spent() <= 1.0
    back = ZCDPAccountant.from_json(acc.to_json())
    assert back.rho == pytest.approx(acc.rho) and len(back) == 2
    with pytest.raises(ConfigError):
        ZCDPAccountant(rho=1.0, epsilon=1.0, delta=1e-5)
    r = ZCDPAccountant(rho=0.5)
    r.spend_pure(1.0)
    with pytest.raises(BudgetError):
        r.spend(0.01)


def test_save_is_atomic_and_leaves_no_temporary_file(tmp_path):
    """A save that fails half-way keeps the previous state; no fixed '<name>.tmp' is used (a
    second process saving at the same time, or a planted symlink, would share it)."""
    acc = dp.BudgetAccountant(epsilon=2)
    acc.spend(0.5, 0)
    path = tmp_path / "acc.json"
    acc.save(path)
    (tmp_path / "acc.json.tmp").symlink_to(tmp_path / "planted")
    acc.spend(0.25, 0)

    class Boom(Exception):
        pass

    def failing_write(fh):
        fh.write(b"{half")
        raise Boom

    import veil.io._write as w

    real = w.atomic_write
    with pytest.raises(Boom):
        real(path, failing_write)
    assert dp.BudgetAccountant.load(path).total().epsilon == pytest.approx(0.5)
    acc.save(path)
    assert dp.BudgetAccountant.load(path).total().epsilon == pytest.approx(0.75)
    assert not (tmp_path / "planted").exists()  # the symlink was not followed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["acc.json", "acc.json.tmp"]


def test_spend_records_in_place_without_copying_earlier_spends():
    """``spend`` used to rebuild the list of every earlier spend on each call, so a long-lived
    process (the default, unlimited accountant charges every DP call) slowed down with each
    query.  It appends in place now, with the same records, also inside a parallel block."""
    from veil.dp import BudgetAccountant

    acc = BudgetAccountant()  # unlimited: check() never walks the list
    store = acc._spent
    for i in range(1, 2001):
        acc.spend(1e-3 * (i % 7 + 1), 0.0)
    assert acc._spent is store and len(acc) == 2000
    assert acc.spent_budget[:3] == [(2e-3, 0.0), (3e-3, 0.0), (4e-3, 0.0)]
    limited = BudgetAccountant(epsilon=1.0)
    with limited.parallel():
        limited.spend(0.2, 0.0)
        limited.spend(0.5, 0.0)  # disjoint parts: only the block's maximum counts
    limited.spend(0.1, 0.0)
    assert limited.spent_budget == [(0.5, 0.0), (0.1, 0.0)]
