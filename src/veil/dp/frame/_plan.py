"""A calibrated, not yet executed DP group-by query: accuracy first, then one release.

Example
-------
>>> import pandas as pd, warnings
>>> from veil.dp.frame import PrivateFrame
>>> df = pd.DataFrame({"county": ["a", "b", "a"], "age": [30, 40, 50]})
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore")
...     pf = PrivateFrame(df, accountant=False, random_state=0)
>>> plan = pf.groupby("county", keys=["a", "b"]).plan(n="count", epsilon=1.0)
>>> float(plan.accuracy(0.05).loc["n", "ci_halfwidth"])
3.0
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from veil.dp import _samplers
from veil.dp._canon import missing_cells, real_dtype, release_column
from veil.dp.frame import _noise
from veil.dp.frame._bounding import bound_contributions, persons_per_group
from veil.dp.frame._budget import (
    COUNT_KINDS,
    Component,
    allocate,
    build_components,
    halfwidths,
    output_components,
)
from veil.dp.frame._compute import ColumnStats, finish_output, noisy_component, row_counts
from veil.dp.frame._partition import (
    encode_public,
    encode_selected_groups,
    key_frame,
    key_lookup,
    selection_threshold,
)
from veil.dp.frame._quantile import integer_candidates, rank_halfwidth
from veil.dp.frame._spec import Agg
from veil.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from veil.dp.frame._frame import PrivateFrame

__all__ = ["QueryPlan"]


def _check_neighbouring(frame: Any, by: list[str], aggs: dict[str, Agg], neighbouring: str) -> bool:
    """Validate the neighbouring relation; True for replacement neighbours."""
    if neighbouring == "add_remove":
        return False
    if neighbouring != "replace":
        raise ConfigError(f"neighbouring must be 'add_remove' or 'replace', got {neighbouring!r}")
    if by or frame.privacy_unit is not None or frame._mask is not None:
        raise ConfigError(
            "neighbouring='replace' (public row count, diffprivlib's bounded DP) is only "
            "available for ungrouped queries without privacy unit or filter"
        )
    checked: set[tuple[str, bool]] = set()
    for agg in aggs.values():
        if agg.column is None:
            continue
        s = frame._df[agg.column]
        # the values each count is computed from (execute's reading): COUNT(col) counts the
        # non-missing cells, a sum, mean, variance or quantile the cells that read as numbers;
        # both counts are released exactly (sum = n * mid + centred sum), so each must be the
        # public row count.  A numeric dtype reads its cells as numbers either way, so a NaN
        # that pandas does not call missing (double[pyarrow], pandas 2's Float64) drops out of
        # COUNT(col) too; a text cell such as 'n/a' would move the sum by a whole value, not
        # covered by the noise of the centred sum
        numeric = _reads_numbers(agg.func, s)
        if (agg.column, numeric) in checked:
            continue
        checked.add((agg.column, numeric))
        missing = bool(missing_cells(s).any())
        no_number = not missing and numeric and np.isnan(frame._values(agg.column, None)).any()
        if missing or (no_number and real_dtype(s.dtype)):
            raise ConfigError(
                f"neighbouring='replace' needs column {agg.column!r} without missing values "
                "(the number of values must be public)"
            )
        if no_number:
            raise ConfigError(
                f"neighbouring='replace' needs column {agg.column!r} without text that is no "
                f"number (its {agg.func} takes the numbers, and their number must be public)"
            )
    return True


def _reads_numbers(kind: str, s: pd.Series) -> bool:
    """Whether an aggregate or component of ``kind`` reads column ``s``'s cells as numbers:
    everything but ``COUNT(col)``, and that one too on a numeric or boolean dtype, where the
    two readings are equal (so both share one reading of the column)."""
    return kind != "count" or real_dtype(s.dtype)


def _check_listed(frame: Any, aggs: dict[str, Agg]) -> None:
    """A candidate list and an integer declaration both fix a quantile's answers: refused
    together (before any charge), as ``veil.dp.tools`` refuses ``integer=True`` with
    ``candidates=``."""
    for name, agg in aggs.items():
        if agg.candidates is not None and frame._is_integer(agg.column):
            raise ConfigError(
                f"output {name!r}: column {agg.column!r} is in integer_columns and the {agg.func} "
                "lists candidates; both fix the possible answers: give one (to restrict a list "
                "to integers, list only integers)"
            )


def _key_rank(value: Any) -> tuple[Any, ...]:
    """Total order of released keys of an object column: numbers, then booleans, then texts,
    then anything else by type name and text.  Booleans are apart from numbers because
    ``True == 1``: a plain sort ties them and a stable sort then keeps the data's row order."""
    if isinstance(value, bool):
        return (1, value)
    if isinstance(value, (int, float)):
        return (0, value)
    if isinstance(value, str):
        return (2, value)
    return (3, type(value).__name__, str(value))


def _sort_keys(out: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Privately selected rows sorted by key, so that their order is a function of the released
    keys alone (never of the data's row order); object columns sort by :func:`_key_rank`."""

    def key(s: pd.Series) -> pd.Series:
        if s.dtype != object:
            return s
        return s.map(_key_rank, na_action="ignore")

    out = out.sort_values(by, na_position="last", kind="stable", key=key)
    return out.reset_index(drop=True)


class QueryPlan:
    """A DP query with its budget split and noise calibrated, but nothing released yet.

    Built by :meth:`veil.dp.frame.GroupedFrame.plan`.  :meth:`accuracy` reports confidence
    interval half-widths without touching the data or the budget; :meth:`execute` checks and
    charges the accountant once, with the query's total (epsilon, delta), then computes.

    Attributes
    ----------
    epsilon, delta : float
        What :meth:`execute` charges.  ``delta`` is the part actually used (partition selection
        and/or Gaussian noise); a delta given but unused is not charged.
    components : list of Component
        The noisy per-group vectors and their calibration.
    selection_threshold : int or None
        Noisy distinct-person count a group needs to be released (private partition selection).

    Examples
    --------
    >>> import pandas as pd
    >>> from veil.dp import BudgetAccountant
    >>> from veil.dp.frame import PrivateFrame
    >>> df = pd.DataFrame({"county": ["a", "b", "a", "b"], "age": [30, 41, 52, 63]})
    >>> acc = BudgetAccountant(epsilon=1.0)
    >>> pf = PrivateFrame(df, accountant=acc, bounds={"age": (18, 100)})
    >>> plan = pf.groupby("county", keys=["a", "b"]).plan(
    ...     n="count", avg_age=("age", "mean"), epsilon=0.5
    ... )
    >>> acc_table = plan.accuracy(alpha=0.05, group_size=100)  # 95% CI half-widths, no charge
    >>> acc_table["epsilon"].round(3).tolist(), acc_table["ci_halfwidth"].round(1).tolist()
    ([0.167, 0.333], [18.0, 23.2])
    >>> acc.total()
    (epsilon=0.0, delta=0.0)
    >>> out = plan.execute()  # charges (0.5, 0) once, then draws the noise
    >>> out.columns.tolist(), acc.total()
    (['county', 'n', 'avg_age'], (epsilon=0.5, delta=0.0))

    Without public keys a group is released only when its noisy count of people reaches the
    selection threshold (private partition selection, which needs ``delta > 0``):

    >>> plan = pf.groupby("county").plan(n="count", epsilon=0.5, delta=1e-6)
    >>> plan.delta, plan.selection_threshold
    (1e-06, 107)
    """

    def __init__(
        self,
        frame: PrivateFrame,
        by: list[str],
        keys: Any,
        aggs: dict[str, Agg],
        *,
        epsilon: float,
        delta: float,
        mechanism: str,
        max_groups: int,
        max_rows: int,
        selection_fraction: float,
        neighbouring: str = "add_remove",
    ) -> None:
        self._frame = frame
        self.replace = _check_neighbouring(frame, by, aggs, neighbouring)
        self.by = by
        self.keys = None if keys is None else key_frame(keys, by)
        # before any charge: keys that denote one value (1 and '1') are refused here
        self._key_lookup = None if self.keys is None else key_lookup(self.keys, by)
        _check_listed(frame, aggs)
        self.aggs = aggs
        self.mechanism = mechanism
        self.max_groups = max_groups
        self.max_rows = max_rows
        self.private_selection = bool(by) and keys is None
        # from the query alone: never from the columns' dtypes, which read_csv infers from
        # every person's cells (see veil.dp.frame._budget)
        self._comps = build_components(aggs, max_rows=max_rows, replace=self.replace)
        self.eps_selection, self.delta_selection, self.epsilon, self.delta = allocate(
            self._comps,
            epsilon=epsilon,
            delta=delta,
            mechanism=mechanism,
            max_groups=max_groups,
            private_selection=self.private_selection,
            selection_fraction=selection_fraction,
        )
        self.selection_threshold: int | None = None
        if self.private_selection:
            self.selection_threshold = selection_threshold(
                self.eps_selection, self.delta_selection, max_groups
            )

    @property
    def components(self) -> list[Component]:
        return list(self._comps.values())

    def __repr__(self) -> str:
        outs = ", ".join(f"{k}={a.func}({a.column or '*'})" for k, a in self.aggs.items())
        return (
            f"QueryPlan(by={self.by}, {outs}, epsilon={self.epsilon:g}, delta={self.delta:g}, "
            f"max_groups={self.max_groups}, max_rows={self.max_rows})"
        )

    # ------------------------------------------------------------------ accuracy
    def accuracy(self, alpha: float = 0.05, group_size: float | None = None) -> pd.DataFrame:
        """Confidence-interval half-widths per output column, before anything is released.

        Parameters
        ----------
        alpha
            Each interval holds with probability at least ``1 - alpha`` (per group).
        group_size
            Assumed number of (non-missing) values in a group; needed for means, variances and
            standard deviations, whose error shrinks with the group size.  Without it their
            half-width is NaN.  Quantile errors in the column's units depend on the data's
            spread: ``ci_halfwidth`` is NaN for them; for integer columns and listed candidates
            (permute-and-flip over public candidates) ``rank_halfwidth`` bounds the error in
            ranks instead
            (:func:`~veil.dp.frame._quantile.rank_halfwidth`).

        Returns
        -------
        pandas.DataFrame
            One row per output: function, column, epsilon, mechanism, noise scale(s),
            ``ci_halfwidth`` and ``rank_halfwidth`` (quantiles over public candidates: integer
            columns or a candidate list; NaN otherwise).
        """
        if not 0 < alpha < 1:
            raise ConfigError(f"alpha must lie in (0, 1), got {alpha}")
        if group_size is not None and not (0 < float(group_size) < math.inf):
            raise ConfigError(f"group_size must be a positive number, got {group_size}")
        rows = []
        for name, agg in self.aggs.items():
            comps = [self._comps[k] for k in output_components(agg, self.replace)]
            counts = None
            if group_size is not None:
                cnt = comps[0]
                counts = max(float(group_size) - cnt.halfwidth(alpha / len(comps)), 1.0)
            hw = halfwidths(agg, self._comps, alpha, counts, self.replace)
            note = ""
            rank_hw = math.nan
            if agg.func in ("median", "quantile"):
                cand = None
                if agg.candidates is not None:  # a public list: the same bound over its size
                    cand = len(agg.candidates)
                elif self._frame._is_integer(agg.column):  # type: ignore[arg-type]
                    cand = integer_candidates(agg.bounds)  # type: ignore[arg-type]
                if cand is not None:
                    q = comps[0]
                    rank_hw = rank_halfwidth(cand, q.scale, q.sensitivity, alpha)
                    note = "permute-and-flip: rank error (value units depend on the data)"
                else:
                    note = "exponential mechanism: error depends on the data's spread"
            elif math.isnan(float(np.asarray(hw))):
                note = "give group_size for means/variances"
            rows.append(
                {
                    "output": name,
                    "func": agg.func,
                    "column": agg.column or "*",
                    "epsilon": sum(c.epsilon for c in comps),
                    "mechanism": "+".join(dict.fromkeys(c.mechanism for c in comps)),
                    "noise_scale": ", ".join(f"{c.scale:.4g}" for c in comps),
                    "ci_halfwidth": float(np.asarray(hw)),
                    "rank_halfwidth": rank_hw,
                    "note": note,
                }
            )
        return pd.DataFrame(rows).set_index("output")

    # ------------------------------------------------------------------ release
    def execute(self, *, with_ci: bool = False, alpha: float = 0.05) -> pd.DataFrame:
        """Charge the accountant once and release the noisy table.

        Parameters
        ----------
        with_ci
            Add a ``<output>_ci`` column per output with the half-width of a ``1 - alpha``
            interval (for means/variances computed from the *noisy* counts: post-processing,
            no extra budget).
        alpha
            Level of those intervals.

        Returns
        -------
        pandas.DataFrame
            Group columns then outputs; public keys in the given order, privately selected
            keys sorted.  Private selection groups rows, and writes their keys, by per-value
            group keys (:func:`veil.dp._canon.group_key`: ``30``, ``30.0`` and ``'30'`` are
            the key ``30``; ``True`` and ``'true'`` the key ``True``), so neither the groups nor
            the key column's dtype follow the data's dtype (which one person's missing or text
            cell changes).  Noisy counts are integers and may be negative (unbiased).
        """
        frame = self._frame
        self._check_drawable()  # before the charge: an undrawable noise would waste the budget
        frame._charge(self.epsilon, self.delta)
        rng = frame._rng
        codes, keyframe, value_rows, n_rows = self._bounded_rows(rng)
        n_groups = len(keyframe)
        row_total = None
        noisy: dict[tuple, np.ndarray] = {}
        stats: dict[tuple[bool, Any], ColumnStats] = {}  # by (read as numbers, column)
        # sums before counts: an ungrouped sum also tells whether the column has missing values
        order = sorted(self._comps, key=lambda k: k[0] in COUNT_KINDS)
        for key in order:
            comp = self._comps[key]
            exact = None
            column_stats = None
            if comp.column is None:
                if row_total is None:
                    row_total = row_counts(codes, n_rows, n_groups)
                exact = row_total
            else:
                # COUNT(col) counts the non-missing cells; every other component reads the
                # cells as numbers (text that is no number is missing), whatever else the
                # query asks: one column may be read both ways (equal for numeric dtypes)
                numeric = _reads_numbers(comp.kind, frame._df[comp.column])
                skey = (numeric, comp.column)
                if skey not in stats:
                    values = frame._values(comp.column, value_rows, numeric=numeric)
                    squares = {c.bounds for c in self._comps.values() if c.kind == "csq"}
                    stats[skey] = ColumnStats(codes, n_groups, values, squares)
                column_stats = stats[skey]
                if comp.kind != "quantile":
                    exact = column_stats.exact(comp.kind, comp.bounds)
            integer = comp.column is not None and frame._is_integer(comp.column)
            noisy[key] = noisy_component(comp, exact, column_stats, n_groups, rng, integer)
        out = keyframe.reset_index(drop=True).copy()
        if self.private_selection:  # released keys' dtype: from the released keys alone
            out = pd.DataFrame({c: release_column(keyframe[c]) for c in self.by})
        for name, agg in self.aggs.items():
            parts = [noisy[k] for k in output_components(agg, self.replace)]
            out[name] = finish_output(agg.func, agg.bounds, parts)
            if with_ci:
                counts = parts[0] if agg.func in ("mean", "var", "std") else None
                hw = halfwidths(agg, self._comps, alpha, counts, self.replace)
                out[f"{name}_ci"] = np.broadcast_to(np.asarray(hw, dtype=np.float64), len(out))
        if self.private_selection and self.by:
            out = _sort_keys(out, self.by)
        if not self.by:
            out = out.reset_index(drop=True)
        return out

    def _check_drawable(self) -> None:
        """Raise :class:`~veil.errors.NoiseScaleError` when a noise scale lies outside what the exact samplers
        draw (they would refuse it only after the budget was charged)."""
        if self.private_selection:
            _samplers._check_scale(self.max_groups / self.eps_selection)
        for comp in self._comps.values():
            if comp.mechanism == "discrete_laplace":
                _samplers._check_scale(comp.scale)
            elif comp.mechanism == "discrete_gaussian":
                _samplers._check_sigma(comp.scale)
            elif comp.mechanism == "laplace":  # grid units, as _samplers.laplace_fp draws them
                args = (comp.scale, comp.noise_sensitivity, comp.coords)
                _samplers._check_scale(_samplers.fp_laplace_params(*args)[1])
            elif comp.mechanism == "gaussian":
                args = (comp.scale, comp.noise_sensitivity, comp.coords)
                _samplers._check_sigma(_samplers.fp_gaussian_params(*args)[1])

    def _bounded_rows(self, rng):
        """Rows entering the aggregation: filter, keys, contribution bounding, selection.

        Returns ``(codes or None, key table, row index into the table or None, n_rows)``;
        ``codes`` is ``None`` for an ungrouped query (one group).
        """
        frame = self._frame
        df = frame._df
        rows = frame._row_index()
        persons = frame._person_codes(rows)
        if not self.by and persons is None:  # ungrouped, row-level: nothing to bound
            return None, pd.DataFrame(index=range(1)), rows, len(df) if rows is None else rows.size
        if self.keys is not None:
            codes, keyframe = encode_public(df, self.by, self.keys, self._key_lookup)
        else:
            codes, keyframe = encode_selected_groups(df, self.by)
        n_groups = len(keyframe)
        if rows is not None:
            codes = codes[rows]
        keep = codes >= 0
        if persons is not None:
            keep &= persons >= 0
        sel = None if keep.all() else np.flatnonzero(keep)
        if sel is not None:
            codes = codes[sel]
            persons = None if persons is None else persons[sel]
        if persons is not None:
            bounded = bound_contributions(
                persons, codes, n_groups,
                max_groups=self.max_groups, max_rows=self.max_rows, priorities=rng.raw,
            )  # fmt: skip
            if not bounded.all():
                idx = np.flatnonzero(bounded)
                sel = idx if sel is None else sel[idx]
                codes, persons = codes[idx], persons[idx]
        if self.private_selection:
            codes, keyframe, kept_idx = self._select(codes, persons, keyframe, rng)
            if kept_idx is not None:
                sel = kept_idx if sel is None else sel[kept_idx]
        value_rows = sel if rows is None else (rows if sel is None else rows[sel])
        if not self.by:
            codes = None
        n_rows = len(df) if value_rows is None else value_rows.size
        return codes, keyframe, value_rows, n_rows

    def _select(self, codes, persons, keyframe, rng):
        """Private partition selection; returns remapped codes, kept keys and kept row index.

        Candidates are the groups holding at least one person *after* filtering and
        contribution bounding.  ``keyframe`` also lists groups whose rows were all removed (by
        ``where``, a missing person id or the bounding); with a count of 0 such a group must
        never be released: otherwise one person with rows in ``k > max_groups`` groups makes
        ``k`` groups appear, each with probability up to ``delta'`` (``k delta'`` in all, not
        ``delta``), and rows dropped by a filter could surface their keys.  With the rule, a
        neighbour changes the distinct count of at most ``max_groups`` candidates by one each
        (``0 -> 1`` is released with probability at most ``delta'``, ``c -> c + 1`` moves the
        discrete Laplace by one step of ratio ``e^eps'``): ``(eps_sel, delta_sel)`` by basic
        composition over those groups.
        """
        n_groups = len(keyframe)
        if persons is None:
            distinct = np.bincount(codes, minlength=n_groups)
        else:
            distinct = persons_per_group(persons, codes, n_groups)
        scale = self.max_groups / self.eps_selection
        noisy = distinct + _noise.discrete_laplace(rng, scale, n_groups)
        kept = (distinct > 0) & (noisy >= self.selection_threshold)
        remap = np.full(n_groups, -1, dtype=np.int64)
        remap[kept] = np.arange(int(kept.sum()), dtype=np.int64)
        new_codes = remap[codes]
        ok = new_codes >= 0
        if ok.all():
            return new_codes, keyframe[kept].reset_index(drop=True), None
        idx = np.flatnonzero(ok)
        return new_codes[idx], keyframe[kept].reset_index(drop=True), idx
