"""Budget bookkeeping shared by the estimators: check before, spend after."""

from __future__ import annotations

from typing import Any


def resolve_accountant(accountant: Any) -> Any:
    """Return ``accountant`` or the default :class:`veil.dp.BudgetAccountant`."""
    from veil.dp import BudgetAccountant

    return BudgetAccountant.load_default(accountant)


class Charge:
    """Check a budget up front and spend it only when the fit succeeds.

    Examples
    --------
    >>> from veil.dp import BudgetAccountant
    >>> acc = BudgetAccountant(epsilon=1.0)
    >>> with Charge(acc, 0.4, 0.0):
    ...     pass
    >>> round(acc.spent_budget[-1][0], 2)
    0.4
    """

    def __init__(self, accountant: Any, epsilon: float, delta: float = 0.0) -> None:
        self.accountant = resolve_accountant(accountant)
        self.epsilon = float(epsilon)
        self.delta = float(delta)
        self.accountant.check(self.epsilon, self.delta)  # raises BudgetError before any work

    def __enter__(self) -> Charge:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.accountant.spend(self.epsilon, self.delta)
