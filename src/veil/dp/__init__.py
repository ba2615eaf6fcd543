"""Differential privacy: secure noise, mechanisms, budget accounting and statistics.

``import veil.dp as dp`` is a drop-in for ``import diffprivlib as dp`` (see docs/dp.md).
"""

from __future__ import annotations

import importlib
from typing import Any

from veil.errors import (
    BudgetError,
    DiffprivlibCompatibilityWarning,
    InsecureRandomWarning,
    PrivacyLeakWarning,
)

_LAZY = {
    "mechanisms": ("veil.dp.mechanisms", None),
    "tools": ("veil.dp.tools", None),
    "BudgetAccountant": ("veil.dp._accountant", "BudgetAccountant"),
    "Budget": ("veil.dp._accountant", "Budget"),
    "ZCDPAccountant": ("veil.dp._zcdp", "ZCDPAccountant"),
    "RDPAccountant": ("veil.dp._rdp", "RDPAccountant"),
    "resolve_rng": ("veil.dp._rng", "resolve_rng"),
    "SecureRandom": ("veil.dp._rng", "SecureRandom"),
    "models": ("veil.ml", None),
}

__all__ = [
    "BudgetError",
    "PrivacyLeakWarning",
    "DiffprivlibCompatibilityWarning",
    "InsecureRandomWarning",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        module, attr = _LAZY[name]
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            raise AttributeError(f"veil.dp.{name} is not available: {exc}") from None
        value = mod if attr is None else getattr(mod, attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'veil.dp' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
