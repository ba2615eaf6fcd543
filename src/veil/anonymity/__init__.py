"""Syntactic anonymization: privacy models, lattice and Mondrian search, risk and utility.

Public API
----------
Models: :class:`KAnonymity`, :class:`DistinctLDiversity`, :class:`EntropyLDiversity`,
:class:`RecursiveCLDiversity`, :class:`TCloseness`, :class:`AverageRisk`, :class:`KMap`.
Running: :class:`AnonymizationConfig`, :func:`anonymize` -> :class:`AnonymizationResult`.
Checking: :func:`check` -> :class:`CheckResult`.  Risk: :func:`risk`.
Local recoding: :func:`mondrian`, :func:`mdav`; utility: :func:`partition_ncp`,
:func:`classification_utility`.
"""

from __future__ import annotations

from typing import Any

from veil._lazy import load_lazy as _load_lazy
from veil.anonymity._config import AnonymizationConfig
from veil.anonymity._models import (
    AverageRisk,
    DistinctLDiversity,
    EntropyLDiversity,
    Evaluation,
    KAnonymity,
    KMap,
    PrivacyModel,
    RecursiveCLDiversity,
    evaluate,
)
from veil.anonymity._result import AnonymizationResult
from veil.anonymity._stats import ClassStats, SensitiveColumn, encode_sensitive
from veil.anonymity._tcloseness import TCloseness
from veil.schema._hierarchy import Hierarchy

__all__ = [
    "AnonymizationConfig",
    "AnonymizationResult",
    "AverageRisk",
    "CheckResult",
    "ClassStats",
    "DistinctLDiversity",
    "EntropyLDiversity",
    "Evaluation",
    "Hierarchy",
    "KAnonymity",
    "KMap",
    "PrivacyModel",
    "RecursiveCLDiversity",
    "SensitiveColumn",
    "TCloseness",
    "anonymize",
    "check",
    "classification_utility",
    "encode_sensitive",
    "evaluate",
    "mdav",
    "mondrian",
    "partition_ncp",
    "risk",
]

_LAZY = {
    "anonymize": ("veil.anonymity._anonymize", "anonymize"),
    "check": ("veil.anonymity._check", "check"),
    "CheckResult": ("veil.anonymity._check", "CheckResult"),
    "risk": ("veil.anonymity._risk", "risk"),
    "mondrian": ("veil.anonymity._mondrian", "mondrian"),
    "partition_ncp": ("veil.anonymity._mondrian", "partition_ncp"),
    "mdav": ("veil.anonymity._mdav", "mdav"),
    "classification_utility": (
        "veil.anonymity._classification_utility",
        "classification_utility",
    ),
}


def __getattr__(name: str) -> Any:
    return _load_lazy(name, _LAZY, globals(), "veil.anonymity")
