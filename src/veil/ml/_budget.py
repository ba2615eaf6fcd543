"""Budget bookkeeping shared by the estimators: spend before any noise, keep no failed model.

A fit validates its input first (a failure there spends nothing), then :class:`Charge` spends
the budget *before* any private value is computed, and :func:`atomic_fit` leaves the estimator
as it was if anything after that fails.  Spending first is what makes failures safe: once noise
is drawn, an exception (a warning turned into an error whose message holds a noisy value, a
solver that did not converge on this data, an interrupt) is itself an output of the data and
the noise, and a budget refunded on failure could be drained for free by failing on purpose.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

_F = TypeVar("_F", bound=Callable[..., Any])


def atomic_fit(fit: _F) -> _F:
    """Make ``fit`` all or nothing: on any exception the estimator is left as it was.

    The estimator's ``__dict__`` is copied before ``fit`` runs and put back if ``fit`` raises
    (a bad ``priors`` found after the noise was drawn, a warning turned into an error, a
    ``KeyboardInterrupt``).  A fresh estimator then has no fitted attribute, and a fitted one
    keeps its previous model whole, never a mix of old and new noisy attributes.  The budget
    is not refunded: :class:`Charge` spends it before any noise is drawn, so a fit that fails
    after that point has paid for whatever its failure reveals.

    Examples
    --------
    >>> class Est:
    ...     @atomic_fit
    ...     def fit(self, fail):
    ...         self.coef_ = 1.0
    ...         if fail:
    ...             raise ValueError("bad input")
    ...         return self
    >>> e = Est()
    >>> try:
    ...     e.fit(True)
    ... except ValueError:
    ...     pass
    >>> hasattr(e, "coef_")
    False
    """

    @functools.wraps(fit)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        saved = dict(self.__dict__)
        try:
            return fit(self, *args, **kwargs)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise

    return wrapper  # type: ignore[return-value]


def resolve_accountant(accountant: Any) -> Any:
    """Return ``accountant`` or the default :class:`veil.dp.BudgetAccountant`."""
    from veil.dp import BudgetAccountant

    return BudgetAccountant.load_default(accountant)


class Charge:
    """Spend a budget *before* the private computation in the ``with`` block.

    ``accountant.spend`` checks and records the spend in one step (:class:`BudgetError`
    if it does not fit, before any work); nothing is refunded if the block then raises.

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

    def __enter__(self) -> Charge:
        self.accountant.spend(self.epsilon, self.delta)  # raises BudgetError before any work
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        return None
