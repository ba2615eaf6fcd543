"""diffprivlib-compatible ``accountant`` module: ``from veil.dp.accountant import BudgetAccountant``.

Re-exports :class:`~veil.dp.BudgetAccountant`, :class:`~veil.dp.Budget` and
:class:`~veil.errors.BudgetError` (the same objects as ``veil.dp.*``), so that
``from diffprivlib.accountant import ...`` ports by changing only the package name.

Examples
--------
>>> from veil.dp.accountant import BudgetAccountant
>>> acc = BudgetAccountant(epsilon=1.0)
>>> acc.remaining().epsilon
1.0
"""

from __future__ import annotations

from veil.dp._accountant import Budget, BudgetAccountant
from veil.errors import BudgetError

__all__ = ["Budget", "BudgetAccountant", "BudgetError"]
