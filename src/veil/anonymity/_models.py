"""Privacy models: composable objects evaluated on all equivalence classes at once.

Design note (for engine and algorithm authors)
----------------------------------------------
* A search algorithm (lattice, Mondrian, MDAV, ...) assigns every record an integer class id
  ``0..n_classes-1`` and builds :class:`~veil.anonymity._stats.ClassStats` in one pass::

      sens = {c: encode_sensitive(df[c], c, hierarchy_or_None) for c in config.sensitive}
      stats = ClassStats.from_codes(class_ids, n_classes, sensitive=sens, rows=row_positions)

  ``sensitive`` columns are encoded once for the *whole* table (their ``global_freq`` is the
  t-closeness reference); ``rows`` says which table rows ``class_ids`` refers to, so a
  candidate split of a partition is checked with ``class_ids`` = 0/1 for its two halves.
  ``weights`` lets a caller pass distinct tuples with multiplicities instead of rows.
  :meth:`AnonymizationConfig.encode_sensitive` does the encoding for a config.
* Every model declares ``needs`` (``"sizes"``, ``"sensitive"``, ``"population"``),
  ``monotone`` (generalization cannot break it: if it holds, it holds for every coarser
  partition, without suppression) and ``monotone_with_suppression`` (the set of records in
  violating classes only shrinks under generalization, so "at most s records suppressed" is
  monotone too).  Only monotone models allow predictive tagging in the lattice search.
* Class-level models implement ``violating(stats) -> bool array`` (one entry per class).
  Table-level models (``table_level = True``, e.g. average risk) implement
  ``holds(stats, keep)`` where ``keep`` marks the classes that are not suppressed.
* :func:`evaluate` combines any list of models with a record-suppression budget: the classes
  violating any class-level model are suppressed; the result holds when at most
  ``max_suppressed`` records are suppressed and every table-level model holds on the rest.

References
----------
L. Sweeney, "k-anonymity: a model for protecting privacy", IJUFKS 10(5), 2002.
A. Machanavajjhala et al., "l-diversity: privacy beyond k-anonymity", ACM TKDD 1(1), 2007.
N. Li, T. Li, S. Venkatasubramanian, "t-closeness: privacy beyond k-anonymity and
l-diversity", ICDE 2007 (EMD with equal, ordered and hierarchical ground distances).
K. El Emam, F. Dankar, "Protecting privacy using k-anonymity", JAMIA 15(5), 2008 (k-map,
average risk).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from veil._checks import positive_int
from veil.anonymity._exact import MARGIN, entropy_border, r1_below, threshold
from veil.anonymity._stats import ClassStats, SensitiveStats
from veil.errors import ConfigError

__all__ = [
    "PrivacyModel",
    "KAnonymity",
    "DistinctLDiversity",
    "EntropyLDiversity",
    "RecursiveCLDiversity",
    "AverageRisk",
    "KMap",
    "Evaluation",
    "evaluate",
]


def own_methods(model: PrivacyModel, base: type, *names: str) -> bool:
    """Whether ``model``'s class keeps ``base``'s own ``names`` (no subclass overrides them)."""
    return all(getattr(type(model), n) is getattr(base, n) for n in names)


class PrivacyModel(ABC):
    """Base class of the privacy models (see the module design note).

    A subclass names itself, returns its parameters and either flags violating classes
    (``violating``) or, with ``table_level = True``, decides for the whole table (``holds``);
    it can then be checked and enforced like the built-in models.

    Examples
    --------
    A made-up model that caps class sizes:

    >>> import pandas as pd
    >>> from veil.anonymity import check
    >>> @dataclass(repr=False)
    ... class MaxClassSize(PrivacyModel):
    ...     m: int
    ...     name: ClassVar[str] = "max-class-size"
    ...     column: ClassVar[None] = None
    ...     monotone: ClassVar[bool] = False  # coarser classes can break it
    ...
    ...     def violating(self, stats: ClassStats) -> np.ndarray:
    ...         return stats.sizes > self.m
    ...
    ...     def params(self) -> dict[str, Any]:
    ...         return {"m": self.m}
    >>> df = pd.DataFrame({"zip": ["1", "1", "1", "2"]})
    >>> check(df, "zip", models=[MaxClassSize(2)]).models[0]["violating_records"]
    3
    """

    name: ClassVar[str]
    needs: ClassVar[frozenset[str]] = frozenset({"sizes"})
    monotone: ClassVar[bool] = True
    monotone_with_suppression: ClassVar[bool] = False
    table_level: ClassVar[bool] = False
    #: Sensitive column the model is about (subclasses define it; None for QI-only models).
    column: Any

    def violating(self, stats: ClassStats) -> np.ndarray:
        """Boolean array: True for the classes that break the model."""
        raise NotImplementedError  # pragma: no cover

    def achieved(self, stats: ClassStats) -> float | None:
        """The best parameter the classes achieve (e.g. smallest class size), if defined."""
        return None

    def assess(self, stats: ClassStats) -> tuple[np.ndarray, float | None]:
        """:meth:`violating` and :meth:`achieved` together (models that derive both from one
        per-class figure, such as a distance or an entropy, compute it once)."""
        return self.violating(stats), self.achieved(stats)

    def holds(self, stats: ClassStats, keep: np.ndarray | None = None) -> bool:
        """Whether the model holds on the kept classes (all classes when ``keep`` is None)."""
        v = self.violating(stats)
        return not bool(v.any() if keep is None else (v & keep).any())

    @abstractmethod
    def params(self) -> dict[str, Any]:
        """Parameters, JSON-able."""

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.name, **self.params()}

    def describe(self) -> str:
        p = ", ".join(f"{k}={v}" for k, v in self.params().items())
        return f"{self.name}({p})"

    def __repr__(self) -> str:
        return self.describe()

    def _sens(self, stats: ClassStats) -> SensitiveStats:
        try:
            return stats.sensitive[self.column]  # type: ignore[index]
        except KeyError:
            raise ConfigError(
                f"{self.name} needs sensitive column {self.column!r} in the class statistics"
            ) from None

    def _read(self, stats: ClassStats) -> SensitiveStats:
        """Sensitive counts over the values a reader may see (:meth:`SensitiveStats.as_read`)."""
        return self._sens(stats).as_read()


@dataclass(repr=False)
class KAnonymity(PrivacyModel):
    """Every class has at least ``k`` records (Sweeney 2002).

    Examples
    --------
    >>> KAnonymity(2).violating(ClassStats(np.array([1, 2, 3]))).tolist()
    [True, False, False]
    """

    k: int
    name: ClassVar[str] = "k-anonymity"
    column: ClassVar[None] = None
    monotone_with_suppression: ClassVar[bool] = True

    def __post_init__(self) -> None:
        self.k = positive_int(self.k, "k")

    def violating(self, stats: ClassStats) -> np.ndarray:
        return stats.sizes < self.k

    def achieved(self, stats: ClassStats) -> float | None:
        return float(stats.sizes.min()) if stats.n_classes else None

    def params(self) -> dict[str, Any]:
        return {"k": self.k}


@dataclass(repr=False)
class DistinctLDiversity(PrivacyModel):
    """Every class has at least ``l`` distinct sensitive values (Machanavajjhala et al. 2007).

    References
    ----------
    A. Machanavajjhala, D. Kifer, J. Gehrke, M. Venkitasubramaniam, "l-diversity: privacy
    beyond k-anonymity", ACM TKDD 1(1), 2007.

    Examples
    --------
    >>> import pandas as pd
    >>> from veil.anonymity import check, encode_sensitive
    >>> disease = ["flu", "flu", "cold", "flu", "hiv", "cold"]
    >>> df = pd.DataFrame({"zip": list("AAABBB"), "disease": disease})
    >>> r = check(df, "zip", models=[DistinctLDiversity("disease", 3)])
    >>> r.holds, r.models[0]["achieved"], r.models[0]["violating_classes"]
    (False, 2.0, 1)

    On class statistics (class 0 = zip A, class 1 = zip B):

    >>> stats = ClassStats.from_codes(
    ...     np.array([0, 0, 0, 1, 1, 1]), sensitive={"disease": encode_sensitive(df["disease"])}
    ... )
    >>> DistinctLDiversity("disease", 3).violating(stats).tolist()
    [True, False]
    """

    column: str
    l: int  # noqa: E741
    name: ClassVar[str] = "distinct-l-diversity"
    needs: ClassVar[frozenset[str]] = frozenset({"sizes", "sensitive"})
    monotone_with_suppression: ClassVar[bool] = True

    def __post_init__(self) -> None:
        self.l = positive_int(self.l, "l")

    def violating(self, stats: ClassStats) -> np.ndarray:
        return self._read(stats).distinct(stats.n_classes) < self.l

    def achieved(self, stats: ClassStats) -> float | None:
        d = self._read(stats).distinct(stats.n_classes)
        return float(d.min()) if d.size else None

    def params(self) -> dict[str, Any]:
        return {"column": self.column, "l": self.l}


def _entropy(ss: SensitiveStats, sizes: np.ndarray) -> np.ndarray:
    p = ss.cnt / sizes[ss.cls]
    return np.bincount(ss.cls, weights=-p * np.log(p), minlength=sizes.shape[0])


@dataclass(repr=False)
class EntropyLDiversity(PrivacyModel):
    """The entropy of the sensitive values of every class is at least ``log(l)``.

    ``achieved`` is ``exp`` of the smallest class entropy: the "effective number" of sensitive
    values of the least diverse class.

    References
    ----------
    A. Machanavajjhala, D. Kifer, J. Gehrke, M. Venkitasubramaniam, "l-diversity: privacy
    beyond k-anonymity", ACM TKDD 1(1), 2007.

    Examples
    --------
    >>> import pandas as pd
    >>> from veil.anonymity import check, encode_sensitive
    >>> disease = ["flu", "flu", "cold", "flu", "hiv", "cold"]
    >>> df = pd.DataFrame({"zip": list("AAABBB"), "disease": disease})
    >>> stats = ClassStats.from_codes(
    ...     np.array([0, 0, 0, 1, 1, 1]), sensitive={"disease": encode_sensitive(df["disease"])}
    ... )
    >>> model = EntropyLDiversity("disease", 2)
    >>> model.violating(stats).tolist()  # zip A: flu, flu, cold
    [True, False]
    >>> round(model.achieved(stats), 3)
    1.89
    >>> check(df, "zip", models=[EntropyLDiversity("disease", 1.8)]).holds
    True
    """

    column: str
    l: float  # noqa: E741
    name: ClassVar[str] = "entropy-l-diversity"
    needs: ClassVar[frozenset[str]] = frozenset({"sizes", "sensitive"})

    def __post_init__(self) -> None:
        if not isinstance(self.l, (int, float, np.number)) or not self.l >= 1:
            raise ConfigError(f"entropy l must be a number >= 1, got {self.l!r}")
        self.l = float(self.l)

    def violating(self, stats: ClassStats) -> np.ndarray:
        return self._assess(stats)[0]

    def achieved(self, stats: ClassStats) -> float | None:
        h = _entropy(self._read(stats), stats.sizes)
        return float(np.exp(h.min())) if h.size else None

    def assess(self, stats: ClassStats) -> tuple[np.ndarray, float | None]:
        if own_methods(self, EntropyLDiversity, "violating", "achieved"):
            return self._assess(stats)
        return super().assess(stats)  # a subclass changed one of them: ask each

    def _assess(self, stats: ClassStats) -> tuple[np.ndarray, float | None]:
        ss = self._read(stats)
        h = _entropy(ss, stats.sizes)
        lg = math.log(self.l)
        viol = h < lg - MARGIN
        border = ~viol & (h < lg + MARGIN)  # within rounding of log(l): decided exactly
        if border.any():
            viol |= entropy_border(ss, stats.sizes, border, self.l)
        return viol, float(np.exp(h.min())) if h.size else None

    def params(self) -> dict[str, Any]:
        return {"column": self.column, "l": self.l}


@dataclass(repr=False)
class RecursiveCLDiversity(PrivacyModel):
    """Recursive (c,l)-diversity: ``r_1 < c (r_l + ... + r_m)`` with ``r`` sorted counts.

    ``r_1 >= r_2 >= ... >= r_m`` are the counts of the sensitive values of a class: the most
    frequent value must not dominate the ``m - l + 1`` least frequent ones together.

    References
    ----------
    A. Machanavajjhala, D. Kifer, J. Gehrke, M. Venkitasubramaniam, "l-diversity: privacy
    beyond k-anonymity", ACM TKDD 1(1), 2007.

    Examples
    --------
    >>> import pandas as pd
    >>> from veil.anonymity import check, encode_sensitive
    >>> disease = ["flu", "flu", "cold", "flu", "hiv", "cold"]
    >>> df = pd.DataFrame({"zip": list("AAABBB"), "disease": disease})
    >>> stats = ClassStats.from_codes(
    ...     np.array([0, 0, 0, 1, 1, 1]), sensitive={"disease": encode_sensitive(df["disease"])}
    ... )
    >>> RecursiveCLDiversity("disease", l=2, c=1).violating(stats).tolist()  # A: 2 < 1 * 1?
    [True, False]
    >>> check(df, "zip", models=[RecursiveCLDiversity("disease", l=2, c=3)]).holds
    True
    """

    column: str
    l: int  # noqa: E741
    c: float
    name: ClassVar[str] = "recursive-(c,l)-diversity"
    needs: ClassVar[frozenset[str]] = frozenset({"sizes", "sensitive"})

    def __post_init__(self) -> None:
        self.l = positive_int(self.l, "l")
        if not isinstance(self.c, (int, float, np.number)) or not self.c > 0:
            raise ConfigError(f"c must be a number > 0, got {self.c!r}")
        self.c = float(self.c)

    def violating(self, stats: ClassStats) -> np.ndarray:
        ss = self._read(stats)
        n = stats.n_classes
        order = np.lexsort((-ss.cnt, ss.cls))
        cls, cnt = ss.cls[order], ss.cnt[order]
        start = np.searchsorted(cls, np.arange(n))
        rank = np.arange(cls.shape[0]) - start[cls]
        r1 = np.zeros(n, dtype=np.int64)
        first = rank == 0
        r1[cls[first]] = cnt[first]
        tail = np.bincount(cls, weights=np.where(rank >= self.l - 1, cnt, 0), minlength=n)
        return ~r1_below(r1, np.rint(tail).astype(np.int64), self.c)

    def params(self) -> dict[str, Any]:
        return {"column": self.column, "l": self.l, "c": self.c}


@dataclass(repr=False)
class AverageRisk(PrivacyModel):
    """Average prosecutor re-identification risk (classes / records) at most ``threshold``.

    A table-level model: small classes are allowed as long as the average holds.

    References
    ----------
    K. El Emam, F. K. Dankar, "Protecting privacy using k-anonymity", JAMIA 15(5), 2008.

    Examples
    --------
    >>> stats = ClassStats(np.array([1, 3, 4]))  # 3 classes, 8 records
    >>> AverageRisk(0.4).risk(stats)
    0.375
    >>> AverageRisk(0.3).holds(stats), AverageRisk(0.4).holds(stats)
    (False, True)
    >>> ev = evaluate([KAnonymity(2), AverageRisk(0.3)], stats, max_suppressed=1)
    >>> ev.holds, ev.n_suppressed  # without the singleton: 2 classes / 7 records
    (True, 1)
    """

    threshold: float
    name: ClassVar[str] = "average-risk"
    column: ClassVar[None] = None
    table_level: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if not isinstance(self.threshold, (int, float, np.number)) or not 0 < self.threshold <= 1:
            raise ConfigError(f"average risk threshold must be in (0, 1], got {self.threshold!r}")
        self.threshold = float(self.threshold)

    def violating(self, stats: ClassStats) -> np.ndarray:
        return np.zeros(stats.n_classes, dtype=bool)

    def risk(self, stats: ClassStats, keep: np.ndarray | None = None) -> float:
        sizes = stats.sizes if keep is None else stats.sizes[keep]
        n = int(sizes.sum())
        return float(np.count_nonzero(sizes)) / n if n else 0.0

    def holds(self, stats: ClassStats, keep: np.ndarray | None = None) -> bool:
        """Whether ``classes / records <= threshold`` exactly, the threshold as written.

        Compared in integers (``classes * b <= records * a`` for ``threshold = a / b``,
        :func:`~veil.anonymity._exact.threshold`: ``0.3`` is 3/10): a tolerance of ``1e-12``
        accepted a table whose average risk was above the threshold by less than it.
        """
        sizes = stats.sizes if keep is None else stats.sizes[keep]
        n = int(sizes.sum())
        if not n:
            return True
        target = threshold(self.threshold)
        return int(np.count_nonzero(sizes)) * target.denominator <= n * target.numerator

    def achieved(self, stats: ClassStats) -> float | None:
        return self.risk(stats)

    def params(self) -> dict[str, Any]:
        return {"threshold": self.threshold}


@dataclass(repr=False)
class KMap(PrivacyModel):
    """Every class matches at least ``k`` people of a population table (El Emam & Dankar 2008).

    ``population`` is a DataFrame with (at least) the quasi-identifier columns, one row per
    person; the engine computes the population size of each class.

    References
    ----------
    K. El Emam, F. K. Dankar, "Protecting privacy using k-anonymity", JAMIA 15(5), 2008.

    Examples
    --------
    Each released ZIP prefix must match at least 5 people of the population:

    >>> import pandas as pd
    >>> from veil.anonymity import AnonymizationConfig, Hierarchy, anonymize, check
    >>> zips = ["1301", "1302", "1303", "1401", "1402"]
    >>> population = pd.DataFrame({"zip": zips * 4})  # 4 people per ZIP code
    >>> df = pd.DataFrame({"zip": ["1301", "1302", "1303", "1401", "1402", "1402"]})
    >>> check(df, "zip", k=1, population=population).holds  # k=1: every ZIP matches 4 people
    True
    >>> kmap = check(df, "zip", k=5, population=population).models[1]
    >>> kmap["model"], kmap["holds"], kmap["achieved"]
    ('k-map(k=5, population_rows=20)', False, 4.0)
    >>> hier = Hierarchy.from_mapping({z: [z[:3] + "*", "*"] for z in zips})
    >>> res = anonymize(df, AnonymizationConfig({"zip": hier}, models=[KMap(5, population)]))
    >>> res.data["zip"].tolist()
    ['130*', '130*', '130*', '140*', '140*', '140*']
    """

    k: int
    population: Any = None
    name: ClassVar[str] = "k-map"
    column: ClassVar[None] = None
    needs: ClassVar[frozenset[str]] = frozenset({"sizes", "population"})
    monotone_with_suppression: ClassVar[bool] = True

    def __post_init__(self) -> None:
        self.k = positive_int(self.k, "k")
        if self.population is None:
            raise ConfigError("k-map needs a population table")

    def violating(self, stats: ClassStats) -> np.ndarray:
        if stats.population is None:
            raise ConfigError("k-map needs population class sizes in the class statistics")
        return stats.population < self.k

    def achieved(self, stats: ClassStats) -> float | None:
        if stats.population is None or not stats.n_classes:
            return None
        return float(stats.population.min())

    def params(self) -> dict[str, Any]:
        return {"k": self.k, "population_rows": int(len(self.population))}


@dataclass
class Evaluation:
    """Outcome of :func:`evaluate` on one set of classes.

    Examples
    --------
    >>> stats = ClassStats(np.array([1, 2, 5]))
    >>> ev = evaluate([KAnonymity(3)], stats, max_suppressed=2)
    >>> ev.holds, ev.violating.tolist(), ev.n_suppressed, ev.failed
    (False, [True, True, False], 3, ['k-anonymity(k=3)'])
    """

    holds: bool
    violating: np.ndarray  # per class: suppressed (violates a class-level model)
    n_suppressed: int
    failed: list[str]  # descriptions of the models that fail (after suppression)


def evaluate(models: list[PrivacyModel], stats: ClassStats, max_suppressed: int = 0) -> Evaluation:
    """Evaluate ``models`` on ``stats``, suppressing violating classes up to ``max_suppressed``.

    Examples
    --------
    >>> ev = evaluate([KAnonymity(2)], ClassStats(np.array([1, 2, 3])), max_suppressed=1)
    >>> ev.holds, ev.n_suppressed
    (True, 1)
    """
    viol = np.zeros(stats.n_classes, dtype=bool)
    per_model: list[tuple[PrivacyModel, int]] = []
    for m in models:
        if m.table_level:
            continue
        v = m.violating(stats)
        per_model.append((m, int(stats.sizes[v].sum())))
        viol |= v
    n_sup = int(stats.sizes[viol].sum())
    failed: list[str] = []
    if n_sup > max_suppressed:
        failed = [m.describe() for m, s in per_model if s > 0] or ["suppression limit"]
    keep = ~viol
    for m in models:
        if m.table_level and not m.holds(stats, keep):
            failed.append(m.describe())
    return Evaluation(not failed, viol, n_sup, failed)
