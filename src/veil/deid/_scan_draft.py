"""Drafting an editable policy from a scan: roles found plus suggested operators."""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

import yaml

from veil.deid.operators._condition import _KEYWORDS
from veil.schema import Role

if TYPE_CHECKING:
    from veil.deid._scan import ColumnFinding, ScanResult

__all__ = ["draft_policy", "draft_yaml", "suggest_operator"]

_MASKS: dict[str, Any] = {
    "email": {"name": "mask", "kind": "email"},
    "phone": {"name": "mask", "kind": "phone"},
    "payment_card": {"name": "mask", "keep_last": 4},
    "iban": {"name": "mask", "keep_last": 4},
}


def _age_bins(f: ColumnFinding) -> list[int] | None:
    if f.minimum is None or f.maximum is None or not math.isfinite(f.minimum + f.maximum):
        return None
    lo = int(math.floor(f.minimum / 10.0) * 10)
    hi = int(math.floor(f.maximum / 10.0) * 10 + 10)
    return list(range(lo, hi + 1, 10))


def suggest_operator(f: ColumnFinding) -> Any:
    """A keyless operator suggestion for a finding (None: keep the column as it is)."""
    if f.role is Role.IDENTIFIER:
        return _MASKS.get(f.kind, "drop")
    if f.role is Role.QUASI:
        if f.kind == "age":
            bins = _age_bins(f)
            return {"name": "generalize", "bins": bins} if bins and len(bins) > 2 else None
        if f.kind in ("date", "birth_date") and f.dtype.startswith("datetime"):
            return {"name": "generalize", "date": "year"}
        if f.kind == "postcode" and not f.dtype.startswith(("int", "float")):
            return {"name": "generalize", "keep": 3}
    return None


def _name(column: str) -> str:
    """A column name as the condition language reads it (back-quoted unless a plain word)."""
    plain = re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", column) and column not in _KEYWORDS
    return column if plain else f"`{column}`"


def draft_policy(
    result: ScanResult, *, k: int = 5, input_options: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The draft policy as a plain dict (see :func:`veil.deid.Policy.from_dict`).

    Examples
    --------
    >>> import pandas as pd
    >>> from veil.deid import scan
    >>> d = draft_policy(scan(pd.DataFrame({"email": ["a@b.org", "c@d.net"], "age": [30, 41]})))
    >>> d["columns"]["email"]
    {'role': 'identifier', 'operator': {'name': 'mask', 'kind': 'email'}}
    >>> d["privacy"]
    {'k': 5, 'algorithm': 'mondrian'}
    """
    policy: dict[str, Any] = {"version": 1}
    if input_options:
        policy["input"] = dict(input_options)
    cols: dict[str, Any] = {}
    for f in result.columns:
        spec: dict[str, Any] = {"role": f.role.value}
        op = suggest_operator(f)
        if op is not None:
            spec["operator"] = op
        cols[f.column] = spec
    policy["columns"] = cols
    if not any(f.role is Role.QUASI for f in result.columns):
        return policy  # k-anonymity needs quasi-identifiers: no targets to propose
    gaps = [f.column for f in result.columns if f.role is Role.QUASI and f.missing_share > 0]
    if gaps:  # the engine needs complete quasi-identifiers: drop the incomplete records
        policy["suppress"] = [" or ".join(f"isna({_name(c)})" for c in gaps)]
    privacy: dict[str, Any] = {"k": int(k)}
    sensitive = [f for f in result.columns if f.role is Role.SENSITIVE and f.distinct >= 2]
    if sensitive:
        privacy["l"] = {"column": sensitive[0].column, "l": 2, "variant": "distinct"}
    # Mondrian needs no hierarchies (numeric QIs become intervals, categorical ones value
    # sets), so the draft meets its own targets as it stands.
    privacy["algorithm"] = "mondrian"
    policy["privacy"] = privacy
    return policy


def _flow(obj: Any) -> str:
    text = yaml.safe_dump(
        obj, default_flow_style=True, sort_keys=False, allow_unicode=True, width=10**6
    )
    return text.strip().removesuffix("...").strip()


def draft_yaml(
    result: ScanResult, *, k: int = 5, input_options: dict[str, Any] | None = None
) -> str:
    """The draft policy as commented YAML text (one line per column with the scan's reason)."""
    d = draft_policy(result, k=k, input_options=input_options)
    lines = [
        "# Veil policy drafted by `veil scan` -- review every line before use.",
        f"# {result.n_rows} records; {result.qi_unique_share:.1%} unique on the quasi-identifiers.",
        "# Identifiers are dropped or masked (no key needed).  For consistent pseudonyms use",
        "#   operator: pseudonymize   with the key in $VEIL_KEY (or key: {file: PATH}).",
        "version: 1",
    ]
    if "input" in d:
        lines.append(f"input: {_flow(d['input'])}")
    lines.append("columns:")
    for f in result.columns:
        key = _flow(f.column)
        comment = f"{f.kind}: {f.reason} (confidence {f.confidence:.2f})".replace("\n", " ")
        lines.append(f"  {key}: {_flow(d['columns'][f.column])}  # {comment}")
    if "suppress" in d:
        lines.append(
            f"suppress: {_flow(d['suppress'])}  # records missing a quasi-identifier are removed"
        )
    if "privacy" not in d:
        lines.append("# no quasi-identifiers found, so no privacy targets are proposed")
        return "\n".join(lines) + "\n"
    lines.append(
        "privacy:  # enforced by Mondrian (no hierarchies needed); with hierarchies use"
        " `algorithm: optimal`; remove `algorithm` to only verify"
    )
    for name, value in d["privacy"].items():
        lines.append(f"  {name}: {_flow(value)}")
    return "\n".join(lines) + "\n"
