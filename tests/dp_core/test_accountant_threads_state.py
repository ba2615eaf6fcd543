"""Accountant safety: parallel() blocks are per thread; saved states are validated on load."""

from __future__ import annotations

import asyncio
import json
import pickle
import threading

import numpy as np
import pytest

import veil.dp as dp
from veil.dp._rdp import RDPAccountant
from veil.dp._zcdp import ZCDPAccountant
from veil.errors import BudgetError, ConfigError, InputError


def _run(*targets) -> None:
    errors: list[BaseException] = []

    def wrap(f):
        def run() -> None:
            try:
                f()
            except BaseException as exc:  # surfaced in the main thread below
                errors.append(exc)

        return run

    threads = [threading.Thread(target=wrap(f)) for f in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    if errors:
        raise errors[0]


def test_parallel_block_does_not_swallow_other_threads_spends():
    acc = dp.BudgetAccountant(epsilon=10.0)
    a_spent, b_done = threading.Event(), threading.Event()

    def thread_a() -> None:
        with acc.parallel():
            acc.spend(0.5, 0)
            a_spent.set()
            assert b_done.wait(30)
            acc.spend(0.4, 0)  # still within this thread's block: costs nothing more

    def thread_b() -> None:
        assert a_spent.wait(30)
        for _ in range(5):
            acc.spend(0.5, 0)
        b_done.set()

    _run(thread_a, thread_b)
    assert acc.total().epsilon == pytest.approx(3.0)
    assert len(acc) == 6
    assert sorted(e for e, _ in acc.spent_budget) == [0.5] * 6


def test_parallel_block_does_not_swallow_other_asyncio_tasks_spends():
    acc = dp.BudgetAccountant(epsilon=10.0)

    async def main() -> None:
        a_spent, b_done = asyncio.Event(), asyncio.Event()

        async def task_a() -> None:
            with acc.parallel():  # a block held across an await, on the loop's one thread
                acc.spend(0.5, 0)
                a_spent.set()
                await b_done.wait()
                acc.spend(0.4, 0)

        async def task_b() -> None:
            await a_spent.wait()
            for _ in range(5):
                acc.spend(0.5, 0)
            b_done.set()

        await asyncio.wait_for(asyncio.gather(task_a(), task_b()), 30)

    asyncio.run(main())
    assert acc.total().epsilon == pytest.approx(3.0) and len(acc) == 6


def test_parallel_blocks_in_two_threads_are_charged_separately():
    acc = dp.BudgetAccountant(epsilon=10.0)
    both_open = threading.Barrier(2)

    def block(values: tuple[float, ...]) -> None:
        with acc.parallel():
            both_open.wait(30)  # both blocks open at once: not "nested"
            for v in values:
                acc.spend(v, 0)
            both_open.wait(30)

    _run(lambda: block((0.2, 0.7, 0.1)), lambda: block((0.3, 0.4)))
    assert acc.total().epsilon == pytest.approx(0.7 + 0.4) and len(acc) == 2


def test_parallel_charge_cannot_exceed_budget_after_a_concurrent_spend():
    acc = dp.BudgetAccountant(epsilon=1.0)
    a_spent, b_done = threading.Event(), threading.Event()
    outcome: dict[str, object] = {}

    def thread_a() -> None:
        with acc.parallel():
            acc.spend(0.3, 0)
            a_spent.set()
            assert b_done.wait(30)
            with pytest.raises(BudgetError):
                acc.spend(0.5, 0)  # would raise the block to 0.5: 0.5 + 0.6 > 1
            acc.spend(0.4, 0)  # 0.4 + 0.6 = 1 fits
            outcome["a"] = True

    def thread_b() -> None:
        assert a_spent.wait(30)
        acc.spend(0.6, 0)
        b_done.set()

    _run(thread_a, thread_b)
    assert outcome == {"a": True}
    assert acc.total().epsilon == pytest.approx(1.0) and len(acc) == 2


def test_racing_parallel_and_plain_spends_never_overspend():
    budget = 2.0
    acc = dp.BudgetAccountant(epsilon=budget)
    n_threads = 6
    start = threading.Barrier(n_threads)
    accepted: list[tuple[str, int, float]] = []
    lock = threading.Lock()

    def spend_all(chunk: np.ndarray, kind: str, key: int) -> None:
        """Spend each value; record the accepted ones (a refused spend records nothing)."""
        for v in chunk:
            try:
                acc.spend(float(v), 0)
            except BudgetError:
                continue
            with lock:
                accepted.append((kind, key, float(v)))

    def worker(t: int) -> None:
        rng = np.random.default_rng(100 + t)
        values = rng.uniform(0.01, 0.3, size=30)
        start.wait(30)
        for round_ in range(3):
            chunk = values[round_ * 10 : (round_ + 1) * 10]
            if (t + round_) % 2 == 0:
                with acc.parallel():
                    spend_all(chunk, "block", t * 10 + round_)
            else:
                spend_all(chunk, "plain", 0)

    _run(*[lambda t=t: worker(t) for t in range(n_threads)])
    assert acc.total().epsilon <= budget * (1 + 1e-12)
    # what is recorded is exactly what was accepted: plain spends in full, blocks at their max
    blocks: dict[int, float] = {}
    plain = []
    for kind, key, v in accepted:
        if kind == "block":
            blocks[key] = max(blocks.get(key, 0.0), v)
        else:
            plain.append(v)
    expected = sorted(plain + list(blocks.values()))
    assert sorted(e for e, _ in acc.spent_budget) == pytest.approx(expected)


def test_nested_parallel_in_one_thread_still_refused_and_pickle_drops_open_blocks():
    acc = dp.BudgetAccountant(epsilon=1.0)
    with acc.parallel():
        acc.spend(0.2, 0)
        with pytest.raises(ConfigError):
            with acc.parallel():
                pass
        copy = pickle.loads(pickle.dumps(acc))
        copy.spend(0.2, 0)  # the copy has no open block: a plain spend
        assert copy.total().epsilon == pytest.approx(0.4) and len(copy) == 2
    acc.spend(0.2, 0)
    assert acc.total().epsilon == pytest.approx(0.4) and len(acc) == 2


@pytest.mark.parametrize("slack", [0.5, -1e-7, float("nan"), 2e-6])
def test_budget_accountant_from_dict_validates_slack(slack):
    state = dp.BudgetAccountant(epsilon=1.0, delta=1e-6).to_dict() | {"slack": slack}
    with pytest.raises(ConfigError):
        dp.BudgetAccountant.from_dict(state)


def test_budget_accountant_from_dict_accepts_valid_slack_and_rejects_bad_spends():
    acc = dp.BudgetAccountant(epsilon=3.0, delta=1e-3, slack=1e-4)
    acc.spend(0.1, 1e-5)
    back = dp.BudgetAccountant.from_dict(acc.to_dict())
    assert back.slack == 1e-4 and back.spent_budget == acc.spent_budget
    for bad in ([-1.0, 0.0], ["nan", 0.0], [0.1, 2.0]):
        with pytest.raises(ConfigError):
            dp.BudgetAccountant.from_dict(acc.to_dict() | {"spent_budget": [bad]})


def _zcdp_state(**changes: object) -> str:
    acc = ZCDPAccountant(rho=1.0)
    acc.spend(0.25)
    return json.dumps(json.loads(acc.to_json()) | changes)


@pytest.mark.parametrize(
    "spent",
    [[-10], ["nan"], ["0.1"], [True], [None], [[0.1]]],
)
def test_zcdp_from_json_rejects_bad_spend_values(spent):
    with pytest.raises(ConfigError):
        ZCDPAccountant.from_json(_zcdp_state(spent=spent))


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_zcdp_from_json_rejects_non_finite_json_literals(literal):
    text = _zcdp_state().replace('"spent": [0.25]', f'"spent": [{literal}]')
    assert literal in text
    with pytest.raises(ConfigError):
        ZCDPAccountant.from_json(text)


def test_zcdp_from_json_structure_and_budget():
    with pytest.raises(InputError):
        ZCDPAccountant.from_json(_zcdp_state(spent="0.25"))
    with pytest.raises(InputError):
        ZCDPAccountant.from_json("[1, 2]")
    with pytest.raises(InputError):
        ZCDPAccountant.from_json("{not json")
    with pytest.raises(BudgetError):
        ZCDPAccountant.from_json(_zcdp_state(spent=[0.6, 0.6]))
    with pytest.raises(ConfigError):
        ZCDPAccountant.from_json(_zcdp_state(rho=-1.0))
    back = ZCDPAccountant.from_json(_zcdp_state())
    assert back.rho == 0.25
    back.spend(0.75)
    with pytest.raises(BudgetError):
        back.spend(0.01)  # the loaded spends still count


def test_zcdp_from_json_epsilon_delta_target():
    acc = ZCDPAccountant(epsilon=1.0, delta=1e-6)
    acc.spend(0.01)
    state = json.loads(acc.to_json())
    with pytest.raises(BudgetError):
        ZCDPAccountant.from_json(json.dumps(state | {"spent": [1.0]}))
    with pytest.raises(ConfigError):
        ZCDPAccountant.from_json(json.dumps(state | {"spent": [-1.0, 0.02]}))


@pytest.mark.parametrize("history", [[[1.0, 0.01, float("nan")]], [[1.0, 0.01]], [["x", 0, 1]]])
def test_rdp_from_state_malformed_history_is_config_error(history):
    state = RDPAccountant().state_dict() | {"history": history}
    with pytest.raises(ConfigError):
        RDPAccountant.from_state(state)
