"""Veil: a privacy-engineering toolkit.

De-identification (``veil.deid``), syntactic anonymization (``veil.anonymity``), differential
privacy (``veil.dp``), private machine learning (``veil.ml``) and cryptography for collaboration
(``veil.crypto``), with pandas DataFrames at the boundary.

The top-level names are imported lazily so that ``import veil`` stays fast.
"""

from __future__ import annotations

from typing import Any

from veil._lazy import load_lazy as _load_lazy

__version__ = "0.1.0"

_LAZY = {
    "read": ("veil.io", "read"),
    "write": ("veil.io", "write"),
    "scan": ("veil.deid", "scan"),
    "Policy": ("veil.deid", "Policy"),
    "apply": ("veil.deid", "apply"),
}

__all__ = ["__version__", *_LAZY]


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def __getattr__(name: str) -> Any:
    return _load_lazy(name, _LAZY, globals(), "veil")
