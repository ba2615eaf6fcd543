"""Re-identification risk: prosecutor, journalist and marketer models; uniqueness.

For a release whose equivalence classes (records sharing their quasi-identifier values) have
sample sizes ``f_j`` and, when a population table is known, population sizes ``F_j``:

* prosecutor risk (the attacker knows the person is in the release): ``1 / f_j`` per record;
* journalist risk (the attacker links from a population register): ``1 / F_j`` per record;
* marketer risk (the attacker re-identifies as many records as possible): the expected share of
  correct matches, ``J / n`` without a population table, ``(1/n) sum_j f_j / F_j`` with one;

each reported as highest, average and the share of records above a threshold (El Emam &
Dankar, JAMIA 2008; as in ARX).  Sample uniqueness is the share of records alone in their class;
population uniqueness is estimated with Zayatz's model (Zayatz 1991, as evaluated by Dankar et
al., BMC Med. Inform. Decis. Mak. 12:66, 2012) with the binomial approximation of the sampling
probabilities: ``P(population unique | sample unique) = f_1 / sum_i i f_i (1 - pi)^(i-1)``
where ``f_i`` is the number of sample classes of size ``i`` and ``pi`` the sampling fraction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from veil.anonymity._encode import group_columns
from veil.errors import ConfigError, InputError

__all__ = [
    "risk",
    "risk_summary",
    "class_size_histogram",
    "population_fraction",
    "qi_class_ids",
    "stack_population",
    "zayatz_uniqueness",
]

_BINS = [(1, 1), (2, 2), (3, 4), (5, 9), (10, 19), (20, 49), (50, 99), (100, None)]


def class_size_histogram(sizes: np.ndarray) -> list[dict[str, Any]]:
    """Number of classes and records per class-size bin (1, 2, 3-4, 5-9, ..., 100+)."""
    sizes = np.asarray(sizes, dtype=np.int64)
    sizes = sizes[sizes > 0]
    out = []
    for lo, hi in _BINS:
        sel = sizes >= lo if hi is None else (sizes >= lo) & (sizes <= hi)
        label = f"{lo}+" if hi is None else (str(lo) if lo == hi else f"{lo}-{hi}")
        out.append({"size": label, "classes": int(sel.sum()), "records": int(sizes[sel].sum())})
    return out


def zayatz_uniqueness(sizes: np.ndarray, sampling_fraction: float) -> float:
    """Estimated share of records that are unique in the population (Zayatz 1991).

    Examples
    --------
    >>> round(zayatz_uniqueness(np.array([1, 1, 2, 5]), 0.5), 4)
    0.1342
    """
    if not 0 < sampling_fraction <= 1:
        raise ConfigError(f"sampling fraction must be in (0, 1], got {sampling_fraction!r}")
    sizes = np.asarray(sizes, dtype=np.int64)
    sizes = sizes[sizes > 0]
    n = int(sizes.sum())
    if n == 0:
        return 0.0
    fi = np.bincount(sizes)
    i = np.arange(fi.shape[0], dtype=np.float64)
    denom = float(np.sum(i * fi * (1.0 - sampling_fraction) ** np.maximum(i - 1, 0)))
    f1 = float(fi[1]) if fi.shape[0] > 1 else 0.0
    if denom <= 0 or f1 == 0:
        return 0.0
    return f1 * (f1 / denom) / n


def risk_summary(
    sizes: np.ndarray,
    population_sizes: np.ndarray | None = None,
    *,
    threshold: float = 0.2,
    sampling_fraction: float | None = None,
) -> dict[str, Any]:
    """Risk measures from class sizes (and population class sizes), JSON-able.

    Examples
    --------
    >>> r = risk_summary(np.array([1, 2, 2, 5]))
    >>> r["prosecutor"]["highest"], r["prosecutor"]["average"], r["sample_uniqueness"]
    (1.0, 0.4, 0.1)
    """
    if not 0 < threshold <= 1:
        raise ConfigError(f"risk threshold must be in (0, 1], got {threshold!r}")
    sizes = np.asarray(sizes, dtype=np.int64)
    nz = sizes > 0
    sizes = sizes[nz]
    n = int(sizes.sum())
    out: dict[str, Any] = {"records": n, "classes": int(sizes.shape[0]), "threshold": threshold}
    if n == 0:
        out.update(prosecutor=None, journalist=None, marketer=None, sample_uniqueness=0.0)
        out["population_uniqueness"] = None
        out["class_sizes"] = class_size_histogram(sizes)
        return out
    r = 1.0 / sizes
    out["prosecutor"] = {
        "highest": float(r.max()),
        "average": sizes.shape[0] / n,
        "records_at_risk": float(sizes[r > threshold].sum()) / n,
    }
    if population_sizes is not None:
        pop = np.asarray(population_sizes, dtype=np.float64)[nz]
        pop = np.maximum(pop, sizes)  # a class cannot be larger in the sample than outside
        rj = 1.0 / pop
        out["journalist"] = {
            "highest": float(rj.max()),
            "average": float((sizes * rj).sum()) / n,
            "records_at_risk": float(sizes[rj > threshold].sum()) / n,
        }
        out["marketer"] = float((sizes * rj).sum()) / n
    else:
        out["journalist"] = None
        out["marketer"] = sizes.shape[0] / n
    out["sample_uniqueness"] = float((sizes == 1).sum()) / n
    out["population_uniqueness"] = (
        None if sampling_fraction is None else zayatz_uniqueness(sizes, sampling_fraction)
    )
    out["class_sizes"] = class_size_histogram(sizes)
    return out


def _as_text(s: pd.Series) -> pd.Series:
    """``s`` as text (``None`` where missing); integral floats are written as integers.

    A column with one missing cell is read as float (``30.0``) and one with a stray word as
    text (``"30"``): written this way, both match the integer ``30`` of the other table.
    """
    values = s.to_numpy(dtype=object, na_value=None)
    missing = s.isna().to_numpy()
    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        if missing[i]:
            out[i] = None
        elif isinstance(v, (float, np.floating)) and float(v).is_integer():
            out[i] = str(int(v))
        else:
            out[i] = str(v)
    return pd.Series(out, dtype=object)


def stack_population(df: pd.DataFrame, population: pd.DataFrame, qi: Sequence[str]) -> pd.DataFrame:
    """The QI columns of ``df`` then of ``population`` in one frame, values made comparable.

    A column of the same dtype in both tables, or numeric in both, is stacked as it is (``30``
    and ``30.0`` are equal); otherwise both sides are compared as text (:func:`_as_text`), so a
    population read with a missing or stray value in a column still matches the sample.

    Parameters
    ----------
    df, population
        The release and the population table (any index).
    qi
        Quasi-identifier columns, present in both.

    Returns
    -------
    pandas.DataFrame
        ``len(df) + len(population)`` rows with a fresh ``RangeIndex``.
    """
    miss = [c for c in qi if c not in population.columns]
    if miss:
        raise InputError(f"population table lacks quasi-identifier column(s) {miss}")
    cols = {}
    for c in qi:
        a, b = df[c].reset_index(drop=True), population[c].reset_index(drop=True)
        same = a.dtype == b.dtype
        numeric = all(
            pd.api.types.is_numeric_dtype(x) and not pd.api.types.is_bool_dtype(x) for x in (a, b)
        )
        if not (same or numeric):
            a, b = _as_text(a), _as_text(b)
        cols[c] = pd.concat([a, b], ignore_index=True)
    return pd.DataFrame(cols)


def population_fraction(n: int, n_population: int) -> float | None:
    """Sampling fraction ``n / N`` of ``n`` records drawn from a population table of ``N``.

    ``None`` when ``N < n``: such a table does not cover the sample, so it gives no fraction.
    """
    return n / n_population if n_population >= n else None


def _check_qi(df: pd.DataFrame, qi: Sequence[str]) -> None:
    """Refuse an empty ``qi`` or one naming a column ``df`` lacks."""
    missing = [c for c in qi if c not in df.columns]
    if missing:
        raise InputError(f"column(s) not in the table: {missing}")
    if not qi:
        raise ConfigError("at least one quasi-identifier is needed")


def qi_class_ids(df: pd.DataFrame, qi: Sequence[str]) -> tuple[np.ndarray, int]:
    """Equivalence class id of each row (by position; any index) over the columns ``qi``."""
    _check_qi(df, qi)
    grouping = group_columns([df[c] for c in qi])  # the grouping :func:`check` uses
    return grouping.ids(), grouping.n_classes


def risk(
    df: pd.DataFrame,
    qi: Sequence[str],
    *,
    population: pd.DataFrame | None = None,
    threshold: float = 0.2,
    sampling_fraction: float | None = None,
) -> dict[str, Any]:
    """Re-identification risk of ``df`` with quasi-identifiers ``qi``.

    Parameters
    ----------
    df
        The release (any index).
    qi
        Quasi-identifier columns.
    population
        Optional population table with the same QI columns (journalist/marketer risk).
    threshold
        Risk above which a record counts as "at risk" (0.2 = classes smaller than 5).
    sampling_fraction
        ``n / N`` for the population-uniqueness estimate (derived from ``population`` when
        given; None and no population: no estimate).

    Examples
    --------
    >>> df = pd.DataFrame({"a": [1, 1, 2], "b": ["x", "x", "y"]})
    >>> risk(df, ["a", "b"])["prosecutor"]["highest"]
    1.0
    """
    if not isinstance(df, pd.DataFrame):
        raise InputError("risk expects a pandas DataFrame")
    qi = [qi] if isinstance(qi, str) else list(qi)
    pop = None
    if len(df) == 0:  # no record, no risk (the class encoders need at least one value)
        _check_qi(df, qi)
        return risk_summary(np.zeros(0, dtype=np.int64), threshold=threshold)
    if population is None:
        ids, g = qi_class_ids(df, qi)
        sizes = np.bincount(ids, minlength=g)
    else:
        both = stack_population(df, population, qi)
        ids, g = qi_class_ids(both, qi)
        n = len(df)
        sizes = np.bincount(ids[:n], minlength=g)
        pop = np.bincount(ids[n:], minlength=g)[sizes > 0]
        sizes = sizes[sizes > 0]
        if sampling_fraction is None:
            sampling_fraction = population_fraction(n, len(population))
    return risk_summary(sizes, pop, threshold=threshold, sampling_fraction=sampling_fraction)
