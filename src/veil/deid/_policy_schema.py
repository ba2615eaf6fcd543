"""The policy file's schema: allowed keys, types and values, checked with line numbers.

A tiny declarative validator (no dependency): a schema node is a :class:`Field` (a type test
with a description) or a :class:`Record` (a mapping with known keys).  Unknown keys are errors,
so that a misspelt key never silently does nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from veil.deid._keys import KEY_NAME_HIDDEN, may_be_key_name, shown
from veil.deid._policy_yaml import policy_error

__all__ = ["validate_policy", "choice_value", "ROLES", "ALGORITHMS"]

ROLES = ("identifier", "quasi", "sensitive", "insensitive")
ALGORITHMS = ("optimal", "heuristic", "mondrian", "mdav")


@dataclass(frozen=True)
class Field:
    """A leaf: ``check(value)`` returns None when valid, else a message."""

    check: Callable[[Any], str | None]


@dataclass(frozen=True)
class Record:
    """A mapping with known keys (``required`` must be present)."""

    fields: Mapping[str, Any]
    required: tuple[str, ...] = ()
    what: str = "a mapping"
    extra: Any = None  # schema for unknown keys (None: unknown keys are errors)


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _str(v: Any) -> str | None:
    return None if isinstance(v, str) and v.strip() else "must be a non-empty text"


def choice_value(v: Any) -> str:
    """A choice setting as the schema compares it: ``"Random "``, ``"random"`` alike."""
    return str(v).strip().lower().replace("-", "_")


def _choice(*choices: str) -> Field:
    def check(v: Any) -> str | None:
        if isinstance(v, str) and choice_value(v) in choices:
            return None
        return f"must be one of: {', '.join(choices)} (got {shown(v)})"

    return Field(check)


def _int(lo: int | None = None) -> Field:
    def check(v: Any) -> str | None:
        if not isinstance(v, int) or isinstance(v, bool):
            return f"must be an integer (got {shown(v)})"
        if lo is not None and v < lo:
            return f"must be at least {lo} (got {v})"
        return None

    return Field(check)


def _num(lo: float, hi: float, lo_open: bool = False) -> Field:
    def check(v: Any) -> str | None:
        if not _is_num(v):
            return f"must be a number (got {shown(v)})"
        if v < lo or v > hi or (lo_open and v == lo):
            left = "(" if lo_open else "["
            return f"must be in {left}{lo}, {hi}] (got {v})"
        return None

    return Field(check)


def _list_of_str(v: Any) -> str | None:
    if isinstance(v, list) and all(isinstance(x, (str, int, float)) for x in v):
        return None
    return "must be a list of texts"


def _bool(v: Any) -> str | None:
    return None if isinstance(v, bool) else f"must be true or false (got {shown(v)})"


def _suppress(v: Any) -> str | None:
    if isinstance(v, str) and v.strip():
        return None
    if isinstance(v, list) and all(isinstance(x, str) and x.strip() for x in v):
        return None
    return 'must be a condition or a list of conditions (e.g. "Age < 30")'


def _operator(v: Any) -> str | None:
    items = v if isinstance(v, list) else [v]
    if not items:
        return "must name at least one operator"
    for item in items:
        if isinstance(item, str) and item.strip():
            continue
        if isinstance(item, Mapping) and isinstance(item.get("name"), str):
            continue
        return "must be an operator name, a mapping with 'name' and parameters, or a list of those"
    return None


def _hierarchy(v: Any) -> str | None:
    if isinstance(v, str) and v.strip():
        return None
    if isinstance(v, Mapping) and v:
        return None
    return "must be a file path (.csv or .yaml) or a mapping value -> [levels...]"


INPUT = Record(
    {
        "delimiter": Field(_str),
        "encoding": Field(_str),
        "missing_values": Field(_list_of_str),
        "parse_dates": Field(lambda v: None if isinstance(v, bool) else _list_of_str(v)),
        "names": Field(_list_of_str),
        "columns": Field(_list_of_str),
        "header": Field(_bool),
    }
)
KEY = Record({"env": Field(_str), "file": Field(_str)}, what="a mapping with env or file")
COLUMN = Record(
    {
        "role": _choice(*ROLES, "qi", "quasi_identifier", "direct", "other"),
        "operator": Field(_operator),
        "operators": Field(_operator),
        "hierarchy": Field(_hierarchy),
        "description": Field(lambda v: None if isinstance(v, str) else "must be text"),
    },
    required=("role",),
)
L_DIV = Record(
    {
        "column": Field(_str),
        "l": _num(1, float("inf")),
        "variant": _choice("distinct", "entropy", "recursive"),
        "c": _num(0, float("inf"), lo_open=True),
    },
    required=("column", "l"),
)
T_CLOSE = Record(
    {
        "column": Field(_str),
        "t": _num(0, 1, lo_open=True),
        "distance": _choice("equal", "ordered", "hierarchical"),
        "hierarchy": Field(_hierarchy),
    },
    required=("column", "t"),
)
PRIVACY = Record(
    {
        "k": _int(1),
        "l": L_DIV,
        "t": T_CLOSE,
        "suppression_limit": _num(0, 1),
        "algorithm": _choice(*ALGORITHMS),
        "objective": Field(_str),
        "average_risk": _num(0, 1, lo_open=True),
        "time_limit": _num(0, float("inf"), lo_open=True),
        "sampling_fraction": _num(0, 1, lo_open=True),
        "population": Field(_str),
        "utility_target": Field(_str),
        "suppressed": _choice("drop", "mask"),
        "row_order": _choice("input", "random"),
        "options": Field(lambda v: None if isinstance(v, Mapping) else "must be a mapping"),
    }
)
POLICY = Record(
    {
        "version": Field(
            lambda v: None if v == 1 else f"unsupported policy version {shown(v)} (expected 1)"
        ),
        "description": Field(lambda v: None if isinstance(v, str) else "must be text"),
        "input": INPUT,
        "key": KEY,
        "locale": Field(_str),
        "seed": _int(0),
        "default_role": _choice(*ROLES, "qi", "other"),
        "columns": Record({}, extra=COLUMN, what="a mapping column -> {role, operator, ...}"),
        "suppress": Field(_suppress),
        "privacy": PRIVACY,
    },
    required=("columns",),
)


def _validate(schema: Any, value: Any, path: tuple[Any, ...], source: str, lines: dict) -> None:
    if isinstance(schema, Field):
        msg = schema.check(value)
        if msg:
            raise policy_error(source, lines, path, msg)
        return
    if not isinstance(value, Mapping):
        raise policy_error(
            source, lines, path, f"must be {schema.what} (got {type(value).__name__})"
        )
    for key in schema.required:
        if key not in value:
            raise policy_error(source, lines, path, f"missing required key '{key}'")
    for key, sub in value.items():
        spec = schema.fields.get(key) if isinstance(key, str) else None
        if spec is None:
            spec = schema.extra
        if spec is None:
            allowed = ", ".join(schema.fields)
            if may_be_key_name(str(key)):  # `key: {9f86...}`: the name is the secret key
                raise policy_error(
                    source,
                    lines,
                    path,
                    f"unknown key (allowed: {allowed}); {KEY_NAME_HIDDEN}",
                )
            raise policy_error(source, lines, path + (key,), f"unknown key (allowed: {allowed})")
        _validate(spec, sub, path + (key,), source, lines)


def validate_policy(data: Any, source: str, lines: dict) -> None:
    """Raise :class:`~veil.errors.PolicyError` (key + line) unless ``data`` fits the schema."""
    if not isinstance(data, Mapping):
        raise policy_error(source, lines, (), "a policy must be a mapping with at least 'columns'")
    cols = data.get("columns")
    if isinstance(cols, Mapping):
        # shorthand: `Age: quasi` means `Age: {role: quasi}`
        for name, spec in cols.items():
            if isinstance(spec, str):
                _validate(COLUMN.fields["role"], spec, ("columns", name), source, lines)
    shorthand = (
        {k: v for k, v in (cols or {}).items() if isinstance(v, str)}
        if isinstance(cols, Mapping)
        else {}
    )
    view = dict(data)
    if shorthand:
        view["columns"] = {k: ({"role": v} if k in shorthand else v) for k, v in cols.items()}
    _validate(POLICY, view, (), source, lines)
    key = data.get("key")
    if isinstance(key, Mapping) and len(key) != 1:
        raise policy_error(source, lines, ("key",), "give exactly one of env or file")
    privacy = data.get("privacy")
    if isinstance(privacy, Mapping) and not privacy.get("algorithm"):
        for engine_only in ("population", "utility_target"):  # read by the engine only
            if engine_only in privacy:
                raise policy_error(
                    source,
                    lines,
                    ("privacy", engine_only),
                    "needs privacy.algorithm (optimal or heuristic): without it the targets "
                    "are only verified and this key would be ignored",
                )
