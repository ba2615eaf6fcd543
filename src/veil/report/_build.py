"""Assembling the JSON report of a de-identification run (the HTML report renders it)."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from veil.report._factors import Factors
from veil.report._metrics import _moments, distribution, information_loss
from veil.report._risk import risk_indicators
from veil.schema import Role

if TYPE_CHECKING:
    from veil.deid._policy import Policy

__all__ = ["build_report", "MAX_PLOTS", "DEFAULT_K"]

MAX_PLOTS = 12
DEFAULT_K = 5


def _distributions(
    original: pd.DataFrame,
    release: pd.DataFrame,
    columns: list[str],
    factors: tuple[Factors, Factors] | None = None,
    min_count: int = DEFAULT_K,
    withheld: Collection[str] = (),
    codes: Mapping[str, tuple[float, float]] | None = None,
) -> dict[str, Any]:
    """Input and release distributions of ``columns``.  The input's small cells are protected
    (``min_count``, the policy's k): the report may travel with the release, and the input's
    rare values, minimum and maximum are exactly what the release hides.

    ``withheld``: columns whose input side is not shown (``original`` None,
    ``original_withheld`` true): a column whose values an operator with
    :attr:`~veil.deid.operators.Operator.replaces_values` replaced
    keeps its frequencies, so its input value counts beside the release's counts per
    pseudonym (token, fake, mask) would give the mapping (a frequency-matching attack).

    ``codes``: per top- or bottom-coded column, the ``(bottom, top)`` codes; its input values
    are drawn clipped to them, as released: the input histogram showed the distribution of the
    incomes above the top code that the release hides, one of them exactly as a bin edge (and
    the release was drawn on those edges).
    """
    fo, fr = factors if factors is not None else (Factors(original), Factors(release))
    out: dict[str, Any] = {}
    for col in columns[:MAX_PLOTS]:
        if col in withheld:
            after = distribution(release[col], factorized=fr(col)) if col in release else None
            out[col] = {"original": None, "original_withheld": True, "release": after}
            continue
        if codes and col in codes:  # numbers, or text the operator read as numbers
            lo, hi = codes[col]
            s0 = original[col]
            num = s0 if pd.api.types.is_numeric_dtype(s0) else pd.to_numeric(s0, errors="coerce")
            before = distribution(num.clip(lower=lo, upper=hi), min_count=min_count)
        else:
            before = distribution(original[col], factorized=fo(col), min_count=min_count)
        after = None
        if col in release.columns:
            edges = before.get("edges") if before["kind"] == "numeric" else None
            s1 = release[col]
            numeric = pd.api.types.is_numeric_dtype(s1) and not pd.api.types.is_bool_dtype(s1)
            if before.get("tails_pooled") and edges is not None and numeric:
                after = distribution(s1, edges, factorized=fr(col), clip_to_edges=True)
            elif edges is not None and numeric and bool((fr(col)[0] >= 0).any()):
                lo, hi = (
                    float(np.nanmin(s1.to_numpy(dtype=float, na_value=np.nan))),
                    float(np.nanmax(s1.to_numpy(dtype=float, na_value=np.nan))),
                )
                if lo < edges[0] or hi > edges[-1]:
                    edges = None
                after = distribution(s1, edges, factorized=fr(col))
            else:
                after = distribution(s1, factorized=fr(col))
        out[col] = {"original": before, "release": after}
    return out


def _coded(policy: Policy) -> dict[str, tuple[float, float]]:
    """``(bottom, top)`` of each top- or bottom-coded column (-inf / inf where not coded), as
    the ``top_bottom_code`` operators applied them (percentile codes included)."""
    out: dict[str, tuple[float, float]] = {}
    for col, spec in policy.columns.items():
        for op in spec.operators:
            if op.name != "top_bottom_code":
                continue
            st = op.stats()
            lo, hi = out.get(col, (-np.inf, np.inf))
            if st.get("bottom") is not None:
                lo = max(lo, float(st["bottom"]))
            if st.get("top") is not None:
                hi = min(hi, float(st["top"]))
            out[col] = (lo, hi)
    return out


def _released_input(
    original: pd.DataFrame, release: pd.DataFrame, masked: np.ndarray | None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The input rows of the released records, and of those not masked.

    Per-column *before* figures (distributions, means, distinct counts) are taken on these
    rows, not on the whole input: the release is public, so a before figure that also counted
    the removed records would give, by difference, the values of what the release hides (with
    one suppressed record: its exact value of every column, its sensitive value included).
    Removed records are described by counts only: with an empty release no input row is
    described (the whole input would give the removed records' values; all of them with one
    record).  When the release is not row-aligned with the input (a table-level operator
    rebuilt it), the whole input is used if no record was removed, else none.
    """
    pos = original.index.get_indexer(release.index)
    if len(release) == 0 or (pos < 0).any() or release.index.has_duplicates:
        rows = original if len(release) == len(original) else original.iloc[:0]
        return rows, rows
    # nothing removed or reordered: the input itself, so its factorizations are reused
    kept = original if np.array_equal(pos, np.arange(len(original))) else original.iloc[pos]
    if masked is None or not np.asarray(masked, dtype=bool).any():
        return kept, kept
    return kept, kept.iloc[np.flatnonzero(~np.asarray(masked, dtype=bool))]


def _gives_changed(changed: int | None, records: int) -> bool:
    """Whether exact *before* moments over ``records`` released records would give the values
    of the ``changed`` ones (None: not known) an operator changed.

    When some records are released as they were and others changed (top or bottom coding;
    rounding that left the multiples alone), the before sum minus the unchanged released
    values is the sum of the changed ones, and the sum of squares gives a second equation:
    one top-coded income exactly, two from the mean and the std.  With at most two records
    mean and std give every value.  When every record changed (noise), they give only the
    sum and the sum of squares of the changes.
    """
    if changed is None:
        return True
    return 0 < changed < records or (changed > 0 and records <= 2)


def _withhold_changed(loss: dict[str, Any], records: int, skip: Collection[str]) -> None:
    """Withhold the *before* mean and std where :func:`_gives_changed` (``before_withheld``).

    ``skip``: the quasi-identifiers :func:`_masked_qis_before` judges on the records that are
    not masked.
    """
    for col, entry in loss["columns"].items():
        if col in skip or entry["dropped"] or entry["mean_before"] is None:
            continue
        share = entry["changed_share"]  # None: rows not matched, so not known unchanged
        if _gives_changed(None if share is None else round(share * records), records):
            entry.update(mean_before=None, std_before=None, mean_shift=None, std_ratio=None)
            entry["before_withheld"] = True


def _n_changed(before: pd.Series, after: pd.Series) -> int:
    """Records whose released number ``after`` is not the input's ``before`` (NaN == NaN)."""
    x = pd.to_numeric(before, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    y = after.to_numpy(dtype=float, na_value=np.nan)
    return int((~((x == y) | (np.isnan(x) & np.isnan(y)))).sum())


def _masked_qis_before(
    loss: dict[str, Any], shown: pd.DataFrame, qis: list[str], fs: Factors, release: pd.DataFrame
) -> None:
    """Take the quasi-identifiers' *before* figures of ``loss`` on ``shown`` (the released
    records that are not masked).

    With ``suppressed: mask`` a masked record's quasi-identifiers are ``*`` in the release:
    a before mean that counted its input value would, by difference with the released values
    of the others, give it (an age of 117 kept at level 0 for the rest: ``mean_before`` x
    records minus the released ages).  Its other columns are released, so they stay counted.
    """
    for col in qis:
        entry = loss["columns"].get(col)
        if entry is None or col not in shown.columns:
            continue
        d0 = len(fs(col)[1])
        d1, m1, sd1 = entry["distinct_after"], entry["mean_after"], entry["std_after"]
        # released as numbers (masked records' '*' aside)?  Else the values are hidden (bins,
        # redaction): no before moments, as in information_loss
        after = release.loc[shown.index, col] if col in release.columns else shown[col].iloc[:0]
        num = pd.to_numeric(after, errors="coerce")
        numeric = num.notna().sum()
        m0, sd0 = (
            _moments(shown[col]) if numeric and numeric == after.notna().sum() else (None, None)
        )
        if m0 is not None and _gives_changed(_n_changed(shown[col], num), len(shown)):
            # an operator changed the values (top coding, rounding, noise): the before figures
            # minus the released values of the others would give the changed ones
            m0 = sd0 = None
            entry["before_withheld"] = True
        entry.update(
            distinct_before=d0,
            distinct_reduction=(1 - d1 / d0) if d0 else 0.0,
            mean_before=m0,
            std_before=sd0,
        )
        if not entry["dropped"]:
            entry["mean_shift"] = (m1 - m0) if m0 is not None and m1 is not None else None
            entry["std_ratio"] = (sd1 / sd0) if sd0 and sd1 is not None else None


def build_report(
    original: pd.DataFrame,
    release: pd.DataFrame,
    policy: Policy,
    roles: dict[str, Role | None],
    *,
    suppression: dict[str, Any],
    masked: np.ndarray | None = None,
    fitted_on_more: Collection[str] = (),
) -> dict[str, Any]:
    """Everything the JSON and HTML reports show (never any key material).

    ``masked``: over the release's rows, the suppressed records kept with masked
    quasi-identifiers (their input values are left out of the *before* distributions).
    ``fitted_on_more``: columns from which an operator published an aggregate (fitted
    parameters, a mean split, a relative noise scale, bin edges) of more records than are
    released; their *before* mean and std are withheld (``before_withheld``), since the two
    would give, by difference, the values of the records removed or masked afterwards.

    Examples
    --------
    :func:`veil.deid.apply` calls it; to report on a release made another way:

    >>> from veil.deid import Policy
    >>> df = pd.DataFrame({"age": [34, 35, 61, 62], "zip": ["130", "130", "140", "140"]})
    >>> release = df.assign(age=df["age"] // 10 * 10)  # ages to decades
    >>> policy = {"columns": {"age": "quasi", "zip": "quasi"}, "privacy": {"k": 2}}
    >>> policy = Policy.from_dict(policy)
    >>> report = build_report(df, release, policy, policy.roles_for(df), suppression={})
    >>> before, after = report["risk"]["before"], report["risk"]["after"]
    >>> before["unique_records"], after["unique_records"], after["highest_risk"]
    (4, 0, 0.5)
    >>> sorted(report["distributions"])
    ['age', 'zip']
    """
    from veil import __version__
    from veil.io._signed_zero import positive_zeros

    # the release as it is written: -0.0 is printed 0 there, so a label or an edge of -0.0
    # here would tell which released zeros came from negative values (a negative income
    # rounded to 0)
    release = positive_zeros(release)
    targets = policy.privacy
    k = targets.k if targets is not None and targets.k else DEFAULT_K
    qis = [c for c, r in roles.items() if r is Role.QUASI]
    plotted = [c for c, r in roles.items() if r in (Role.QUASI, Role.SENSITIVE)]
    # each column is factorized once: those used by several figures are kept meanwhile
    reused = {*qis, *plotted[:MAX_PLOTS]}
    fo, fr = Factors(original, reused), Factors(release, reused)
    kept, shown = _released_input(original, release, masked)
    fk = fo if kept is original else Factors(kept, reused)
    fs = fk if shown is kept else Factors(shown, reused)
    loss = information_loss(kept, release, factors=(fk, fr))
    _withhold_changed(loss, len(release), qis if shown is not kept else ())
    if shown is not kept:
        _masked_qis_before(loss, shown, qis, fs, release)
    for col in fitted_on_more:
        entry = loss["columns"].get(col)
        if entry is not None:
            entry.update(mean_before=None, std_before=None, before_withheld=True)
            entry.update(mean_shift=None, std_ratio=None)
    n0, n1 = len(original), len(release)
    loss["records_removed"] = n0 - n1
    loss["records_removed_share"] = (n0 - n1) / n0 if n0 else 0.0
    columns: dict[str, Any] = {}
    for col in map(str, original.columns):
        spec = policy.columns.get(col)
        columns[col] = {
            "role": roles[col].value if roles[col] is not None else None,
            "listed_in_policy": spec is not None,
            "operators": [
                {
                    "name": op.name,
                    "description": op.describe(),
                    "params": op.params(),
                    "stats": op.stats(),
                }
                for op in (spec.operators if spec else [])
            ],
            "hierarchy": spec.hierarchy_source if spec else None,
            "in_release": col in release.columns,
        }
    return {
        "veil_version": __version__,
        "created": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "policy": {"source": policy.source, "privacy": dict(targets.raw) if targets else None},
        "input": {"records": len(original), "columns": original.shape[1]},
        "release": {
            "records": len(release),
            "columns": release.shape[1],
            "column_names": [str(c) for c in release.columns],
        },
        "columns": columns,
        "suppression": suppression,
        "risk": {
            "quasi_identifiers": qis,
            "k": k,
            "k_is_default": not (targets is not None and targets.k),
            "before": risk_indicators(original, qis, k, factors=fo),
            "after": risk_indicators(release, qis, k, factors=fr),
        },
        "information_loss": loss,
        "distributions": _distributions(
            shown,
            release,
            plotted,
            (fs, fr),
            k,
            withheld={
                c
                for c, spec in policy.columns.items()
                if any(op.replaces_values for op in spec.operators)
            },
            codes=_coded(policy),
        ),
    }
