"""The privacy budget accountant (diffprivlib's API and semantics, thread-safe).

``BudgetAccountant(epsilon, delta, slack, spent_budget)`` tracks ``(epsilon, delta)`` spends.
``total()`` composes them: the basic sum, or — with ``slack > 0`` — the better of the
advanced-composition bounds (Dwork, Rothblum & Vadhan 2010; Kairouz, Oh & Viswanath 2015,
Theorem 3.5), and for identical spends also the *optimal* composition (KOV 2015, Theorem 3.3).
``spend`` is an atomic check-and-record under a lock, so concurrent queries can never
overspend.  Spends made inside ``with acc.parallel():`` act on disjoint partitions of the data
and cost only their maximum (parallel composition, McSherry 2009).  A parallel block belongs to
the thread (and asyncio task) that opened it: spends from any other meanwhile are charged in full.
"""

from __future__ import annotations

import asyncio
import json
import math
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from numbers import Integral
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from veil.dp._composition import compose_deltas, kov_heterogeneous_epsilon, optimal_composition
from veil.dp.mechanisms._base import as_float, check_epsilon_delta
from veil.errors import BudgetError, ConfigError, InputError

__all__ = ["Budget", "BudgetAccountant"]


class Budget(tuple):
    """An ``(epsilon, delta)`` pair; ``>=`` / ``<=`` compare both components.

    What :class:`BudgetAccountant` returns for budgets spent and remaining.

    Examples
    --------
    >>> acc = BudgetAccountant(epsilon=1.0, delta=1e-5)
    >>> _ = acc.spend(0.25, 1e-6)
    >>> spent = acc.total()
    >>> spent, spent.epsilon
    ((epsilon=0.25, delta=1e-06), 0.25)
    >>> spent <= Budget(1.0, 1e-5), Budget(0.1, 1e-4) <= Budget(1.0, 1e-5)
    (True, False)
    """

    def __new__(cls, epsilon: float, delta: float) -> Budget:
        return super().__new__(cls, (float(epsilon), float(delta)))

    @property
    def epsilon(self) -> float:
        return self[0]

    @property
    def delta(self) -> float:
        return self[1]

    def __ge__(self, other: Any) -> bool:  # type: ignore[override]
        return self[0] >= other[0] and self[1] >= other[1]

    def __le__(self, other: Any) -> bool:  # type: ignore[override]
        return self[0] <= other[0] and self[1] <= other[1]

    def __gt__(self, other: Any) -> bool:  # type: ignore[override]
        return self >= other and self != other

    def __lt__(self, other: Any) -> bool:  # type: ignore[override]
        return self <= other and self != other

    def __repr__(self) -> str:
        return f"(epsilon={self[0]!r}, delta={self[1]!r})"


def _owner() -> tuple[int, int]:
    """Who is spending: the thread and, inside a running event loop, the asyncio task."""
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no running event loop in this thread
        task = None
    return threading.get_ident(), 0 if task is None else id(task)


def _check_spend(epsilon: Any, delta: Any) -> tuple[float, float]:
    """A finite spend ``(epsilon >= 0, 0 <= delta <= 1)``, not both zero (as diffprivlib)."""
    return check_epsilon_delta(epsilon, delta)


def _check_budget(epsilon: Any, delta: Any) -> tuple[float, float]:
    """Like :func:`_check_spend` but ``epsilon`` may be infinite."""
    eps = as_float("epsilon", epsilon)
    if math.isinf(eps) and eps > 0:
        return eps, check_epsilon_delta(1.0, delta)[1]
    return check_epsilon_delta(eps, delta)


class BudgetAccountant:
    """Privacy budget accountant (drop-in for ``diffprivlib.BudgetAccountant``).

    Parameters
    ----------
    epsilon : float, default inf
        Total epsilon budget.
    delta : float, default 1.0
        Total delta budget.
    slack : float, default 0.0
        Part of ``delta`` used for advanced composition (``0 <= slack <= delta``).
    spent_budget : list of (epsilon, delta), optional
        Spends to replay (each checked).

    Examples
    --------
    >>> acc = BudgetAccountant(epsilon=1.2)
    >>> _ = acc.spend(0.5, 0)
    >>> acc.total()
    (epsilon=0.5, delta=0.0)
    >>> round(acc.remaining(2).epsilon, 6)
    0.35
    >>> len(acc)
    1
    """

    _default: ClassVar[BudgetAccountant | None] = None
    _default_lock: ClassVar[threading.RLock] = threading.RLock()

    def __init__(
        self,
        epsilon: float = float("inf"),
        delta: float = 1.0,
        slack: float = 0.0,
        spent_budget: Sequence[tuple[float, float]] | None = None,
    ) -> None:
        eps, dlt = _check_budget(epsilon, delta)
        self._epsilon, self._delta = eps, dlt
        self._min_epsilon = 0.0 if math.isinf(eps) else eps * 1e-14
        self._spent: list[tuple[float, float]] = []
        self._lock = threading.RLock()
        # (thread, task) -> index in ``_spent`` of its open parallel block (None until the
        # block's first spend): a block never absorbs other threads' or tasks' spends.
        self._parallel: dict[tuple[int, int], int | None] = {}
        self._slack = 0.0
        self.slack = slack
        for e, d in spent_budget or []:
            self.spend(e, d)

    # ------------------------------------------------------------------ properties
    @property
    def epsilon(self) -> float:
        """Total epsilon budget."""
        return self._epsilon

    @property
    def delta(self) -> float:
        """Total delta budget."""
        return self._delta

    @property
    def spent_budget(self) -> list[tuple[float, float]]:
        """A copy of the list of spends."""
        with self._lock:
            return list(self._spent)

    @property
    def slack(self) -> float:
        """Delta slack used by advanced composition."""
        return self._slack

    @slack.setter
    def slack(self, slack: float) -> None:
        s = float(slack)
        if not 0 <= s <= self._delta:
            raise ConfigError(f"slack must be between 0 and delta ({self._delta}), got {s}")
        with self._lock:
            if self._spent and not Budget(self._epsilon, self._delta) >= self.total(slack=s):
                raise BudgetError(f"changing the slack to {s} would exceed the budget")
            self._slack = s

    def __deepcopy__(self, memo: dict[int, Any]) -> BudgetAccountant:
        # A budget is shared state: copies (e.g. scikit-learn's clone of an estimator holding
        # this accountant) must keep charging the same budget, never a fresh copy of it.
        return self

    def __copy__(self) -> BudgetAccountant:
        return self

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.pop("_lock", None)  # locks cannot be pickled; a new one is made on load
        state.pop("_parallel", None)  # open parallel blocks belong to this process's threads
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.RLock()
        self._parallel = {}

    def __len__(self) -> int:
        return len(self._spent)

    def __repr__(self, n_budget_max: int = 5) -> str:
        params = []
        if not math.isinf(self._epsilon):
            params.append(f"epsilon={self._epsilon}")
        if self._delta != 1:
            params.append(f"delta={self._delta}")
        if self._slack:
            params.append(f"slack={self._slack}")
        spent = self.spent_budget
        if spent:
            shown = ", ".join(str(tuple(s)) for s in spent[:n_budget_max])
            more = ", ..." if len(spent) > n_budget_max else ""
            params.append(f"spent_budget=[{shown}{more}]")
        return "BudgetAccountant(" + ", ".join(params) + ")"

    # ------------------------------------------------------------------ composition
    def total(
        self,
        spent_budget: Sequence[tuple[float, float]] | None = None,
        slack: float | None = None,
    ) -> Budget:
        """Total ``(epsilon, delta)`` of ``spent_budget`` (default: the spends so far)."""
        budget = self.spent_budget if spent_budget is None else list(spent_budget)
        for e, d in budget:
            _check_spend(e, d)
        s = self._slack if slack is None else float(slack)
        if not 0 <= s <= self._delta:
            raise ConfigError(f"slack must be between 0 and delta ({self._delta}), got {s}")
        total_delta = compose_deltas([s] + [d for _, d in budget])
        eps = kov_heterogeneous_epsilon([e for e, _ in budget], s)
        if s > 0 and len(budget) > 1 and len(set(budget)) == 1:
            e0, d0 = budget[0]
            opt = optimal_composition(e0, d0, len(budget), total_delta)
            eps = min(eps, opt)
        return Budget(eps, total_delta)

    def check(self, epsilon: float, delta: float) -> bool:
        """True if ``(epsilon, delta)`` can be spent; :class:`BudgetError` otherwise."""
        eps, dlt = _check_spend(epsilon, delta)
        if math.isinf(self._epsilon) and self._delta == 1:
            return True
        if 0 < eps < self._min_epsilon:
            raise ConfigError(f"epsilon must be at least {self._min_epsilon} if non-zero")
        with self._lock:
            if Budget(self._epsilon, self._delta) >= self.total(spent_budget=self._with(eps, dlt)):
                return True
        raise BudgetError(
            f"Privacy spend of ({eps},{dlt}) not permissible; will exceed remaining privacy "
            f"budget. Use BudgetAccountant.remaining() to check remaining budget."
        )

    def _with(self, eps: float, dlt: float) -> list[tuple[float, float]]:
        """The spends after the caller adds ``(eps, dlt)``: inside the caller's own
        ``parallel`` block only the block's maximum counts; any other spend is appended.  Call
        under the lock.
        """
        return self._add(list(self._spent), eps, dlt)

    def _add(
        self, spent: list[tuple[float, float]], eps: float, dlt: float, record: bool = False
    ) -> list[tuple[float, float]]:
        """Add ``(eps, dlt)`` to ``spent`` in place, as :meth:`_with` describes, and return it;
        ``record``: ``spent`` is the accountant's own list, and a parallel block that has no
        entry yet takes the one appended now.  Call under the lock."""
        ident = _owner()
        i = self._parallel.get(ident)
        if ident in self._parallel and i is not None:  # the open block's maximum
            spent[i] = (max(spent[i][0], eps), max(spent[i][1], dlt))
        else:
            if record and ident in self._parallel:
                self._parallel[ident] = len(spent)  # this block's entry, appended now
            spent.append((eps, dlt))
        return spent

    def spend(self, epsilon: float, delta: float) -> BudgetAccountant:
        """Atomically check and record a spend; raises :class:`BudgetError` if it does not fit."""
        eps, dlt = _check_spend(epsilon, delta)
        with self._lock:
            self.check(eps, dlt)  # checks exactly the list recorded below, under the same lock
            # recorded in place (no copy of every earlier spend: a long-lived process with the
            # default, unlimited accountant would slow down with each spend)
            self._add(self._spent, eps, dlt, record=True)
        return self

    def remaining(self, k: int = 1) -> Budget:
        """The budget each of ``k`` further equal queries may spend.

        The answer is checked as :meth:`spend` checks: ``k`` spends of it fit together with
        the spends so far (``total`` of them all, the optimal composition of identical spends
        included, is within the budget).  The per-query delta composes to at most the delta
        left; the epsilon is the largest found by bisection for *that* delta (identical
        ``(epsilon, delta)`` spends cost more epsilon under the optimal composition than
        ``(epsilon, 0)`` ones, which diffprivlib's bisection assumes).
        """
        if not isinstance(k, Integral) or isinstance(k, bool):
            raise ConfigError(f"k must be a positive integer, got {k!r}")
        if k <= 0:
            raise ConfigError(f"k must be at least 1, got {k}")
        if math.isinf(self._epsilon) and self._delta == 1:
            return Budget(float("inf"), 1.0)
        with self._lock:
            spent = self.spent_budget
            spent_delta = self.total(spent_budget=spent).delta
            delta = (
                1 - ((1 - self._delta) / (1 - spent_delta)) ** (1 / k) if spent_delta < 1 else 1.0
            )
            delta = max(delta, 0.0)
            # the delta formula is exact in real numbers; in floats the composed total may
            # land a few ulps above the budget: step down until k spends of it fit
            for step in range(64):
                if delta == 0 or self._delta_fits(spent, delta, int(k)):
                    break
                delta = float(np.nextafter(delta, 0.0)) if step < 8 else delta * (1 - 1e-12)
            else:
                delta = 0.0
            if math.isinf(self._epsilon):
                return Budget(math.inf, delta)
            lower, upper = 0.0, self._epsilon
            old = (upper - lower) * 2
            while old > upper - lower:
                old = upper - lower
                mid = (upper + lower) / 2
                x0 = self.total(spent_budget=spent + [(mid, delta)] * int(k)).epsilon
                if x0 >= self._epsilon:
                    upper = mid
                if x0 <= self._epsilon:
                    lower = mid
            # ``lower`` fits (``(upper + lower) / 2`` may round up to ``upper``, which need not)
            return Budget(max(lower, 0.0), delta)

    def _delta_fits(self, spent: list[tuple[float, float]], delta: float, k: int) -> bool:
        """Whether ``k`` more spends of ``delta`` keep the total delta within the budget."""
        deltas = [self._slack] + [d for _, d in spent] + [delta] * k
        return compose_deltas(deltas) <= self._delta

    # ------------------------------------------------------------------ parallel composition
    @contextmanager
    def parallel(self) -> Iterator[BudgetAccountant]:
        """Spends inside the block run on *disjoint* partitions: they cost their maximum.

        Parallel composition (McSherry 2009, PINQ).  The block is charged incrementally:
        its single entry in the spends is the component-wise maximum so far, and each spend is
        checked against the budget and recorded under the lock, so the block's final charge
        always fits together with whatever else was spent meanwhile.  The block belongs to the
        thread (and, in a running event loop, the asyncio task) that opened it: spends made by
        any *other* thread or task while it is open are ordinary spends and are charged in full
        (the default accountant is shared by the whole process).

        Examples
        --------
        >>> acc = BudgetAccountant(epsilon=1.0)
        >>> with acc.parallel():
        ...     for part in range(10):
        ...         _ = acc.spend(0.5, 0)
        >>> acc.total().epsilon, len(acc)
        (0.5, 1)
        """
        ident = _owner()
        with self._lock:
            if ident in self._parallel:
                raise ConfigError("parallel() blocks cannot be nested")
            self._parallel[ident] = None
        try:
            yield self
        finally:
            with self._lock:
                self._parallel.pop(ident, None)

    # ------------------------------------------------------------------ default accountant
    @staticmethod
    def load_default(accountant: BudgetAccountant | None) -> BudgetAccountant:
        """``accountant`` if given, else the default accountant (created on first use)."""
        if accountant is None:
            with BudgetAccountant._default_lock:
                if BudgetAccountant._default is None:
                    BudgetAccountant._default = BudgetAccountant()
                return BudgetAccountant._default
        if not isinstance(accountant, BudgetAccountant):
            raise ConfigError(
                f"accountant must be a BudgetAccountant, got {type(accountant).__name__}"
            )
        return accountant

    def set_default(self) -> BudgetAccountant:
        """Make this accountant the default."""
        with BudgetAccountant._default_lock:
            BudgetAccountant._default = self
        return self

    @staticmethod
    def pop_default() -> BudgetAccountant | None:
        """Remove and return the default accountant."""
        with BudgetAccountant._default_lock:
            default, BudgetAccountant._default = BudgetAccountant._default, None
            return default

    def __enter__(self) -> BudgetAccountant:
        self._old_default = self.pop_default()
        self.set_default()
        return self

    def __exit__(self, *exc: object) -> None:
        self.pop_default()
        old = getattr(self, "_old_default", None)
        if old is not None:
            old.set_default()
        self._old_default = None

    # ------------------------------------------------------------------ persistence
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready state (``inf`` epsilon is stored as the string ``"inf"``)."""
        return {
            "type": "BudgetAccountant",
            "version": 1,
            "epsilon": "inf" if math.isinf(self._epsilon) else self._epsilon,
            "delta": self._delta,
            "slack": self._slack,
            "spent_budget": [list(s) for s in self.spent_budget],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    @classmethod
    def from_dict(cls, state: dict[str, Any]) -> BudgetAccountant:
        try:
            eps = float(state["epsilon"])
            acc = cls(epsilon=eps, delta=float(state["delta"]))
            spent = [(float(e), float(d)) for e, d in state.get("spent_budget", [])]
            slack = float(state.get("slack", 0.0))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"invalid accountant state: {exc}") from None
        acc.slack = slack  # validated as in the constructor: 0 <= slack <= delta
        if spent and not Budget(acc.epsilon, acc.delta) >= acc.total(spent_budget=spent):
            raise BudgetError("the saved spends exceed the saved budget")
        acc._spent = spent
        return acc

    @classmethod
    def from_json(cls, text: str) -> BudgetAccountant:
        try:
            state = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"invalid accountant JSON: {exc.msg}") from None
        return cls.from_dict(state)

    def save(self, path: str | Path) -> None:
        """Write the state as JSON (atomically: a unique temporary file in the same folder,
        flushed to disk, then renamed; concurrent saves never mix, and a crash leaves the
        previous state intact)."""
        from veil.io._write import atomic_write

        data = self.to_json().encode("utf-8")
        atomic_write(path, lambda fh: fh.write(data))

    @classmethod
    def load(cls, path: str | Path) -> BudgetAccountant:
        """Read a state written by :meth:`save`."""
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise InputError(f"cannot read accountant state {path}: {exc.strerror}") from None
        return cls.from_json(text)
