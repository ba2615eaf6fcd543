"""Running a policy: operators per column, record suppression, privacy targets, report."""

from __future__ import annotations

import importlib
import os
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from veil.deid._keys import shown
from veil.deid._policy import Policy
from veil.deid._targets import verify_targets
from veil.deid.operators import OperatorContext
from veil.deid.operators._base import data_derived_key
from veil.deid.operators._util import require_unique_columns
from veil.errors import ConfigError, InputError, PolicyError, UnsatisfiableError, VeilError
from veil.schema import Role
from veil.schema._hierarchy import missing_from_hierarchy

__all__ = ["apply", "ApplyResult"]

Progress = Callable[[str, int, int], None]


class ApplyResult(tuple):
    """``(release, report)``; ``.artifacts`` holds operator side outputs (file name -> data)."""

    artifacts: dict[str, Any]

    def __new__(
        cls, release: pd.DataFrame, report: dict[str, Any], artifacts: dict[str, Any]
    ) -> ApplyResult:
        obj = super().__new__(cls, (release, report))
        obj.artifacts = artifacts
        return obj


def _as_policy(policy: Policy | Mapping[str, Any] | str | os.PathLike[str]) -> Policy:
    if isinstance(policy, Policy):
        return policy
    if isinstance(policy, Mapping):
        return Policy.from_dict(policy)
    if isinstance(policy, (str, os.PathLike)):
        return Policy.from_yaml(policy)
    raise PolicyError(
        f"expected a Policy, a dict or a policy file path, got {type(policy).__name__}"
    )


def _reraise(exc: VeilError, policy: Policy, col: str, op_name: str) -> VeilError:
    line = policy.line("columns", col)
    where = f"{policy.source}, line {line}" if line else policy.source
    msg = str(exc)
    what = (
        f"column {col!r}"
        if msg.startswith(f"operator {op_name!r}")
        else f"column {col!r}, operator {op_name!r}"
    )
    return type(exc)(f"{where}: {what}: {msg}")


def _check_hierarchies(df: pd.DataFrame, policy: Policy) -> None:
    for col, spec in policy.columns.items():
        if spec.hierarchy is None or col not in df.columns:
            continue
        missing = spec.hierarchy.missing(df[col].dropna())
        if missing:
            raise policy.error(("columns", col, "hierarchy"), missing_from_hierarchy(missing, col))


def _enforce(
    df: pd.DataFrame, policy: Policy, report: dict[str, Any]
) -> tuple[pd.DataFrame, np.ndarray | None]:
    """The engine's release and the mask of its suppressed rows kept with masked QIs."""
    try:
        bridge = importlib.import_module("veil.anonymity._policy_bridge")
    except ModuleNotFoundError as exc:
        if exc.name not in ("veil.anonymity._policy_bridge", "veil.anonymity"):
            raise
        msg = "the k-anonymity engine is not available: privacy targets are verified, not enforced"
        warnings.warn(msg, RuntimeWarning, stacklevel=3)
        report["warnings"].append(msg)
        return df, None
    try:
        out, info, masked = bridge.enforce_masked(df, policy)
    except VeilError as exc:
        if isinstance(exc, UnsatisfiableError):  # the targets, not the algorithm, are at fault
            line = policy.line("privacy")
        else:
            line = policy.line("privacy", "algorithm") or policy.line("privacy")
        where = f"{policy.source}, line {line}" if line else policy.source
        raise type(exc)(f"{where}: privacy: {exc}") from exc
    report["anonymity"] = info
    return out, masked


def _drop_unused_categories(release: pd.DataFrame) -> pd.DataFrame:
    """``release`` without the categories of its Categorical columns that no record holds.

    A Categorical keeps every category of the input: the value of a record removed by a
    ``suppress`` condition or the privacy engine, or of a quasi-identifier masked to ``*``,
    stayed among them, and Parquet writes the categories as the column's dictionary, so the
    written release named a value that no released cell shows.
    """
    cats = [
        c
        for c in release.columns
        if isinstance(release[c].dtype, pd.CategoricalDtype)
        and len(release[c].cat.categories) > release[c].nunique(dropna=True)
    ]
    # each Arrow dictionary column is rebuilt once (unify, combine, unique over its indices)
    arrow = {c: a for c in release.columns if (a := _arrow_dictionary(release[c])) is not None}
    if not cats and not arrow:
        return release
    out = release.copy(deep=False)
    for c in cats:
        out[c] = release[c].cat.remove_unused_categories()
    for c, a in arrow.items():
        out[c] = a
    return out


def _arrow_dictionary(s: pd.Series) -> pd.Series | None:
    """``s`` (an Arrow dictionary column, ``pd.ArrowDtype(pa.dictionary(...))``) with the
    dictionary entries no record holds removed, order and ``ordered`` kept; None when ``s`` is
    no such column or every entry is used.

    Taking rows keeps an Arrow dictionary whole, as a Categorical keeps its categories, and
    Parquet writes it as the column's dictionary.
    """
    if not isinstance(s.dtype, pd.ArrowDtype):
        return None
    import pyarrow as pa

    if not pa.types.is_dictionary(s.dtype.pyarrow_dtype):
        return None
    chunked = s.array.__arrow_array__()
    if chunked.num_chunks == 0:
        return None
    whole = chunked.unify_dictionaries().combine_chunks()
    idx = whole.indices.to_numpy(zero_copy_only=False)
    valid = ~np.asarray(whole.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    used = np.unique(idx[valid].astype(np.int64))
    if len(used) == len(whole.dictionary):
        return None
    remap = np.zeros(len(whole.dictionary), dtype=np.int64)
    remap[used] = np.arange(len(used))
    new_idx = pa.array(
        np.where(valid, remap[np.where(valid, idx, 0).astype(np.int64)], 0),
        type=whole.indices.type,
        mask=~valid,
    )
    arr = pa.DictionaryArray.from_arrays(
        new_idx, whole.dictionary.take(pa.array(used)), ordered=whole.type.ordered
    )
    return pd.Series(pd.arrays.ArrowExtensionArray(arr), index=s.index, name=s.name)


def apply(
    df: pd.DataFrame,
    policy: Policy | Mapping[str, Any] | str | os.PathLike[str],
    *,
    key_file: str | os.PathLike[str] | None = None,
    seed: int | None = None,
    progress: Progress | None = None,
) -> ApplyResult:
    """Apply a policy to ``df``: returns ``(release, report)``; ``df`` is never modified.

    Steps: check the policy's columns against the data; run each column's operators in the
    declared order; remove the records matching the policy's ``suppress`` conditions
    (evaluated on the *original* values); check hierarchies cover the values; enforce the
    privacy targets with the k-anonymity engine when ``privacy.algorithm`` is set; verify the
    targets; compute the report (actions, risk before/after, information loss, distributions).

    Parameters
    ----------
    df
        The input table.
    policy
        A :class:`Policy`, a policy dict or the path of a policy YAML file.
    key_file
        Secret-key file overriding the policy's ``key`` (keyed operators only).
    seed
        Seed for the operators' non-DP randomness (overrides the policy's ``seed``); a
        non-negative integer, else :class:`~veil.errors.ConfigError`.
    progress
        Optional callback ``(step description, done, total)``.

    Returns
    -------
    ApplyResult
        A ``(release, report)`` tuple; ``.artifacts`` maps file names to operator side outputs.

    Examples
    --------
    >>> df = pd.DataFrame({"name": ["Ann", "Bob", "Cy"], "age": [34, 35, 61]})
    >>> release, report = apply(df, {"columns": {"name": {"role": "identifier", "operator": "drop"},
    ...                                          "age": {"role": "quasi"}}})
    >>> list(release.columns), report["risk"]["before"]["unique_records"]
    (['age'], 3)
    """
    from veil.report._build import build_report

    if not isinstance(df, pd.DataFrame):
        raise InputError(f"apply expects a pandas DataFrame, got {type(df).__name__}")
    if df.shape[0] == 0 or df.shape[1] == 0:
        raise InputError("the table is empty")
    require_unique_columns(df)
    pol = _as_policy(policy)
    pol.check_columns(df)
    steps = [(c, op) for c, s in pol.columns.items() for op in s.operators]
    total = len(steps) + 3
    tick = progress or (lambda _m, _d, _t: None)

    original = df.copy(deep=False)
    original.index = pd.RangeIndex(len(df))
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
        raise ConfigError(f"seed must be a non-negative integer, got {shown(seed)}")
    if seed is not None and seed < 0:  # numpy would raise a bare ValueError
        raise ConfigError(f"seed must be a non-negative integer, got {seed}")
    rng_seed = seed if seed is not None else pol.seed
    ctx = OperatorContext(
        secret_loader=pol.key_loader(key_file),
        rng=np.random.default_rng(rng_seed),
        locale=pol.locale,
        artifacts={},
        base_dir=str(pol.base_dir),
        hierarchies={c: s.hierarchy for c, s in pol.columns.items() if s.hierarchy is not None},
        seed=rng_seed,
        keep_labels=True,  # the report matches released records to input rows by label
    )
    report: dict[str, Any] = {"warnings": [], "actions": []}
    suppress_mask = pol.suppressor.mask(original) if pol.suppressor is not None else None
    # The suppressed records are removed before any operator runs: a data-dependent operator
    # (equal-width or quantile bins, percentile top-coding, a fitted distribution) would
    # otherwise derive what it publishes (bin edges, caps, parameters) from them, e.g. the
    # exact age of a suppressed outlier as the last bin edge.
    work = original
    removed_by_conditions = 0
    if suppress_mask is not None:
        removed_by_conditions = int(np.count_nonzero(suppress_mask))
        work = original.loc[~np.asarray(suppress_mask, dtype=bool)]
    n_after_conditions = len(work)
    seen: list[int] = []  # records each operator was given
    for i, (col, op) in enumerate(steps):
        tick(f"{op.name} {col}", i, total)
        if not op.table_level and col not in work.columns:
            raise pol.error(
                ("columns", col),
                f"column {col!r} no longer exists when operator {op.name!r} runs (dropped or renamed "
                "by an earlier operator; list renaming operators last)",
            )
        n_before = len(work)
        seen.append(n_before)
        try:
            work = op.apply(work, None if op.table_level else col, ctx)
        except VeilError as exc:
            raise _reraise(exc, pol, col, op.name) from exc
        report["actions"].append(
            {
                "column": col,
                "operator": op.name,
                "description": op.describe(),
                "params": op.params(),
                "records_removed": n_before - len(work),
                "stats": op.stats(),
            }
        )
    removed_by_operators = n_after_conditions - len(work)

    tick("record suppression", len(steps), total)
    _check_hierarchies(work, pol)

    tick("privacy targets", len(steps) + 1, total)
    before_privacy = len(work)
    engine_input = work  # the t-closeness reference of the engine and of the check
    masked = None
    targets = pol.privacy
    if targets is not None and targets.algorithm:
        work, masked = _enforce(work, pol, report)
    removed_by_privacy = before_privacy - len(work)

    roles = {
        c: (pol.columns[c].role if c in pol.columns else pol.default_role)
        for c in map(str, df.columns)
    }
    qis = [c for c, r in roles.items() if r is Role.QUASI]
    if targets is not None:
        report["targets"] = verify_targets(
            work,
            qis,
            targets,
            removed_by_privacy=removed_by_privacy,
            input_records=before_privacy,  # the engine's base for its suppression limit
            suppressed=masked,
            reference=engine_input,
        )
        report["targets"]["mode"] = (
            "enforced" if targets.algorithm and "anonymity" in report else "verified"
        )

    # columns whose operators published an aggregate of more records than are released
    # (removed or masked later): their before mean/std would give, by difference, those records
    masked_any = masked is not None and bool(np.asarray(masked, dtype=bool).any())
    fitted = [
        (op, n, op.fitted_columns(None if op.table_level else col))
        for (col, op), n in zip(steps, seen)
    ]
    fitted_on_more = {c for _, n, cols in fitted if n != len(work) or masked_any for c in cols}
    by_engine = removed_by_privacy + (int(np.count_nonzero(masked)) if masked_any else 0)
    if by_engine:
        # what a data-fitted operator published (bin edges, codes, fitted parameters, PCA
        # artifacts, resampled values) was computed with the records the engine then dropped
        # or masked (suppressed: mask hides their quasi-identifiers, not what was fitted on
        # them; their other columns are released as they are)
        for op, n, cols in fitted:
            if cols and (n > len(work) or (masked_any and set(cols) & set(qis))):
                fitted_on = (
                    f"operator {op.name!r} on {', '.join(map(repr, cols))} was fitted on "
                    f"{n} records, including the {by_engine} the privacy engine then suppressed"
                )
                # an operator that already warned its edges or codes come from the data gets
                # the engine's figures in that warning: one warning per column, not two
                keys = [data_derived_key(op, c) for c in cols]
                if len(keys) == 1 and ctx.amend(keys[0], f" (here: {fitted_on})"):
                    continue
                ctx.warn_once(
                    f"{fitted_on}: what it publishes (edges, codes, fitted parameters, "
                    "artifacts, resampled values) can reveal theirs; use fixed parameters for a "
                    "release"
                )
    bare = [
        c
        for c, r in roles.items()
        if r is Role.IDENTIFIER
        and not (c in pol.columns and pol.columns[c].operators)
        and c in work.columns
    ]
    if bare:  # a direct identifier in the release, as it was in the input
        ctx.warn_once(
            f"{len(bare)} identifier column(s) have no operator and are released as they are: "
            f"{', '.join(map(repr, bare[:10]))}; give each an operator (drop, pseudonymize, "
            "tokenize, mask, fake) or another role"
        )
    report["warnings"].extend(ctx.warnings)
    tick("report", len(steps) + 2, total)
    report.update(
        build_report(
            original,
            work,
            pol,
            roles,
            suppression={
                "conditions": list(pol.suppress),
                "records_removed_by_conditions": removed_by_conditions,
                "records_removed_by_operators": removed_by_operators,
                "records_removed_by_privacy": removed_by_privacy,
            },
            masked=masked,
            fitted_on_more=fitted_on_more,
        )
    )
    release = work
    if any(getattr(op, "reset_index", False) for _, op in steps):  # a suppress operator's
        release = release.reset_index(drop=True)
    elif not isinstance(df.index, pd.RangeIndex) or not df.index.equals(pd.RangeIndex(len(df))):
        release = release.set_axis(df.index[np.asarray(release.index, dtype=np.int64)], axis=0)
    release = _drop_unused_categories(release)
    release.attrs = {k: v for k, v in df.attrs.items() if k == "veil_source"}
    tick("done", total, total)
    return ApplyResult(release, report, dict(ctx.artifacts))
