"""Mondrian multidimensional local recoding under k-anonymity, l-diversity and t-closeness.

K. LeFevre, D. J. DeWitt and R. Ramakrishnan, "Mondrian Multidimensional K-Anonymity",
ICDE 2006.  Information loss is the normalized certainty penalty (NCP) of J. Xu et al.,
"Utility-Based Anonymization Using Local Recoding", KDD 2006.

Unlike aggregating implementations, the release is row-aligned with the input and keeps every
column: only the quasi-identifiers are replaced by their class's generalization (numeric
``"[lo, hi]"`` intervals, the lowest common hierarchy node, or a ``"{a,b}"`` set).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from veil.anonymity._models import (
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    PrivacyModel,
    RecursiveCLDiversity,
    TCloseness,
)
from veil.anonymity._mondrian_core import GroupCheck, partition
from veil.anonymity._mondrian_encode import encode_qis
from veil.anonymity._mondrian_render import class_stats, render
from veil.anonymity._stats import ClassStats, encode_sensitive
from veil.errors import ConfigError, InputError, UnsatisfiableError

__all__ = ["MondrianResult", "mondrian", "mondrian_partition", "partition_ncp", "sensitive_models"]


@dataclass
class MondrianResult:
    """Outcome of :func:`mondrian`.

    Attributes
    ----------
    release : pandas.DataFrame
        Row-aligned copy of the input (same index and columns) with generalized QI cells.
    class_ids : numpy.ndarray
        Equivalence class (partition) of every row, ``0 .. n_classes - 1``.
    class_sizes : numpy.ndarray
        Number of rows per class.
    ncp : float
        Global normalized certainty penalty, a fraction in ``[0, 1]``.
    column_ncp : dict
        NCP per quasi-identifier.
    models : list of PrivacyModel
        The privacy models every class satisfies.
    elapsed_s : float
        Wall-clock time of the whole call.
    """

    release: pd.DataFrame
    class_ids: np.ndarray
    class_sizes: np.ndarray
    ncp: float
    column_ncp: dict[str, float]
    models: list[PrivacyModel]
    qi: list[str]
    relaxed: bool = False
    elapsed_s: float = 0.0
    kinds: dict[str, str] = field(default_factory=dict)

    @property
    def n_classes(self) -> int:
        """Number of equivalence classes."""
        return int(self.class_sizes.size)

    def summary(self) -> dict[str, Any]:
        """JSON-able summary for reports."""
        return {
            "algorithm": "mondrian-relaxed" if self.relaxed else "mondrian",
            "models": [m.to_dict() for m in self.models],
            "qi": list(self.qi),
            "qi_kinds": dict(self.kinds),
            "n_classes": self.n_classes,
            "min_class": int(self.class_sizes.min()) if self.n_classes else 0,
            "mean_class": float(self.class_sizes.mean()) if self.n_classes else 0.0,
            "ncp": self.ncp,
            "column_ncp": dict(self.column_ncp),
            "elapsed_s": self.elapsed_s,
        }


def _check_models(models: Sequence[PrivacyModel]) -> tuple[int, list[PrivacyModel]]:
    """Split the models into k and the sensitive-column models Mondrian can evaluate."""
    k = 1
    extra: list[PrivacyModel] = []
    for m in models:
        if not isinstance(m, PrivacyModel):
            raise ConfigError(f"not a privacy model: {m!r}")
        if isinstance(m, KAnonymity):
            k = max(k, m.k)
        elif m.table_level or not m.needs <= {"sizes", "sensitive"}:
            raise ConfigError(f"Mondrian cannot enforce {m.describe()} (class-level models only)")
        else:
            extra.append(m)
    return k, extra


def _encode_all(df: pd.DataFrame, extra: Sequence[PrivacyModel]) -> dict[str, Any]:
    sens: dict[str, Any] = {}
    for m in extra:
        col = m.column
        if col is None or col not in df.columns:
            raise ConfigError(f"{m.describe()}: sensitive column {col!r} is not in the table")
        if col not in sens:
            h = getattr(m, "hierarchy", None)
            sens[col] = encode_sensitive(df[col], col, h)
    return sens


def _root_failures(df: pd.DataFrame, extra: Sequence[PrivacyModel], n: int) -> list[str]:
    """Models that the whole table, taken as one class, already breaks."""
    st = ClassStats.from_codes(np.zeros(n, dtype=np.int64), 1, sensitive=_encode_all(df, extra))
    return [m.describe() for m in extra if m.violating(st)[0]]


def _group_check(df: pd.DataFrame, extra: Sequence[PrivacyModel]) -> GroupCheck | None:
    if not extra:
        return None
    sens = _encode_all(df, extra)

    def check(rows: np.ndarray, gid: np.ndarray, ngroups: int) -> np.ndarray:
        st = ClassStats.from_codes(gid, ngroups, sensitive=sens, rows=rows)
        bad = np.zeros(ngroups, dtype=bool)
        for m in extra:
            bad |= m.violating(st)
        return ~bad

    return check


def mondrian_partition(
    df: pd.DataFrame,
    qi: Sequence[str],
    models: Sequence[PrivacyModel],
    *,
    hierarchies: Mapping[str, Any] | None = None,
    relaxed: bool = False,
) -> MondrianResult:
    """Run Mondrian with an explicit list of privacy models (the engine's entry point).

    Parameters
    ----------
    df : pandas.DataFrame
        The table; never modified.
    qi : sequence of str
        Quasi-identifiers.
    models : sequence of PrivacyModel
        ``KAnonymity`` and any class-level sensitive-column models (l-diversity variants,
        t-closeness).  A cut is made only when every part satisfies every model.
    hierarchies : mapping, optional
        Column -> :class:`veil.schema.Hierarchy` (or CSV path, or ``{value: [levels]}``) for
        categorical quasi-identifiers.  Categorical columns without one are cut on their sorted
        values and rendered as sets; numeric columns without one get intervals.
    relaxed : bool
        Relaxed Mondrian (records equal to the median may go to either side).

    Returns
    -------
    MondrianResult
    """
    t0 = time.perf_counter()
    if not isinstance(df, pd.DataFrame):
        raise InputError(f"Mondrian expects a pandas DataFrame, not {type(df).__name__}")
    qi = list(qi)
    if not qi:
        raise ConfigError("Mondrian needs at least one quasi-identifier")
    if len(set(qi)) != len(qi):
        raise ConfigError("a quasi-identifier is listed twice")
    absent = [c for c in qi if c not in df.columns]
    if absent:
        raise ConfigError(f"quasi-identifiers not in the table: {absent}")
    k, extra = _check_models(models)
    both = sorted({m.column for m in extra if m.column in qi})  # type: ignore[misc]
    if both:
        raise ConfigError(f"sensitive column(s) also declared quasi-identifiers: {both}")
    n = len(df)
    if n == 0:
        raise InputError("Mondrian got an empty table")
    if k > n:
        raise UnsatisfiableError(f"k={k} is larger than the table ({n} rows)")
    hierarchies = dict(hierarchies or {})
    dims, X = encode_qis(df, qi, hierarchies)
    check = _group_check(df, extra)
    if check is not None:
        failed = _root_failures(df, extra, n)
        if failed:
            raise UnsatisfiableError(
                "the whole table, as one class, does not satisfy: " + ", ".join(failed)
            )
    labels, n_classes = partition(X, dims, k, relaxed=relaxed, check=check)
    stats = class_stats(X, dims, labels, n_classes)
    cells = render(X, dims, labels, stats)
    release = df.copy()
    for name, arr in cells.items():
        release[name] = pd.Series(arr, index=df.index, dtype=object)
    col_ncp = stats.column_ncp()
    return MondrianResult(
        release=release,
        class_ids=labels,
        class_sizes=stats.sizes,
        ncp=stats.global_ncp(),
        column_ncp={d.name: float(v) for d, v in zip(dims, col_ncp)},
        models=[KAnonymity(k), *extra],
        qi=qi,
        relaxed=relaxed,
        elapsed_s=time.perf_counter() - t0,
        kinds={d.name: d.kind for d in dims},
    )


def sensitive_models(
    l: Any = None,  # noqa: E741
    t: Any = None,
    hierarchies: Mapping[str, Any] | None = None,
) -> list[PrivacyModel]:
    """Build l-diversity / t-closeness models from friendly specs.

    ``l`` is ``(column, l)`` or a mapping ``{"column", "l", "variant": distinct|entropy|
    recursive, "c"}`` (the policy file's form); ``t`` is ``(column, t)`` or ``{"column", "t",
    "distance": equal|ordered|hierarchical}``.
    """
    out: list[PrivacyModel] = []
    if l is not None:
        spec = _spec(l, "l")
        variant = str(spec.get("variant", "distinct"))
        col, value = spec["column"], spec["l"]
        if variant == "distinct":
            out.append(DistinctLDiversity(col, value))
        elif variant == "entropy":
            out.append(EntropyLDiversity(col, value))
        elif variant == "recursive":
            if "c" not in spec:
                raise ConfigError("recursive (c,l)-diversity needs c")
            out.append(RecursiveCLDiversity(col, value, spec["c"]))
        else:
            raise ConfigError(
                f"unknown l-diversity variant {variant!r}: distinct, entropy, recursive"
            )
    if t is not None:
        spec = _spec(t, "t")
        distance = str(spec.get("distance", "equal"))
        h = None
        if distance == "hierarchical":
            h = spec.get("hierarchy") or (hierarchies or {}).get(spec["column"])
            if h is not None and not hasattr(h, "level_map"):
                from veil.schema import Hierarchy  # noqa: PLC0415

                h = (
                    Hierarchy.from_file(h)
                    if not isinstance(h, Mapping)
                    else Hierarchy.from_mapping(h)
                )
        out.append(TCloseness(spec["column"], spec["t"], distance, h))
    return out


def _spec(value: Any, key: str) -> dict[str, Any]:
    if isinstance(value, Mapping):
        spec = dict(value)
    elif isinstance(value, Sequence) and not isinstance(value, str) and len(value) == 2:
        spec = {"column": value[0], key: value[1]}
    else:
        raise ConfigError(f"{key} must be (column, {key}) or a mapping with column and {key}")
    if "column" not in spec or key not in spec:
        raise ConfigError(f"{key} needs 'column' and '{key}'")
    return spec


def mondrian(
    df: pd.DataFrame,
    qi: Sequence[str],
    k: int,
    *,
    l: Any = None,  # noqa: E741
    t: Any = None,
    hierarchies: Mapping[str, Any] | None = None,
    relaxed: bool = False,
) -> MondrianResult:
    """Anonymize ``df`` with Mondrian multidimensional local recoding.

    Parameters
    ----------
    df : pandas.DataFrame
        The table (never modified).  Non-QI columns are kept unchanged and row-aligned.
    qi : sequence of str
        Quasi-identifiers.
    k : int
        Every class has at least ``k`` rows.
    l : tuple or mapping, optional
        l-diversity on a sensitive column: ``("disease", 3)`` or
        ``{"column": "disease", "l": 3, "variant": "entropy"}``.
    t : tuple or mapping, optional
        t-closeness: ``("disease", 0.2)`` or ``{"column": ..., "t": ..., "distance": ...}``.
    hierarchies : mapping, optional
        Generalization hierarchies of categorical QIs (``Hierarchy``, CSV path or mapping).
    relaxed : bool
        Relaxed instead of strict Mondrian.

    Returns
    -------
    MondrianResult
        ``.release`` is the anonymized table, ``.ncp`` the information loss.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"age": [21, 23, 35, 38, 52, 55], "zip": ["a", "b", "a", "b", "a", "b"],
    ...                    "pay": [1, 2, 3, 4, 5, 6]})
    >>> res = mondrian(df, ["age", "zip"], k=2)
    >>> res.release["age"].tolist()
    ['[21, 35]', '[21, 35]', '[21, 35]', '[38, 55]', '[38, 55]', '[38, 55]']
    >>> res.release["pay"].tolist()
    [1, 2, 3, 4, 5, 6]
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ConfigError(f"k must be an integer >= 1, got {k!r}")
    models: list[PrivacyModel] = [KAnonymity(int(k)), *sensitive_models(l, t, hierarchies)]
    hier = {c: h for c, h in (hierarchies or {}).items() if c in set(qi)}
    return mondrian_partition(df, qi, models, hierarchies=hier, relaxed=relaxed)


def partition_ncp(
    df: pd.DataFrame,
    qi: Sequence[str],
    class_ids: Any,
    *,
    hierarchies: Mapping[str, Any] | None = None,
    per_column: bool = False,
) -> float | dict[str, float]:
    """NCP of any partitioning of ``df`` into classes (e.g. another tool's Mondrian partitions).

    Each class is generalized as Mondrian would render it (numeric range, lowest common
    hierarchy node, or set of values) and scored with the NCP of Xu et al. (KDD 2006).

    Parameters
    ----------
    df : pandas.DataFrame
        The original table.
    qi : sequence of str
        Quasi-identifiers.
    class_ids : array-like
        Class label of every row (any hashable labels), row-aligned with ``df``.
    hierarchies : mapping, optional
        As for :func:`mondrian`.
    per_column : bool
        Return ``{column: ncp}`` instead of the global value.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"age": [20, 30, 40, 60]})
    >>> partition_ncp(df, ["age"], [0, 0, 1, 1])  # (10/40 + 20/40) / 2
    0.375
    """
    qi = list(qi)
    dims, X = encode_qis(df, qi, hierarchies)
    ids = np.asarray(class_ids)
    if ids.shape != (len(df),):
        raise InputError(f"class_ids has {ids.size} entries for a table of {len(df)} rows")
    labels, uniq = pd.factorize(pd.Series(ids), sort=False)
    if (labels < 0).any():
        raise InputError("class_ids has missing labels")
    stats = class_stats(X, dims, np.asarray(labels, dtype=np.int64), len(uniq))
    if per_column:
        return {d.name: float(v) for d, v in zip(dims, stats.column_ncp())}
    return stats.global_ncp()
