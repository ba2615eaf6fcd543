"""Enforce a policy's privacy targets with the anonymity engine (used by ``veil.apply``).

The policy (``veil.deid.Policy``) is read by duck typing: ``policy.columns`` maps column names to
specs with ``.role`` and ``.hierarchy``; ``policy.privacy`` has ``k``, ``l``, ``t``,
``suppression_limit``, ``algorithm``, ``objective`` and ``raw`` (the YAML mapping, where
``time_limit``, ``average_risk``, ``suppressed: drop | mask`` (default drop),
``suppressed_value``, ``sampling_fraction``, ``population``, ``utility_target`` and ``options``
are also read).

``population: PATH`` is a population table (CSV/Parquet, read with :func:`veil.io.read`; a
relative path is resolved against the policy file's folder) with at least the quasi-identifier
columns, one row per person: it adds the k-map model ``KMap(k, population)`` with the policy's
``k`` and gives the report its journalist risk.  ``utility_target: COLUMN`` (not a
quasi-identifier) adds the classification utility of the release to the summary: the same
classifier trained on the original and on the release, with the quasi-identifiers as features,
scored on held-out original records (:func:`veil.anonymity.classification_utility`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from veil.anonymity._anonymize import anonymize
from veil.anonymity._config import AnonymizationConfig, l_model, t_model
from veil.anonymity._models import AverageRisk, KMap, PrivacyModel
from veil.anonymity._result import to_jsonable
from veil.errors import ConfigError, PolicyError, VeilError
from veil.schema._roles import Role

__all__ = ["enforce", "enforce_masked", "config_from_policy"]


def _roles(df: pd.DataFrame, policy: Any) -> dict[str, Role]:
    if hasattr(policy, "roles_for"):
        return {str(c): Role.parse(r) for c, r in policy.roles_for(df).items() if r is not None}
    return {str(c): Role.parse(s.role) for c, s in policy.columns.items()}


def _get(spec: Any, key: str, default: Any = None) -> Any:
    if isinstance(spec, Mapping):
        return spec.get(key, default)
    return getattr(spec, key, default)


def _population(raw: Mapping[str, Any], base_dir: Path, qi: list[str], k: Any) -> pd.DataFrame:
    """Read ``privacy.population`` (ConfigError when missing, unreadable or lacking a QI)."""
    from veil.io import read

    path = Path(str(raw["population"]))
    if not path.is_absolute():
        path = base_dir / path
    if k is None:
        raise ConfigError("privacy.population (k-map) needs privacy.k")
    if not path.is_file():
        raise ConfigError(f"privacy.population: file not found: {path}")
    try:
        pop = read(path)
    except VeilError as exc:
        raise ConfigError(f"privacy.population: cannot read {path}: {exc}") from exc
    miss = [c for c in qi if c not in pop.columns]
    if miss:
        raise ConfigError(
            f"privacy.population: {path.name} lacks quasi-identifier column(s) "
            f"{', '.join(map(repr, miss))}"
        )
    return pop[qi]


def utility_target(df: pd.DataFrame, policy: Any) -> str | None:
    """The policy's ``privacy.utility_target`` after checking it (None when not set).

    Raises
    ------
    ConfigError
        The column is not in the table or is a quasi-identifier.
    """
    targets = getattr(policy, "privacy", None)
    raw = dict(getattr(targets, "raw", {}) or {})
    target = raw.get("utility_target")
    if target is None:
        return None
    target = str(target)
    if target not in df.columns:
        raise ConfigError(f"privacy.utility_target: column {target!r} is not in the table")
    if _roles(df, policy).get(target) is Role.QUASI:
        raise ConfigError(
            f"privacy.utility_target: column {target!r} is a quasi-identifier; the target must "
            "be another column (the quasi-identifiers are the features)"
        )
    return target


def config_from_policy(df: pd.DataFrame, policy: Any) -> AnonymizationConfig:
    """Build the :class:`AnonymizationConfig` that a policy's ``privacy`` section describes."""
    targets = getattr(policy, "privacy", None)
    if targets is None:
        raise PolicyError("the policy has no privacy section")
    raw = dict(getattr(targets, "raw", {}) or {})
    roles = _roles(df, policy)
    columns = getattr(policy, "columns", {})
    base_dir = Path(getattr(policy, "base_dir", "."))
    qi = {
        c: getattr(columns.get(c), "hierarchy", None) for c, r in roles.items() if r is Role.QUASI
    }
    if not qi:
        raise PolicyError("privacy targets need at least one column with role quasi")
    sensitive = [c for c, r in roles.items() if r is Role.SENSITIVE]
    models: list[PrivacyModel] = []
    lspec = getattr(targets, "l", None)
    if lspec is not None:
        col = str(_get(lspec, "column"))
        models.append(
            l_model(
                col, _get(lspec, "l"), str(_get(lspec, "variant", "distinct")), _get(lspec, "c")
            )
        )
    tspec = getattr(targets, "t", None)
    if tspec is not None:
        col = str(_get(tspec, "column"))
        hier = _get(tspec, "hierarchy")
        if isinstance(hier, str) and not Path(hier).is_absolute():
            hier = base_dir / hier
        if hier is None and col in columns:
            hier = getattr(columns[col], "hierarchy", None)
        distance = str(_get(tspec, "distance", "equal"))
        models.append(
            t_model(
                col, float(_get(tspec, "t")), distance, hier if distance == "hierarchical" else None
            )
        )
    for m in models:
        if m.column in qi:
            raise ConfigError(
                f"column {m.column!r} is a quasi-identifier and cannot also be the sensitive "
                "column of l-diversity / t-closeness"
            )
        if m.column not in sensitive:
            sensitive.append(m.column)
    k = getattr(targets, "k", None)
    limit = getattr(targets, "suppression_limit", None)
    if raw.get("average_risk") is not None:
        models.append(AverageRisk(raw["average_risk"]))
    if raw.get("population") is not None:
        models.append(KMap(k, _population(raw, base_dir, list(qi), k)))
    utility_target(df, policy)
    mode = str(raw.get("suppressed", "drop")).lower()
    if mode not in ("drop", "mask"):
        raise PolicyError(f"privacy.suppressed must be 'drop' or 'mask', got {mode!r}")
    drop = mode == "drop"
    options = raw.get("options") or {}
    if not isinstance(options, Mapping):
        raise PolicyError("privacy.options must be a mapping")
    return AnonymizationConfig(
        quasi_identifiers=qi,
        sensitive=sensitive,
        models=models,
        k=k,
        suppression_limit=0.0 if limit is None else limit,
        algorithm=str(getattr(targets, "algorithm", None) or "optimal"),
        objective=str(getattr(targets, "objective", None) or "loss"),
        time_limit=raw.get("time_limit"),
        drop_suppressed=drop,
        suppressed_value=str(raw.get("suppressed_value", "*")),
        options=dict(options),
        sampling_fraction=raw.get("sampling_fraction"),
    )


def enforce(df: pd.DataFrame, policy: Any) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Anonymize ``df`` to meet ``policy.privacy``; returns ``(release, summary)``.

    Suppressed records are dropped (``privacy.suppressed: mask`` keeps them with ``*`` in every
    quasi-identifier); the other rows keep their index labels and non-QI values.

    Raises
    ------
    ConfigError
        Bad targets (k < 1 or above the table size, QIs without hierarchies for a lattice
        algorithm, a sensitive column also declared a QI, ...).
    UnsatisfiableError
        No allowed transformation meets the targets (names the failing model).

    Examples
    --------
    >>> from types import SimpleNamespace as NS
    >>> from veil.schema import Hierarchy
    >>> h = Hierarchy.from_mapping({"a": ["*"], "b": ["*"]})
    >>> pol = NS(columns={"g": NS(role=Role.QUASI, hierarchy=h)},
    ...          privacy=NS(k=2, l=None, t=None, suppression_limit=0, algorithm="optimal",
    ...                     objective=None, raw={}))
    >>> out, info = enforce(pd.DataFrame({"g": ["a", "b", "b"]}), pol)
    >>> out["g"].astype(str).tolist(), info["node"]
    (['*', '*', '*'], {'g': 1})
    """
    release, summary, _ = enforce_masked(df, policy)
    return release, summary


def enforce_masked(
    df: pd.DataFrame, policy: Any
) -> tuple[pd.DataFrame, dict[str, Any], np.ndarray]:
    """:func:`enforce`, plus a boolean mask over the release rows of the suppressed records
    kept with masked quasi-identifiers (all False when they are dropped).

    ``veil.apply`` passes the mask to the target check, which leaves those records out: they
    are not a released equivalence class.
    """
    config = config_from_policy(df, policy)
    target = utility_target(df, policy)
    result = anonymize(df, config)
    summary = result.summary()
    if target is not None:
        from veil.anonymity._classification_utility import classification_utility

        cu = classification_utility(
            df, result.data, target, config.qi_names, hierarchies=config.quasi_identifiers
        )
        summary["classification_utility"] = to_jsonable({"target": target, **cu})
    summary["release_records"] = int(len(result.data))
    summary["suppressed_records"] = "dropped" if config.drop_suppressed else "masked"
    if config.drop_suppressed:
        masked = np.zeros(len(result.data), dtype=bool)
    else:
        masked = np.asarray(result.suppressed, dtype=bool).copy()
    return result.data, summary, masked
