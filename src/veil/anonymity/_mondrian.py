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
from typing import Any

import numpy as np
import pandas as pd

from veil.anonymity._anonymize import original_risk
from veil.anonymity._config import AnonymizationConfig, l_model, t_model
from veil.anonymity._lattice import combine_keys
from veil.anonymity._models import KAnonymity, PrivacyModel
from veil.anonymity._mondrian_core import GroupCheck, partition
from veil.anonymity._mondrian_encode import encode_qis
from veil.anonymity._mondrian_render import class_stats, render
from veil.anonymity._objectives import size_utilities
from veil.anonymity._result import AnonymizationResult
from veil.anonymity._risk import risk_summary
from veil.anonymity._stats import ClassStats, SensitiveColumn, group_keys
from veil.errors import ConfigError, InputError, UnsatisfiableError
from veil.schema._hierarchy import factorize_typed

__all__ = [
    "mondrian",
    "mondrian_anonymize",
    "original_class_sizes",
    "partition_ncp",
    "sensitive_models",
]


def original_class_sizes(X: np.ndarray) -> np.ndarray:
    """Sizes of the equivalence classes of the ungeneralized QI codes ``X`` (``n x d``)."""
    cols = [X[:, j].astype(np.int64) for j in range(X.shape[1])]
    cards = [int(c.max()) + 1 for c in cols]
    key, space = combine_keys(cols, cards)
    ids, g = group_keys(key, space)
    return np.bincount(ids, minlength=g)


def _split_models(models: Sequence[PrivacyModel]) -> tuple[int, list[PrivacyModel]]:
    """Split the models into k and the sensitive-column models Mondrian can evaluate."""
    k = 1
    extra: list[PrivacyModel] = []
    for m in models:
        if isinstance(m, KAnonymity):
            k = max(k, m.k)
        elif m.table_level or not m.needs <= {"sizes", "sensitive"}:
            raise ConfigError(
                f"Mondrian cannot enforce {m.describe()}: it supports k-anonymity, "
                "l-diversity and t-closeness"
            )
        else:
            extra.append(m)
    return k, extra


def _group_check(
    extra: Sequence[PrivacyModel], sens: Mapping[str, SensitiveColumn]
) -> GroupCheck | None:
    if not extra:
        return None

    def check(rows: np.ndarray, gid: np.ndarray, ngroups: int) -> np.ndarray:
        st = ClassStats.from_codes(gid, ngroups, sensitive=sens, rows=rows)
        bad = np.zeros(ngroups, dtype=bool)
        for m in extra:
            bad |= m.violating(st)
        return ~bad

    return check


def _mode(config: AnonymizationConfig) -> bool:
    opts = config.options or {}
    mode = str(opts.get("mode", "relaxed" if opts.get("relaxed") else "strict")).lower()
    if mode not in ("strict", "relaxed"):
        raise ConfigError(f"Mondrian mode must be 'strict' or 'relaxed', got {mode!r}")
    return mode == "relaxed"


def _qi_hierarchies(df: pd.DataFrame, config: AnonymizationConfig) -> dict[str, Any]:
    """Hierarchies Mondrian uses: numeric columns get intervals unless asked otherwise."""
    use_numeric = bool((config.options or {}).get("numeric_hierarchies", False))
    out: dict[str, Any] = {}
    for c in config.qi_names:
        h = config.hierarchy(c)
        if h is None:
            continue
        s = df[c]
        numeric = pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)
        if use_numeric or not numeric:
            out[c] = h
    return out


def mondrian_anonymize(df: pd.DataFrame, config: AnonymizationConfig) -> AnonymizationResult:
    """Mondrian multidimensional local recoding for a configuration (``algorithm="mondrian"``).

    A partition is cut on the quasi-identifier with the widest normalized range (then the next
    widest, ...) as long as every part satisfies every model of ``config``: k-anonymity,
    l-diversity (distinct, entropy, recursive) and t-closeness (equal, ordered, hierarchical).

    Parameters
    ----------
    df : pandas.DataFrame
        The table; never modified.
    config : AnonymizationConfig
        Quasi-identifiers with optional hierarchies (categorical columns without one are cut on
        their sorted values and published as sets; numeric columns get ``[lo, hi]`` intervals
        even when a hierarchy is given, unless ``options={"numeric_hierarchies": True}``),
        models, and ``options={"mode": "strict" | "relaxed"}``.  Mondrian needs no
        suppression: the suppression limit is not used.

    Returns
    -------
    AnonymizationResult
        ``data``: row-aligned release (same index and columns) with generalized QI cells;
        ``partitions``: class of every row; ``utility``: ``ncp``, ``column_ncp``, ``dm``,
        ``aecs``, ``cavg``; ``risk_before`` / ``risk_after``: re-identification risk of the
        original QI classes and of the Mondrian classes (classes whose published cells happen
        to coincide are counted separately, so the risk after is an upper bound);
        ``extra``: class sizes and how each QI was treated.

    Raises
    ------
    UnsatisfiableError
        When the whole table, taken as one class, already breaks a model.

    Examples
    --------
    >>> import pandas as pd
    >>> from veil.anonymity import AnonymizationConfig, DistinctLDiversity
    >>> df = pd.DataFrame({"age": [21, 23, 35, 38, 52, 55, 60, 61],
    ...                    "dx": ["a", "b", "a", "b", "a", "b", "a", "b"]})
    >>> cfg = AnonymizationConfig(["age"], k=2, models=[DistinctLDiversity("dx", 2)],
    ...                           algorithm="mondrian")
    >>> res = mondrian_anonymize(df, cfg)
    >>> res.data["age"].tolist()
    ['[21, 23]', '[21, 23]', '[35, 38]', '[35, 38]', '[52, 55]', '[52, 55]', '[60, 61]', '[60, 61]']
    >>> round(res.utility["ncp"], 3)
    0.056
    """
    t0 = time.perf_counter()
    if not isinstance(config, AnonymizationConfig):
        raise ConfigError(f"expected an AnonymizationConfig, not {type(config).__name__}")
    config.validate(df)
    relaxed = _mode(config)
    qi = config.qi_names
    n = len(df)
    k, extra = _split_models(config.all_models())
    hier = _qi_hierarchies(df, config)
    dims, X = encode_qis(df, qi, hier)
    sens = config.encode_sensitive(df) if extra else {}
    if extra:
        whole = ClassStats.from_codes(np.zeros(n, dtype=np.int64), 1, sensitive=sens)
        failed = [m.describe() for m in extra if m.violating(whole)[0]]
        if failed:
            raise UnsatisfiableError(
                "the whole table, taken as one class, does not satisfy: " + ", ".join(failed)
            )
    members: list[np.ndarray] = []
    labels, n_classes = partition(
        X, dims, k, relaxed=relaxed, check=_group_check(extra, sens), members=members
    )
    elapsed = time.perf_counter() - t0
    stats = class_stats(X, dims, labels, n_classes, members)
    del members
    cells = render(X, dims, labels, stats)
    release = df.copy()
    for name, arr in cells.items():
        release[name] = pd.Series(arr, index=df.index, dtype=object)
    sizes = stats.sizes
    ncp = stats.global_ncp()

    def size_metrics(class_sizes: np.ndarray) -> dict[str, float]:
        su = size_utilities(class_sizes)
        return {"dm": su["dm"], "aecs": su["aecs"], "cavg": su["aecs"] / k}

    utility = {
        "ncp": ncp,
        "column_ncp": {d.name: float(v) for d, v in zip(dims, stats.column_ncp())},
        **size_metrics(sizes),
    }
    sf = config.sampling_fraction_for(n)  # no k-map in Mondrian: no population sizes
    before_sizes = original_class_sizes(X)
    risk_before = original_risk(df, config)  # grouped as check() groups the original
    utility_before = {  # the original table taken as a release
        "ncp": 0.0,
        "column_ncp": {d.name: 0.0 for d in dims},
        **size_metrics(before_sizes),
    }
    risk_after = risk_summary(sizes, sampling_fraction=sf)
    extra_info = {
        "mondrian_mode": "relaxed" if relaxed else "strict",
        "qi_kinds": {d.name: d.kind for d in dims},
        "class_sizes": {"min": int(sizes.min()), "max": int(sizes.max()), "mean": n / n_classes},
        "total_s": time.perf_counter() - t0,
    }
    return AnonymizationResult(
        data=release,
        config=config,
        algorithm="mondrian",
        risk_before=risk_before,
        risk_after=risk_after,
        suppressed=np.zeros(n, dtype=bool),
        partitions=labels,
        objective="loss",
        objective_value=ncp,
        utility=utility,
        utility_before=utility_before,
        elapsed=elapsed,
        extra=extra_info,
    )


def sensitive_models(
    l: Any = None,  # noqa: E741
    t: Any = None,
    hierarchies: Mapping[str, Any] | None = None,
) -> list[PrivacyModel]:
    """Build l-diversity / t-closeness models from friendly specs.

    ``l`` is ``(column, l)`` or a mapping ``{"column", "l", "variant": distinct|entropy|
    recursive, "c"}`` (the policy file's form); ``t`` is ``(column, t)`` or ``{"column", "t",
    "distance": equal|ordered|hierarchical, "hierarchy"}``.

    Examples
    --------
    >>> [m.describe() for m in sensitive_models(l=("disease", 2), t=("disease", 0.3))]
    ['distinct-l-diversity(column=disease, l=2)', 't-closeness(column=disease, t=0.3, distance=equal)']
    """
    out: list[PrivacyModel] = []
    if l is not None:
        spec = _spec(l, "l")
        out.append(
            l_model(spec["column"], spec["l"], spec.get("variant", "distinct"), spec.get("c"))
        )
    if t is not None:
        spec = _spec(t, "t")
        distance = str(spec.get("distance", "equal"))
        h = spec.get("hierarchy")
        if h is None and distance == "hierarchical":
            h = (hierarchies or {}).get(spec["column"])
        out.append(t_model(spec["column"], spec["t"], distance, h))
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
) -> AnonymizationResult:
    """Anonymize ``df`` with Mondrian multidimensional local recoding (LeFevre et al. 2006).

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
        Generalization hierarchies of categorical QIs (``Hierarchy``, file path, mapping or
        frame); hierarchies of other columns are ignored.  Categorical QIs without one are
        published as sets of values; numeric QIs always as intervals.
    relaxed : bool
        Relaxed instead of strict Mondrian.

    Returns
    -------
    AnonymizationResult
        ``.data`` is the release, ``.partitions`` the class of each row and
        ``.utility["ncp"]`` the normalized certainty penalty (Xu et al. 2006).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"age": [21, 23, 35, 38, 52, 55], "zip": ["a", "b", "a", "b", "a", "b"],
    ...                    "pay": [1, 2, 3, 4, 5, 6]})
    >>> res = mondrian(df, ["age", "zip"], k=2)
    >>> res.data["age"].tolist()
    ['[21, 35]', '[21, 35]', '[21, 35]', '[38, 55]', '[38, 55]', '[38, 55]']
    >>> res.data["pay"].tolist()
    [1, 2, 3, 4, 5, 6]
    """
    if isinstance(qi, str):
        qi = [qi]
    qi = list(qi)
    if not isinstance(df, pd.DataFrame):
        raise InputError(f"Mondrian expects a pandas DataFrame, not {type(df).__name__}")
    if len(set(qi)) != len(qi):
        raise ConfigError("a quasi-identifier is listed twice")
    hier = dict(hierarchies or {})
    models = sensitive_models(l, t, hier)
    config = AnonymizationConfig(
        {c: hier.get(c) for c in qi},
        models=models,
        k=k,
        algorithm="mondrian",
        options={"mode": "relaxed" if relaxed else "strict"},
    )
    return mondrian_anonymize(df, config)


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
    labels, uniq = factorize_typed(pd.Series(ids))  # labels True and 1: two classes
    if (labels < 0).any():
        raise InputError("class_ids has missing labels")
    stats = class_stats(X, dims, np.asarray(labels, dtype=np.int64), len(uniq))
    if per_column:
        return {d.name: float(v) for d, v in zip(dims, stats.column_ncp())}
    return stats.global_ncp()
