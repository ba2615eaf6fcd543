"""Differential privacy: secure noise, mechanisms, budget accounting and statistics.

``import veil.dp as dp`` is a drop-in for ``import diffprivlib as dp`` (see docs/dp.md):
``dp.BudgetAccountant``, ``dp.tools.*``, ``dp.mechanisms.*``, ``dp.models.*`` (from
:mod:`veil.ml`), ``dp.BudgetError``, ``dp.PrivacyLeakWarning``,
``dp.DiffprivlibCompatibilityWarning``; ``from veil.dp.<sub> import <name>`` works for ``tools``,
``mechanisms``, ``models``, ``accountant`` and ``utils``.  Beyond diffprivlib: ``dp.ZCDPAccountant``,
``dp.RDPAccountant`` and ``dp.PLDAccountant`` (DP-SGD), ``dp.PrivateFrame`` (DP group-by
queries), composition theorems, sensitivity helpers and the cryptographically secure
generator (``dp.SecureRandom`` / ``dp.resolve_rng``).

Examples
--------
>>> import veil.dp as dp
>>> acc = dp.BudgetAccountant(epsilon=1.0)
>>> noisy = dp.mechanisms.Laplace(epsilon=0.5, sensitivity=1).randomise(10.0)
>>> _ = acc.spend(0.5, 0)
>>> len(acc)
1
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
    "PLDAccountant": ("veil.dp._pld", "PLDAccountant"),
    "compute_rdp": ("veil.dp._rdp", "compute_rdp"),
    "rdp_to_epsilon": ("veil.dp._rdp", "rdp_to_epsilon"),
    "noise_multiplier_for": ("veil.dp._rdp", "noise_multiplier_for"),
    "pld_epsilon": ("veil.dp._pld", "pld_epsilon"),
    "PrivateFrame": ("veil.dp.frame", "PrivateFrame"),
    "global_sensitivity": ("veil.dp._sensitivity", "global_sensitivity"),
    "empirical_sensitivity": ("veil.dp._sensitivity", "empirical_sensitivity"),
    "parallel_databases": ("veil.dp._sensitivity", "parallel_databases"),
    "estimate_bounds": ("veil.dp.tools._bounds", "estimate_bounds"),
    "advanced_composition": ("veil.dp._composition", "advanced_composition"),
    "optimal_composition": ("veil.dp._composition", "optimal_composition"),
    "resolve_rng": ("veil.dp._rng", "resolve_rng"),
    "SecureRandom": ("veil.dp._rng", "SecureRandom"),
    "models": ("veil.dp.models", None),
    "utils": ("veil.dp.utils", None),
    "accountant": ("veil.dp.accountant", None),
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
