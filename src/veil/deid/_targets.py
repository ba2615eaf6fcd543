"""Verifying privacy targets on a release: k-anonymity, l-diversity, t-closeness, suppression.

Used when the policy gives targets without an ``algorithm`` (verify only) and after the engine
enforced them (double check).  All models are evaluated from one class-code pass and
``bincount`` over (class, sensitive value) pairs.

References
----------
Sweeney 2002 (k-anonymity); Machanavajjhala et al., "l-diversity: privacy beyond
k-anonymity", ICDE 2006 (distinct, entropy and recursive (c,l)-diversity); Li, Li &
Venkatasubramanian, "t-closeness", ICDE 2007 (EMD with equal and ordered ground distance;
a text column of numbers is ordered as its numbers, as the engine orders it).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from veil.anonymity._exact import MARGIN, entropy_at_least, r1_below, threshold
from veil.anonymity._sensitive_hierarchy import texts_read_as
from veil.anonymity._stats import encode_sensitive
from veil.report._risk import class_codes

__all__ = ["verify_targets"]


def _class_value_counts(
    codes: np.ndarray,
    values: pd.Series,
    reference: pd.Series | None = None,
    as_read: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """(n_classes x n_values) count matrix and the reference distribution over the same values.

    Values are sorted when orderable (else in order of appearance), over the union of
    ``values`` and ``reference``; columns the engine encodes by their text (``object``,
    pandas' ``str``, booleans: all but numbers and ordered categoricals) are encoded as it
    does (:func:`~veil.anonymity.encode_sensitive`: texts of numbers in numeric order), over
    its written texts or, with ``as_read`` (l-diversity), over the values a reader takes them
    for (:attr:`~veil.anonymity._stats.SensitiveColumn.read_as`); the reference distribution
    is that of ``reference`` (of ``values`` when None).  :func:`_t_views` gives the views of
    the ordered distance.
    """
    counts, q, _ = _t_views(codes, values, reference, as_read=as_read)[0]
    return counts, q


def _t_views(
    codes: np.ndarray,
    values: pd.Series,
    reference: pd.Series | None = None,
    *,
    as_read: bool = False,
    ordered: bool = False,
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """:func:`_class_value_counts` (with the reference's counts third, for the exact decision
    of :func:`_t_within`), and with ``ordered`` also the counts over the other views
    of a text column the ordered distance measures: the texts the file shows (missing cells
    and ``""`` one text) and, on a text column or an ordered Categorical whose texts a reader
    merges (``"1"`` and ``"1.0"``, ``"True"`` and ``"true"``, ``" x"`` and ``"x"``), the
    values read.

    The engine's ordered distance is the largest of them
    (:meth:`~veil.anonymity.TCloseness.distances`): the check measures them all.
    """
    v = values.reset_index(drop=True)
    n_rel = len(v)
    if reference is not None:
        v = pd.concat([v, reference.reset_index(drop=True)], ignore_index=True)
    views: list[np.ndarray] = []
    if isinstance(v.dtype, pd.CategoricalDtype) and v.dtype.ordered:
        # the category order, as the engine (anonymity._stats.encode_sensitive): text order
        # would measure the ordered distance between other neighbours than the engine did
        cat = v.cat.remove_unused_categories()
        vcodes = cat.cat.codes.to_numpy().astype(np.int64)
        if (vcodes < 0).any():
            vcodes[vcodes < 0] = len(cat.cat.categories)
        # categories a reader takes for one value (texts read as missing, of one number, of
        # one boolean, alike once stripped), as the engine's read_as (texts_read_as)
        labels = np.array([str(c) for c in cat.cat.categories], dtype=object)
        read_as = texts_read_as(labels)
        merged = vcodes
        if read_as is not None:
            lut = np.append(read_as, int(read_as.max()) + 1)  # missing cells: a value apart
            merged = lut[vcodes]
        views.append(merged if as_read else vcodes)
        if ordered and not as_read and read_as is not None:
            views.append(merged)
    elif not pd.api.types.is_numeric_dtype(v.dtype) or pd.api.types.is_bool_dtype(v.dtype):
        # the engine's text path (encode_sensitive): the written text (True and "True" are one
        # value, True and 1 two; '' and a missing cell one), texts of numbers in numeric order,
        # other texts in text order; pandas 3 reads text as the str dtype, not object
        col = encode_sensitive(v, "sensitive")
        views.append((col.as_read if as_read else col).codes)
        if ordered and not as_read and col.written_as is not None:
            views.append(col.as_written.codes)
        if ordered and not as_read and col.read_as is not None:
            views.append(col.as_read.codes)
    else:
        try:
            uniq = np.sort(v.dropna().unique())
            vcodes = np.searchsorted(uniq, v.to_numpy())
            views.append(np.where(v.isna().to_numpy(), len(uniq), vcodes))
        except TypeError:
            views.append(pd.factorize(v, use_na_sentinel=False)[0])
    n_classes = int(codes.max()) + 1 if len(codes) else 0
    out = []
    for vcodes in views:
        vcodes = np.asarray(vcodes, dtype=np.int64)
        m = int(vcodes.max()) + 1 if len(vcodes) else 0
        flat = np.bincount(codes * m + vcodes[:n_rel], minlength=n_classes * m)
        ref = vcodes[n_rel:] if reference is not None else vcodes
        q_counts = np.bincount(ref, minlength=m)
        q = q_counts.astype(np.float64)
        out.append((flat.reshape(n_classes, m), q / max(q.sum(), 1.0), q_counts))
    return out


def _l_value(
    counts: np.ndarray, variant: str, c: float | None, l_target: float
) -> tuple[float, bool]:
    if variant == "entropy":
        p = counts / counts.sum(axis=1, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            h = -np.nansum(np.where(p > 0, p * np.log(p), 0.0), axis=1)
        exph = np.exp(h)
        achieved = float(exph.min())
        # classes within rounding of l decided exactly, as the engine does (a class of 15,001
        # and 15,000 records has exp(H) = 2 (1 - 5.6e-10): below l = 2)
        near = np.flatnonzero(np.abs(exph - l_target) <= MARGIN)
        ok = not bool(np.any(exph < l_target - MARGIN)) and all(
            entropy_at_least(counts[i], l_target) for i in near
        )
        return achieved, ok
    distinct = (counts > 0).sum(axis=1)
    achieved = float(distinct.min())
    if variant == "recursive":
        l_int = int(l_target)
        s = -np.sort(-counts, axis=1)
        tail = s[:, l_int - 1 :].sum(axis=1)
        # r1 < c * tail exactly (1.1 * 50 is 55.00000000000001 in floating point)
        ok = bool(np.all((distinct >= l_int) & r1_below(s[:, 0], tail, c or 0)))
        return achieved, ok
    return achieved, achieved >= l_target


def _t_distances(counts: np.ndarray, q: np.ndarray, distance: str) -> np.ndarray:
    """The EMD of every class (a row of ``counts``) to ``q``, in floating point."""
    p = counts / counts.sum(axis=1, keepdims=True)
    m = counts.shape[1]
    if distance == "ordered" and m > 1:
        return np.abs(np.cumsum(p - q, axis=1)).sum(axis=1) / (m - 1)
    return 0.5 * np.abs(p - q).sum(axis=1)


def _t_beyond_exactly(counts: np.ndarray, q_counts: np.ndarray, distance: str, t: float) -> bool:
    """Whether the EMD of a class with ``counts`` to the reference ``q_counts`` exceeds ``t``.

    In integers, as the engine (:func:`veil.anonymity._exact.emd_exact`): with ``n`` and
    ``N`` the class's and the reference's sizes, ``e_v = c_v N - C_v n = n N (p_v - q_v)``;
    the equal distance is ``sum |e_v| / (2 n N)``, the ordered one
    ``sum_j |e_0 + ... + e_j| / ((m - 1) n N)``, compared with ``t = a / b`` as written
    (:func:`~veil.anonymity._exact.threshold`) by cross-multiplying.
    """
    target = threshold(t)
    c = [int(x) for x in counts]
    big_c = [int(x) for x in q_counts]
    n, big_n = sum(c), max(sum(big_c), 1)  # an empty reference is q = 0, as _t_views has it
    e = [cv * big_n - qv * n for cv, qv in zip(c, big_c)]
    m = len(e)
    if distance == "ordered" and m > 1:
        run, num = 0, 0
        for x in e:
            run += x
            num += abs(run)
        denom = (m - 1) * n * big_n
    else:
        num, denom = sum(abs(x) for x in e), 2 * n * big_n
    return num * target.denominator > denom * target.numerator


def _t_within(
    views: list[tuple[np.ndarray, np.ndarray, np.ndarray]], distance: str, t: float
) -> tuple[float, bool]:
    """The largest distance over the classes and views, and whether every one is ``<= t``.

    ``t`` means the decimal it is written as (``0.3`` is 3/10, :func:`~veil.anonymity._exact.
    threshold`); a class whose floating-point distance is within
    :data:`~veil.anonymity._exact.MARGIN` of ``t`` is decided exactly
    (:func:`_t_beyond_exactly`), as the engine does (:meth:`~veil.anonymity.TCloseness.violating`):
    a tolerance of ``1e-12`` accepted classes beyond ``t`` by less than it.
    """
    achieved, met = 0.0, True
    for counts, q, q_counts in views:
        d = _t_distances(counts, q, distance)
        if d.size:
            achieved = max(achieved, float(d.max()))
        if not met:
            continue
        if bool(np.any(d > t + MARGIN)):
            met = False
            continue
        border = np.flatnonzero(d > t - MARGIN)
        met = not any(_t_beyond_exactly(counts[i], q_counts, distance, t) for i in border)
    return achieved, met


def _share_within(removed: int, total: int, limit: float) -> tuple[float, bool]:
    """The suppressed share ``removed / total`` and whether it is at most ``limit``.

    As the engine applies the limit (:func:`~veil.anonymity._config.max_suppressed_records`:
    the share a reader computes, ``removed / total`` in floating point, so ``2 / 12`` allows 2
    of 12 records), with no tolerance: ``share <= limit + 1e-12`` accepted a share above the
    limit the engine would have refused (1 of 10 records at ``0.1 - 5e-13``).
    """
    if not total:
        return 0.0, True
    share = removed / total
    return share, share <= limit


def verify_targets(
    release: pd.DataFrame,
    quasi_identifiers: list[str],
    targets: Any,
    *,
    removed_by_privacy: int = 0,
    input_records: int = 0,
    suppressed: np.ndarray | None = None,
    reference: pd.DataFrame | None = None,
) -> dict[str, Any]:
    """Check each target on ``release``; returns ``{target: {target, achieved, met}, all_met}``.

    Parameters
    ----------
    release
        The released table.
    quasi_identifiers
        Its quasi-identifier columns.
    targets
        Object with ``k``, ``l``, ``t`` and ``suppression_limit`` (a policy's ``privacy``).
    removed_by_privacy, input_records
        Records the engine dropped, and the records it was given (after the ``suppress``
        conditions and the operators): the base of the suppression share, as the engine
        (and ARX) applies ``suppression_limit`` to its own input.
    suppressed
        Boolean mask over the rows of ``release`` (by position): records the engine kept with
        every quasi-identifier masked (``privacy.suppressed: mask``).  They are not a released
        equivalence class, so k, l and t are checked on the other rows only; they count as
        suppressed for ``suppression_limit``.
    reference
        The table whose sensitive-value distribution is the t-closeness reference: the whole
        table given to the engine, suppressed records included (Li, Li & Venkatasubramanian
        2007; ARX does the same), so this check and the engine measure the same distance.
        Default: ``release`` with its masked rows.

    Examples
    --------
    >>> from types import SimpleNamespace as NS
    >>> df = pd.DataFrame({"age": ["<30"] * 3 + [">=30"] * 3, "ill": ["a", "b", "a", "a", "a", "b"]})
    >>> r = verify_targets(df, ["age"], NS(k=3, l={"column": "ill", "l": 2}, t=None, suppression_limit=None))
    >>> r["k"]["met"], r["l"]["achieved"], r["all_met"]
    (True, 2.0, True)
    """
    out: dict[str, Any] = {}
    full = release
    n_masked = 0
    if suppressed is not None:
        suppressed = np.asarray(suppressed, dtype=bool)
        if suppressed.shape != (len(release),):
            raise ValueError("suppressed must be a boolean mask over the release rows")
        n_masked = int(suppressed.sum())
        if n_masked:
            release = release.iloc[np.flatnonzero(~suppressed)]
    if reference is None:
        reference = full
    qis = [q for q in quasi_identifiers if q in release.columns]
    codes, sizes = class_codes(release, qis)
    if getattr(targets, "k", None) is not None:
        achieved = int(sizes.min()) if len(sizes) else 0
        out["k"] = {
            "target": targets.k,
            "achieved": achieved,
            "met": achieved >= targets.k or len(release) == 0,
        }
    for name in ("l", "t"):
        spec = getattr(targets, name, None)
        if not spec:
            continue
        col = str(spec["column"])
        if col not in release.columns:
            out[name] = {
                "target": spec,
                "achieved": None,
                "met": False,
                "note": f"column {col!r} not in the release",
            }
            continue
        if len(release) == 0:
            out[name] = {"target": spec, "achieved": None, "met": True}
            continue
        ref = reference[col] if name == "t" and col in reference.columns else None
        distance = str(spec.get("distance", "equal")).lower() if name == "t" else ""
        views = _t_views(
            codes, release[col], ref, as_read=name == "l", ordered=distance == "ordered"
        )
        counts = views[0][0]
        if name == "l":
            variant = str(spec.get("variant", "distinct")).lower()
            achieved, met = _l_value(counts, variant, spec.get("c"), float(spec["l"]))
            out["l"] = {"target": spec, "achieved": achieved, "met": met}
        else:
            if distance == "hierarchical":
                out["t"] = {
                    "target": spec,
                    "achieved": None,
                    "met": None,
                    "note": "hierarchical distance is checked by the engine only",
                }
                continue
            # the ordered distance on text: the largest over the texts, the texts the file
            # shows and the numbers a reader reads (as the engine: TCloseness.distances),
            # decided exactly near t
            achieved, met = _t_within(views, distance, float(spec["t"]))
            out["t"] = {"target": spec, "achieved": achieved, "met": met}
            if ref is not None and len(reference) > len(full):
                # the reference holds records that are not released: with the release in hand,
                # the exact distance pins their sensitive values down (try each candidate
                # value until the distance matches), so only the verdict is published
                out["t"]["achieved"] = None
                out["t"]["withheld"] = True
                out["t"]["note"] = (
                    "value withheld: the distance is measured against the whole input, "
                    "suppressed records included, and its exact value would reveal their "
                    "sensitive values (the verdict is exact)"
                )
    limit = getattr(targets, "suppression_limit", None)
    if limit is not None:
        removed = removed_by_privacy + n_masked
        share, met = _share_within(int(removed), int(input_records), float(limit))
        out["suppression_limit"] = {"target": limit, "achieved": share, "met": met}
    verdicts = [v["met"] for v in out.values() if v.get("met") is not None]
    out["all_met"] = all(verdicts)
    return out
