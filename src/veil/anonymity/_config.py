"""Configuration of an anonymization run (:func:`veil.anonymity.anonymize`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from veil.anonymity._models import (
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    PrivacyModel,
    RecursiveCLDiversity,
)
from veil.anonymity._stats import (
    _BOOLEAN_TEXTS,
    READ_AS_MISSING,
    SensitiveColumn,
    encode_sensitive,
    text_order_warning,
)
from veil.anonymity._tcloseness import TCloseness
from veil.errors import ConfigError, InputError
from veil.schema._hierarchy import Hierarchy

__all__ = ["AnonymizationConfig", "ALGORITHMS", "OBJECTIVES", "canonical_objective"]

ALGORITHMS = ("optimal", "heuristic", "mondrian", "mdav")

#: Canonical objective names (minimized) and accepted aliases.
OBJECTIVES: dict[str, str] = {
    "loss": "loss",
    "ncp": "loss",
    "generalization_loss": "loss",
    "gen_loss": "loss",
    "dm": "dm",
    "discernibility": "dm",
    "dm_star": "dm_star",
    "dm*": "dm_star",
    "dmstar": "dm_star",
    "entropy": "entropy",
    "non_uniform_entropy": "entropy",
    "aecs": "aecs",
    "precision": "precision",
}


def canonical_objective(name: str) -> str:
    """Canonical name of an objective (``loss``, ``dm``, ``dm_star``, ``entropy``, ``aecs``,
    ``precision``); ConfigError for unknown names."""
    key = str(name).strip().lower().replace("-", "_").replace(" ", "_")
    try:
        return OBJECTIVES[key]
    except KeyError:
        raise ConfigError(
            f"unknown objective {name!r}; expected one of: loss (NCP), dm, dm_star, entropy, "
            "aecs, precision"
        ) from None


def _as_hierarchy(col: str, h: Any) -> Hierarchy | None:
    if h is None or isinstance(h, Hierarchy):
        return h
    if isinstance(h, (str, Path)):
        return Hierarchy.from_file(h)
    if isinstance(h, pd.DataFrame):
        return Hierarchy.from_frame(h)
    if isinstance(h, Mapping):
        return Hierarchy.from_mapping(h)
    raise ConfigError(f"hierarchy of {col!r} must be a Hierarchy, a file path, a dict or None")


def check_suppression_limit(lim: Any) -> float:
    """The suppression limit as a float in [0, 1], else :class:`ConfigError`."""
    if isinstance(lim, bool) or not isinstance(lim, (int, float)) or not 0 <= lim <= 1:
        raise ConfigError(f"suppression_limit must be a fraction in [0, 1], got {lim!r}")
    return float(lim)


def _shows(labels: Any, mark: str) -> bool:
    """Whether a reader of the written release may take one of ``labels`` for ``mark``.

    Besides the text itself: every text :data:`READ_AS_MISSING` matches every other (a reader
    reads them all as a missing value); a marker that is a number matches the labels of that
    number (pandas' default reader reads a column of ``"0"`` and ``"0.0"``, or ``"1"`` and
    ``"1e0"``, as one number); a boolean text matches the texts of that boolean (``"True"``,
    ``"true"``, ``"TRUE"``).  Conservative: the number and boolean matches are taken whatever
    the rest of the column holds (with a text label in it, a reader would keep the texts).
    """
    texts = {str(x) for x in labels}
    if mark in texts or (mark in READ_AS_MISSING and not texts.isdisjoint(READ_AS_MISSING)):
        return True
    if mark in _BOOLEAN_TEXTS:
        return any(_BOOLEAN_TEXTS.get(t) == _BOOLEAN_TEXTS[mark] for t in texts)
    mark_num = pd.to_numeric(pd.Series([mark], dtype=object), errors="coerce").iloc[0]
    if pd.isna(mark_num) or not texts:
        return False
    nums = pd.to_numeric(pd.Series(sorted(texts), dtype=object), errors="coerce")
    return bool((nums == mark_num).any())


def max_suppressed_records(limit: float, n_records: int) -> int:
    """The most records that may be suppressed: the largest ``s`` with ``s / n <= limit``.

    Compared as the share a reader computes (``s / n`` in floating point), so ``0.29`` of 100
    records allows 29 (``0.29 * 100`` is ``28.999...``) and a limit just below ``0.1`` allows
    no record of 10 (a fixed tolerance added to ``limit * n`` allowed 1, a share above the
    limit).

    Examples
    --------
    >>> max_suppressed_records(0.29, 100), max_suppressed_records(0.1 - 5e-11, 10)
    (29, 0)
    """
    n = int(n_records)
    if n <= 0:
        return 0
    s = min(max(int(math.floor(limit * n)), 0), n)
    while s < n and (s + 1) / n <= limit:
        s += 1
    while s > 0 and s / n > limit:
        s -= 1
    return s


def check_k_fits(models: Sequence[PrivacyModel], n_rows: int) -> None:
    """:class:`ConfigError` when a k-anonymity model asks for more records than the table has."""
    for m in models:
        if isinstance(m, KAnonymity) and m.k > n_rows:
            raise ConfigError(f"k={m.k} is larger than the table ({n_rows} rows)")


@dataclass
class AnonymizationConfig:
    """What to anonymize and how.

    Parameters
    ----------
    quasi_identifiers
        QI column names mapped to their :class:`~veil.schema.Hierarchy` (or a path/dict/frame
        convertible to one), or to None for numeric QIs handled by Mondrian/MDAV.  A plain list
        of names means "no hierarchies".
    sensitive
        Sensitive column names (left unchanged; used by l-diversity / t-closeness).
    models
        Privacy models (any combination), e.g. ``[KAnonymity(5), DistinctLDiversity("y", 2)]``.
    k
        Shortcut for adding ``KAnonymity(k)``.
    suppression_limit
        Largest fraction of records that may be suppressed (0..1).
    algorithm
        ``"optimal"`` (lattice search), ``"heuristic"`` (time-budgeted lattice search),
        ``"mondrian"`` or ``"mdav"``.
    objective
        Utility objective minimized by the lattice search: ``"loss"`` (generalization loss /
        NCP), ``"dm"``, ``"dm_star"``, ``"entropy"`` (non-uniform entropy), ``"aecs"`` or
        ``"precision"``.
    time_limit
        Seconds allowed to the heuristic search (default 10).
    suppressed_value
        Value written in the QI cells of suppressed records.
    drop_suppressed
        Remove suppressed records from the output instead of masking their QIs.
    options
        Algorithm-specific options (e.g. ``{"mode": "relaxed"}`` for Mondrian).
    sampling_fraction
        Share ``n / N`` of the population that the table is, in (0, 1]: used for the
        population-uniqueness estimate of ``risk_before`` / ``risk_after`` (Zayatz 1991).
        Default: ``n / len(population)`` when a :class:`KMap` population table is given, else
        no estimate.

    Examples
    --------
    >>> cfg = AnonymizationConfig({"sex": Hierarchy.flat(["F", "M"])}, k=2)
    >>> [m.describe() for m in cfg.all_models()]
    ['k-anonymity(k=2)']
    """

    quasi_identifiers: Mapping[str, Any] | Sequence[str]
    sensitive: Sequence[str] = ()
    models: Sequence[PrivacyModel] = ()
    k: int | None = None
    suppression_limit: float = 0.0
    algorithm: str = "optimal"
    objective: str = "loss"
    time_limit: float | None = None
    suppressed_value: str = "*"
    drop_suppressed: bool = False
    options: dict[str, Any] = field(default_factory=dict)
    sampling_fraction: float | None = None

    def __post_init__(self) -> None:
        qi = self.quasi_identifiers
        if isinstance(qi, str):
            qi = [qi]
        if not isinstance(qi, Mapping):
            qi = dict.fromkeys(qi)
        self.quasi_identifiers = {str(c): _as_hierarchy(str(c), h) for c, h in qi.items()}
        if not self.quasi_identifiers:
            raise ConfigError("at least one quasi-identifier is needed")
        if isinstance(self.sensitive, str):
            self.sensitive = [self.sensitive]
        sens = [str(s) for s in self.sensitive]
        for m in self.models:
            if not isinstance(m, PrivacyModel):
                raise ConfigError(f"not a privacy model: {m!r}")
            if m.column is not None and m.column not in sens:
                sens.append(m.column)
        self.sensitive = sens
        both = [c for c in sens if c in self.quasi_identifiers]
        if both:
            raise ConfigError(f"column(s) declared both quasi-identifier and sensitive: {both}")
        if self.k is not None:
            KAnonymity(self.k)  # validates
        if not self.all_models():
            raise ConfigError("no privacy model given (set k or models)")
        self.suppression_limit = check_suppression_limit(self.suppression_limit)
        if self.algorithm not in ALGORITHMS:
            raise ConfigError(
                f"unknown algorithm {self.algorithm!r}; expected one of: {', '.join(ALGORITHMS)}"
            )
        self.objective = canonical_objective(self.objective)
        sf = self.sampling_fraction
        if sf is not None:
            if isinstance(sf, bool) or not isinstance(sf, (int, float)) or not 0 < sf <= 1:
                raise ConfigError(f"sampling_fraction must be in (0, 1], got {sf!r}")
            self.sampling_fraction = float(sf)
        if self.time_limit is not None and not (
            isinstance(self.time_limit, (int, float)) and self.time_limit > 0
        ):
            raise ConfigError(
                f"time_limit must be a positive number of seconds, got {self.time_limit!r}"
            )

    # ------------------------------------------------------------------ helpers
    @property
    def qi_names(self) -> list[str]:
        return list(self.quasi_identifiers)  # type: ignore[arg-type]

    def hierarchy(self, column: str) -> Hierarchy | None:
        return self.quasi_identifiers[column]  # type: ignore[index]

    def all_models(self) -> list[PrivacyModel]:
        """The privacy models, with ``KAnonymity(k)`` first when ``k`` is set."""
        models = list(self.models)
        if self.k is not None and not any(
            isinstance(m, KAnonymity) and m.k == self.k for m in models
        ):
            models.insert(0, KAnonymity(self.k))
        return models

    def min_class_size(self) -> int:
        """Largest k of the k-anonymity models (1 when there is none)."""
        return max([m.k for m in self.all_models() if isinstance(m, KAnonymity)] or [1])

    def max_suppressed(self, n_records: int) -> int:
        """Number of records that may be suppressed in a table of ``n_records``."""
        return max_suppressed_records(self.suppression_limit, n_records)

    def population(self) -> pd.DataFrame | None:
        """The population table of the first :class:`KMap` model (None without one)."""
        pops = [getattr(m, "population", None) for m in self.all_models() if m.name == "k-map"]
        return pops[0] if pops and isinstance(pops[0], pd.DataFrame) else None

    def sampling_fraction_for(self, n_records: int) -> float | None:
        """``sampling_fraction``, else ``n_records / len(population)`` with a k-map
        population at least as large as the table, else None."""
        if self.sampling_fraction is not None:
            return self.sampling_fraction
        pop = self.population()
        if pop is not None and len(pop) >= n_records > 0:
            return n_records / len(pop)
        return None

    def validate(self, df: pd.DataFrame) -> None:
        """Check that ``df`` fits the config (columns exist, k <= rows, ...)."""
        if not isinstance(df, pd.DataFrame):
            raise InputError("expected a pandas DataFrame")
        if len(df) == 0:
            raise InputError("the table is empty")
        missing = [c for c in [*self.qi_names, *self.sensitive] if c not in df.columns]
        if missing:
            as_text = {str(c) for c in df.columns if not isinstance(c, str)}
            hint = (
                "; column names are text here and the table has non-text names: rename them, "
                "e.g. df.rename(columns=str)"
                if any(m in as_text for m in missing)
                else ""
            )
            raise InputError(f"column(s) not in the table: {missing}{hint}")
        if df.columns.duplicated().any():
            raise InputError("the table has duplicated column names")
        check_k_fits(self.all_models(), len(df))

    def check_marker(self, n_records: int) -> None:
        """Refuse a suppression marker that a published class could print in every QI.

        Masked suppressed records show ``suppressed_value`` in every quasi-identifier.  When
        that text is also a label of each QI's hierarchy and, in one of them, a label of a
        level that has other labels too (a padded, ARX-style hierarchy ``v;*;*`` next to
        ``w;W;*``, or a data value ``*``), a class generalized to it in every QI prints exactly
        like the masked records: a reader sees one group, whose sensitive values are those of
        the class *and* of the suppressed records (which broke a model), so the release as
        written can break entropy l-diversity or t-closeness while the engine reports both
        held.  A marker found only at a level holding nothing else (the usual top ``*``) is
        fine: a class printing it in every QI holds every record.  Texts that a CSV reader
        takes for missing values (:data:`READ_AS_MISSING`: ``''``, ``nan``, ``NA``, ``?``, ...)
        match each other: marker ``''`` and the label ``nan`` of missing cells are one value to
        such a reader; so do texts of one number (marker ``'0'``, label ``'0.0'``: pandas'
        default reader reads both as 0) and of one boolean (``'True'``, ``'true'``).  Applies to the lattice search (full-domain generalization with
        suppression); :class:`ConfigError`.
        """
        if self.drop_suppressed or self.max_suppressed(n_records) == 0:
            return
        mark = self.suppressed_value
        mixed: str | None = None
        for col in self.qi_names:
            h = self.hierarchy(col)
            if h is None:
                return  # the lattice search refuses QIs without hierarchies
            levels = [h.labels(lv) for lv in range(h.height)]
            hit = [lv for lv, labels in enumerate(levels) if _shows(labels, mark)]
            if not hit:
                return  # this QI never prints the marker: no class can look suppressed
            if any(len(levels[lv]) > 1 for lv in hit):
                mixed = col
        if mixed is not None:
            raise ConfigError(
                f"suppressed_value {mark!r} is also a label of the hierarchy of {mixed!r} below "
                "its top, and of every other quasi-identifier's (or reads like one: a number "
                "written otherwise, a boolean in other case, a missing-value text): a class "
                "generalized to it in "
                "every column would look like the masked suppressed records, which a reader "
                "would take for one group; drop the suppressed records (drop_suppressed=True, "
                "policy 'suppressed: drop'), choose another suppressed_value, or set "
                "suppression_limit=0"
            )

    def sensitive_hierarchy(self, column: str) -> Hierarchy | None:
        for m in self.all_models():
            if getattr(m, "column", None) == column and getattr(m, "hierarchy", None) is not None:
                return _as_hierarchy(column, m.hierarchy)
        return None

    def encode_sensitive(self, df: pd.DataFrame) -> dict[str, SensitiveColumn]:
        """Encode every sensitive column of ``df`` for :class:`ClassStats`.

        Warns (once per column) when an ordered-distance t-closeness model would order a
        non-numeric column's values as text (see :func:`text_order_warning`).
        """
        out = {c: encode_sensitive(df[c], c, self.sensitive_hierarchy(c)) for c in self.sensitive}
        for c in self.ordered_columns():
            text_order_warning(df[c], c, out[c])
        return out

    def ordered_columns(self) -> list[str]:
        """Sensitive columns of the ordered-distance t-closeness models (each once)."""
        return ordered_columns(self.all_models())

    def to_dict(self) -> dict[str, Any]:
        """JSON-able description."""
        return {
            "quasi_identifiers": {
                c: (None if h is None else {"height": h.height, "values": len(h)})
                for c, h in self.quasi_identifiers.items()  # type: ignore[union-attr]
            },
            "sensitive": list(self.sensitive),
            "models": [m.to_dict() for m in self.all_models()],
            "suppression_limit": self.suppression_limit,
            "algorithm": self.algorithm,
            "objective": self.objective,
            "time_limit": self.time_limit,
            "sampling_fraction": self.sampling_fraction,
        }


def ordered_columns(models: Sequence[PrivacyModel]) -> list[str]:
    """Columns of the ordered-distance :class:`TCloseness` models without a hierarchy (whose
    values are ordered by their own type), each once, in order."""
    cols = [
        m.column
        for m in models
        if isinstance(m, TCloseness) and m.distance == "ordered" and m.hierarchy is None
    ]
    return list(dict.fromkeys(cols))


def l_model(
    column: str,
    l: float,  # noqa: E741
    variant: str = "distinct",
    c: float | None = None,
) -> PrivacyModel:
    """Build an l-diversity model by variant name (``distinct``, ``entropy``, ``recursive``)."""
    v = str(variant).lower()
    if v == "distinct":
        return DistinctLDiversity(column, l)  # type: ignore[arg-type]
    if v == "entropy":
        return EntropyLDiversity(column, l)
    if v == "recursive":
        if c is None:
            raise ConfigError("recursive (c,l)-diversity needs c")
        return RecursiveCLDiversity(column, l, c)  # type: ignore[arg-type]
    raise ConfigError(f"unknown l-diversity variant {variant!r}: distinct, entropy or recursive")


def t_model(column: str, t: float, distance: str = "equal", hierarchy: Any = None) -> PrivacyModel:
    """Build a t-closeness model."""
    return TCloseness(column, t, distance, _as_hierarchy(column, hierarchy))
