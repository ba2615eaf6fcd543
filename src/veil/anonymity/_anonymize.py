"""``anonymize(df, config)``: dispatch to the lattice search, Mondrian or MDAV."""

from __future__ import annotations

import importlib
import time
from typing import Any

import numpy as np
import pandas as pd

from veil.anonymity._config import AnonymizationConfig
from veil.anonymity._lattice import ClassTable, EncodedTable
from veil.anonymity._models import PrivacyModel
from veil.anonymity._objectives import all_utilities, make_objective, original_utilities
from veil.anonymity._result import AnonymizationResult
from veil.anonymity._search import LatticeSearch, SearchOutcome
from veil.errors import ConfigError

__all__ = ["anonymize", "lattice_search", "render_node", "suppression_breakdown", "original_risk"]

DEFAULT_TIME_LIMIT = 10.0
#: Share of a time limit given to the greedy refinement before the optimal search.
GREEDY_SHARE = 0.25


def lattice_search(
    df: pd.DataFrame, config: AnonymizationConfig
) -> tuple[EncodedTable, SearchOutcome]:
    """Run the lattice search of ``config.algorithm`` (optimal or heuristic) without rendering.

    Without a time limit (``optimal`` only) the search is exact.  Under a time limit (always
    for ``heuristic``, default :data:`DEFAULT_TIME_LIMIT`), the time counts from the start of
    the encoding; the greedy climb runs first (its top-down refinement within
    :data:`GREEDY_SHARE` of the budget) and its node is the incumbent of the optimal search,
    which gets the rest: the result is never worse than the greedy node, and is optimal
    (``optimal=True``) only when the search finished.
    """
    t0 = time.perf_counter()
    config.validate(df)
    config.check_marker(len(df))
    enc = EncodedTable(df, config)
    models = config.all_models()
    search = LatticeSearch(
        enc, models, config.max_suppressed(len(df)), make_objective(config.objective, enc)
    )
    if config.algorithm == "optimal" and config.time_limit is None:
        return enc, search.optimal(None)
    limit = config.time_limit if config.time_limit is not None else DEFAULT_TIME_LIMIT
    deadline = t0 + limit
    incumbent = search.greedy(deadline, t0 + GREEDY_SHARE * limit)
    return enc, search.optimal(deadline, incumbent=incumbent)


def render_node(
    df: pd.DataFrame, enc: EncodedTable, levels: tuple[int, ...], config: AnonymizationConfig
) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """Generalize ``df`` to node ``levels``; returns ``(release, suppressed_mask, class_ids)``.

    QI columns become categoricals of hierarchy labels; suppressed records get
    ``config.suppressed_value`` in every QI (or are dropped with ``config.drop_suppressed``).
    """
    table, row_cls = enc.row_classes(levels)
    st = table.stats()
    viol = np.zeros(table.n_classes, dtype=bool)
    for m in config.all_models():
        if not m.table_level:
            viol |= m.violating(st)
    suppressed = viol[row_cls]
    out = df.copy(deep=False)
    for a, (col, h) in enumerate(zip(enc.qi, enc.hier)):
        lv = levels[a]
        labels = [str(x) for x in h.labels(lv)]
        codes = h.codes(lv)[enc.row_codes[a]].astype(np.int64)
        if suppressed.any():
            if config.suppressed_value in labels:
                star = labels.index(config.suppressed_value)
            else:
                labels.append(config.suppressed_value)
                star = len(labels) - 1
            codes = np.where(suppressed, star, codes)
        out[col] = pd.Categorical.from_codes(codes, categories=labels)
    class_ids = np.where(suppressed, -1, row_cls)
    if config.drop_suppressed and suppressed.any():
        out = out.loc[~suppressed] if out.index.is_unique else out.iloc[np.flatnonzero(~suppressed)]
    return out, suppressed, class_ids


def suppression_breakdown(
    table: ClassTable, violating: np.ndarray, models: list[PrivacyModel]
) -> dict[str, Any]:
    """Counts only (no values) describing the records suppressed at a lattice node.

    ``by_class_size``: the suppressed records per size of their class at the chosen node
    (before suppression), in the bins of :func:`veil.anonymity.class_size_histogram`;
    ``by_model``: per record-level privacy model, the suppressed records whose class violates
    it (a record counts under every model its class violates, so the counts may add up to more
    than the total).

    Examples
    --------
    >>> from veil.anonymity._models import KAnonymity
    >>> t = ClassTable(levels=(0,), sizes=np.array([1, 3]), sens={})
    >>> out = suppression_breakdown(t, np.array([True, False]), [KAnonymity(2)])
    >>> out["by_model"], out["by_class_size"][0]
    ({'k-anonymity(k=2)': 1}, {'size': '1', 'classes': 1, 'records': 1})
    """
    from veil.anonymity._risk import class_size_histogram

    viol = np.asarray(violating, dtype=bool)
    sizes = np.asarray(table.sizes, dtype=np.int64)
    by_model: dict[str, int] = {}
    if viol.any():
        st = table.stats()
        for m in models:
            if not m.table_level:
                by_model[m.describe()] = int(sizes[m.violating(st) & viol].sum())
    hist = [b for b in class_size_histogram(sizes[viol]) if b["records"]]
    return {"by_class_size": hist, "by_model": by_model}


def original_risk(df: pd.DataFrame, config: AnonymizationConfig) -> dict[str, Any]:
    """``risk_before`` of every algorithm: the risk of ``df`` released unchanged.

    The records are grouped as :func:`veil.anonymity.check` and :func:`veil.anonymity.risk`
    group them, by the cells' typed values (``factorize_typed``: ``True``, ``1`` and ``1.0``
    are three values, ``'a'`` and ``' a'`` two), the rule the release's own classes
    (``risk_after``, a release of label texts) are measured with.  It used to be taken from
    the engines' encodings instead, by the cells' text and the hierarchies' matching rule
    (``1`` and ``1.0`` one class), so "before" could show fewer, larger classes than checking
    the original table gives.  Population class sizes (k-map) and the sampling fraction are
    those :func:`veil.anonymity.risk` derives from ``config``'s population.
    """
    from veil.anonymity._risk import risk

    sf = config.sampling_fraction_for(len(df))
    return risk(df, config.qi_names, population=config.population(), sampling_fraction=sf)


def _external(name: str, df: pd.DataFrame, config: AnonymizationConfig) -> AnonymizationResult:
    module, func = {
        "mondrian": ("veil.anonymity._mondrian", "mondrian_anonymize"),
        "mdav": ("veil.anonymity._mdav", "mdav_anonymize"),
    }[name]
    try:
        fn: Any = getattr(importlib.import_module(module), func)
    except (ModuleNotFoundError, AttributeError):
        raise ConfigError(f"algorithm {name!r} is not available in this build") from None
    return fn(df, config)


def anonymize(df: pd.DataFrame, config: AnonymizationConfig) -> AnonymizationResult:
    """Anonymize ``df`` as ``config`` says; never mutates ``df``.

    ``optimal`` searches the whole lattice of hierarchy levels (full-domain generalization with
    record suppression) and returns the node minimizing ``config.objective`` (Flash/OLA class
    search, see :mod:`veil.anonymity._search`); ``heuristic`` does the same within
    ``config.time_limit`` seconds (best node found so far); ``mondrian`` and ``mdav`` are
    local-recoding algorithms.

    Examples
    --------
    >>> import pandas as pd
    >>> from veil.anonymity import AnonymizationConfig, Hierarchy, anonymize
    >>> df = pd.DataFrame({"age": [21, 22, 23, 24], "zip": ["1", "1", "2", "2"], "y": list("abab")})
    >>> age = Hierarchy.from_mapping({str(a): ["20-24", "*"] for a in range(20, 25)})
    >>> res = anonymize(df, AnonymizationConfig({"age": age, "zip": Hierarchy.flat("12")}, k=2))
    >>> res.node, res.data["age"].astype(str).tolist()
    ({'age': 1, 'zip': 0}, ['20-24', '20-24', '20-24', '20-24'])
    """
    from veil.anonymity._risk import risk_summary

    if not isinstance(config, AnonymizationConfig):
        raise ConfigError("config must be an AnonymizationConfig")
    if config.algorithm in ("mondrian", "mdav"):
        config.validate(df)
        return _external(config.algorithm, df, config)
    t0 = time.perf_counter()
    enc, out = lattice_search(df, config)
    elapsed = time.perf_counter() - t0
    release, suppressed, class_ids = render_node(df, enc, out.node, config)
    keep = ~out.evaluation.violating
    sizes = out.table.sizes[keep]
    pop_after = None if out.table.population is None else out.table.population[keep]
    sf = config.sampling_fraction_for(len(df))
    risk_before = original_risk(df, config)
    return AnonymizationResult(
        data=release,
        config=config,
        algorithm=config.algorithm,
        suppressed=suppressed,
        partitions=class_ids,
        node=dict(zip(enc.qi, out.node)),
        n_nodes_checked=out.n_checked,
        n_nodes_total=out.n_total,
        optimal=out.optimal,
        objective=config.objective,
        objective_value=out.value,
        utility=all_utilities(enc, out.table, out.evaluation.violating),
        utility_before=original_utilities(enc),
        suppression=suppression_breakdown(out.table, out.evaluation.violating, config.all_models()),
        risk_before=risk_before,
        risk_after=risk_summary(sizes, pop_after, sampling_fraction=sf),
        elapsed=elapsed,
    )
