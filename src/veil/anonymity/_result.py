"""Result of an anonymization run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from veil.anonymity._config import AnonymizationConfig

__all__ = ["AnonymizationResult", "to_jsonable"]


def to_jsonable(obj: Any) -> Any:
    """Convert numpy scalars/arrays (recursively) into plain Python objects."""
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [to_jsonable(v) for v in obj.tolist()]
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        f = float(obj)
        return f if np.isfinite(f) else None
    if isinstance(obj, float) and not np.isfinite(obj):
        return None
    return obj


@dataclass
class AnonymizationResult:
    """What :func:`veil.anonymity.anonymize` returns.

    Attributes
    ----------
    data
        The release: same index and columns as the input; QI columns generalized (lattice) or
        replaced by partition summaries (Mondrian/MDAV); suppressed records have every QI set to
        ``config.suppressed_value`` (or are dropped when ``config.drop_suppressed``).
    config
        The configuration used.
    algorithm
        ``optimal``, ``heuristic``, ``mondrian`` or ``mdav``.
    node
        Lattice algorithms: the chosen generalization level of each QI.
    partitions
        Class (equivalence class / partition) id of every input record (-1 when suppressed).
    suppressed
        Boolean mask over the input records.
    n_nodes_checked, n_nodes_total
        Lattice nodes whose anonymity was computed, and the lattice size.
    optimal
        True when the search proved optimality for the objective.
    objective, objective_value
        The minimized objective and its value at the chosen node.
    utility
        Every utility metric of the release (loss, dm, dm_star, entropy, aecs, precision, ...).
    utility_before
        The same metrics for the original table taken as a release (no generalization, no
        suppression): the "before" column of the report.
    suppression
        Counts describing the suppressed records, never their values: ``by_class_size`` (bins
        of the size of their class at the chosen node) and ``by_model`` (records whose class
        violates each model); empty for algorithms that do not suppress.
    risk_before, risk_after
        Re-identification risk summaries (see :func:`veil.anonymity.risk`).
    elapsed
        Seconds spent in the search (excluding output rendering).

    Examples
    --------
    >>> from veil.anonymity import AnonymizationConfig, Hierarchy, anonymize
    >>> df = pd.DataFrame({"zip": ["1301", "1302", "1401", "1402"], "y": list("abab")})
    >>> zips = Hierarchy.from_mapping({z: [z[:2] + "**", "*"] for z in df["zip"]})
    >>> res = anonymize(df, AnonymizationConfig({"zip": zips}, k=2))
    >>> res.node, res.n_suppressed, res.n_classes, res.objective, round(res.objective_value, 3)
    ({'zip': 1}, 0, 2, 'loss', 0.333)
    >>> res.data["zip"].tolist(), res.partitions.tolist()
    (['13**', '13**', '14**', '14**'], [0, 0, 1, 1])
    >>> res.risk_before["prosecutor"]["highest"], res.risk_after["prosecutor"]["highest"]
    (1.0, 0.5)
    >>> summary = res.summary()  # JSON-able, for reports
    >>> summary["models"], summary["suppressed"], summary["optimal"]
    ([{'model': 'k-anonymity', 'k': 2}], 0, True)
    """

    data: pd.DataFrame
    config: AnonymizationConfig
    algorithm: str
    suppressed: np.ndarray
    partitions: np.ndarray | None = None
    node: dict[str, int] | None = None
    n_nodes_checked: int = 0
    n_nodes_total: int | None = None
    optimal: bool | None = None
    objective: str | None = None
    objective_value: float | None = None
    utility: dict[str, Any] = field(default_factory=dict)
    utility_before: dict[str, Any] = field(default_factory=dict)
    suppression: dict[str, Any] = field(default_factory=dict)
    risk_before: dict[str, Any] = field(default_factory=dict)
    risk_after: dict[str, Any] = field(default_factory=dict)
    elapsed: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def n_suppressed(self) -> int:
        return int(np.count_nonzero(self.suppressed))

    @property
    def n_classes(self) -> int:
        if self.partitions is None:
            return 0
        p = self.partitions[self.partitions >= 0]
        return int(np.unique(p).size)

    def summary(self) -> dict[str, Any]:
        """JSON-able summary for reports."""
        n = int(self.suppressed.shape[0])
        out: dict[str, Any] = {
            "algorithm": self.algorithm,
            "models": [m.to_dict() for m in self.config.all_models()],
            "quasi_identifiers": self.config.qi_names,
            "sensitive": list(self.config.sensitive),
            "suppression_limit": self.config.suppression_limit,
            "records": n,
            "suppressed": self.n_suppressed,
            "suppressed_share": (self.n_suppressed / n) if n else 0.0,
            "classes": self.n_classes,
            "node": self.node,
            "n_nodes_checked": self.n_nodes_checked,
            "n_nodes_total": self.n_nodes_total,
            "optimal": self.optimal,
            "objective": self.objective,
            "objective_value": self.objective_value,
            "utility": self.utility,
            "utility_before": self.utility_before,
            "suppression": self.suppression,
            "risk_before": self.risk_before,
            "risk_after": self.risk_after,
            "elapsed_s": self.elapsed,
        }
        out.update(self.extra)
        return to_jsonable(out)

    def __repr__(self) -> str:
        return (
            f"AnonymizationResult(algorithm={self.algorithm!r}, node={self.node}, "
            f"suppressed={self.n_suppressed}, classes={self.n_classes}, "
            f"objective={self.objective}={self.objective_value})"
        )
