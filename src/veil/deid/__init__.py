"""De-identification: find identifying columns, apply a policy of operators, report.

Public API: :func:`scan` (find identifiers, quasi-identifiers and sensitive columns),
:class:`Policy` (a YAML policy: roles, operators, record suppression, privacy targets) and
:func:`apply` (run a policy on a DataFrame, returning the release and its report).  The
operators themselves live in :mod:`veil.deid.operators`.
"""

from __future__ import annotations

from typing import Any

from veil._lazy import load_lazy as _load_lazy
from veil.deid._scan import ColumnFinding, ScanResult, scan

__all__ = ["scan", "ScanResult", "ColumnFinding", "Policy", "ColumnSpec", "PrivacyTargets", "apply"]

_LAZY = {
    "Policy": ("veil.deid._policy", "Policy"),
    "ColumnSpec": ("veil.deid._policy", "ColumnSpec"),
    "PrivacyTargets": ("veil.deid._policy", "PrivacyTargets"),
    "apply": ("veil.deid._apply", "apply"),
}


def __getattr__(name: str) -> Any:
    return _load_lazy(name, _LAZY, globals(), "veil.deid")
