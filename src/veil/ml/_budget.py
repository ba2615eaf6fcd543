"""Budget bookkeeping shared by the estimators: check before, spend after, all or nothing."""

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
    keeps its previous model whole, never a mix of old and new noisy attributes; together
    with :class:`Charge` (spend only when the block succeeds) a failed fit releases nothing
    and spends nothing.

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
