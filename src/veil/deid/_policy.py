"""The policy: per-column roles and operators, record suppression and privacy targets.

A policy is a YAML file (see ``docs/deid.md``)::

    version: 1
    columns:
      id:      {role: identifier, operator: drop}
      Age:     {role: quasi, operator: {name: generalize, bins: [0, 30, 50, 120]}}
      County:  {role: quasi, hierarchy: hierarchies/county.csv}
      Illness: {role: sensitive}
    suppress: ["Age < 18"]
    privacy: {k: 5, l: {column: Illness, l: 2}}

Every column of the data must be listed, unless ``default_role`` says what unlisted columns
are: Veil never silently treats a column as a quasi-identifier (or as harmless).  Errors name
the key and the line of the file.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from veil.deid._policy_schema import POLICY, choice_value, validate_policy
from veil.deid._policy_yaml import load_with_lines, policy_error
from veil.deid.operators import Operator, OperatorParameterError, get_operator
from veil.errors import ConfigError, InputError, PolicyError
from veil.schema import Hierarchy, Role

__all__ = ["Policy", "ColumnSpec", "PrivacyTargets"]


@dataclass
class ColumnSpec:
    """What the policy says about one column.

    Examples
    --------
    >>> p = Policy.from_dict({"columns": {
    ...     "email": {"role": "identifier", "operator": "drop"},
    ...     "zip": {"role": "quasi", "hierarchy": {"1301": ["13**", "*"], "1401": ["14**", "*"]}},
    ... }})
    >>> spec = p.columns["zip"]
    >>> spec.role, spec.hierarchy.height, spec.hierarchy_source
    (<Role.QUASI: 'quasi'>, 3, 'inline')
    >>> [op.name for op in p.columns["email"].operators]
    ['drop']
    """

    name: str
    role: Role
    operators: list[Operator] = field(default_factory=list)
    hierarchy: Hierarchy | None = None
    hierarchy_source: str | None = None
    line: int | None = None


@dataclass
class PrivacyTargets:
    """Privacy targets: enforced when ``algorithm`` is set, otherwise verified only.

    Examples
    --------
    >>> from veil.deid import apply
    >>> df = pd.DataFrame({"zip": ["1301", "1302", "1401", "1402"],
    ...                    "illness": ["flu", "cold", "flu", "hiv"]})
    >>> zips = {z: [z[:2] + "**", "*"] for z in df["zip"]}
    >>> policy = {
    ...     "columns": {"zip": {"role": "quasi", "hierarchy": zips}, "illness": "sensitive"},
    ...     "privacy": {"k": 2, "l": {"column": "illness", "l": 2}, "algorithm": "optimal"},
    ... }
    >>> targets = Policy.from_dict(policy).privacy
    >>> targets.k, targets.l, targets.algorithm
    (2, {'column': 'illness', 'l': 2}, 'optimal')
    >>> release, report = apply(df, policy)  # enforced: zip generalized to 2 digits
    >>> release["zip"].tolist(), report["targets"]["mode"], report["targets"]["all_met"]
    (['13**', '13**', '14**', '14**'], 'enforced', True)
    """

    k: int | None = None
    l: dict[str, Any] | None = None  # noqa: E741
    t: dict[str, Any] | None = None
    suppression_limit: float | None = None
    algorithm: str | None = None
    objective: str | None = None
    raw: dict[str, Any] = field(default_factory=dict)


def _operator_items(value: Any) -> list[tuple[str, dict[str, Any]]]:
    items = value if isinstance(value, list) else [value]
    out = []
    for item in items:
        if isinstance(item, str):
            out.append((item.strip(), {}))
        else:
            params = {k: v for k, v in item.items() if k != "name"}
            out.append((str(item["name"]).strip(), params))
    return out


def _check_fake_name_columns(
    steps: list[tuple[str, Operator, tuple[Any, ...]]],
    err: Callable[[tuple[Any, ...], str], PolicyError],
) -> None:
    """Refuse a fake e-mail built from a ``name_column`` that no fake operator replaced before.

    Operators run in the policy's order, and ``name_column`` is read as it is when the e-mail
    operator runs: a name column listed after the e-mail column, dropped, or not faked at all
    still holds the real names, and every "fake" address spelt one out
    (``wanjiku.kamau@hotmail.com`` for Wanjiku Kamau), also in a release without the names.
    """
    faked: set[str] = set()
    for col, op, path in steps:
        source = getattr(op, "name_column", None)
        if op.name == "fake" and getattr(op, "kind", None) == "email" and source is not None:
            if source not in faked:
                raise err(
                    path + ("name_column",),
                    f"column {col!r}: operator 'fake' builds the addresses from {source!r}, "
                    "which no fake operator listed before it replaces: they would spell out "
                    f"the real names; give {source!r} a fake operator (kind name) listed above "
                    f"{col!r}, or leave name_column out",
                )
        if op.name == "fake":
            faked.add(col)


def _check_gender_columns(
    steps: list[tuple[str, Operator, tuple[Any, ...]]],
    columns: Mapping[str, ColumnSpec],
    default_role: Role | None,
    privacy: PrivacyTargets | None,
    err: Callable[[tuple[Any, ...], str], PolicyError],
) -> None:
    """Refuse fake names that follow a gender column the release hides or may generalize.

    A female or male fake name tells the record's sex: with the column dropped, masked or
    generalized by its operators, or a quasi-identifier that the privacy engine generalizes
    (``sex: *``), the names gave it back, and the k-anonymity achieved on the released
    quasi-identifiers no longer held once a name's gender was read (classes split by sex).
    """
    enforced = privacy is not None and bool(privacy.algorithm)
    for col, op, path in steps:
        source = getattr(op, "gender_column", None)
        if op.name != "fake" or source is None:
            continue
        spec = columns.get(str(source))
        hidden = spec is not None and bool(spec.operators)
        role = spec.role if spec is not None else default_role
        if hidden or (role is Role.QUASI and enforced):
            why = (
                "which its own operators change or drop"
                if hidden
                else "a quasi-identifier the privacy engine may generalize"
            )
            raise err(
                path + ("gender_column",),
                f"column {col!r}: operator 'fake' gives names that follow {str(source)!r}, {why}: "
                f"each name's gender would tell what the release hides of {str(source)!r}; "
                "leave gender_column out (names of either gender)",
            )


@dataclass
class Policy:
    """A parsed, validated policy.  Build it with :meth:`from_yaml` or :meth:`from_dict`.

    Examples
    --------
    >>> p = Policy.from_dict({"columns": {"email": {"role": "identifier", "operator": "drop"},
    ...                                   "age": "quasi"}, "privacy": {"k": 3}})
    >>> p.columns["email"].operators[0].name, p.quasi_identifiers, p.privacy.k
    ('drop', ['age'], 3)
    """

    columns: dict[str, ColumnSpec]
    privacy: PrivacyTargets | None = None
    suppress: list[str] = field(default_factory=list)
    key: dict[str, str] | None = None
    locale: str = "en_US"
    seed: int | None = None
    input: dict[str, Any] = field(default_factory=dict)
    default_role: Role | None = None
    base_dir: Path = field(default_factory=lambda: Path("."))
    source: str = "<policy>"
    raw: dict[str, Any] = field(default_factory=dict)
    lines: dict[tuple[Any, ...], int] = field(default_factory=dict, repr=False)
    suppressor: Operator | None = field(default=None, repr=False)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_yaml(cls, path: str | os.PathLike[str]) -> Policy:
        """Read and validate a policy file (relative paths in it are relative to its folder)."""
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8-sig")
        except FileNotFoundError:
            raise PolicyError(f"policy file not found: {p}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise PolicyError(f"cannot read policy file {p}: {exc}") from None
        table_like = p.suffix.lower() in (".csv", ".tsv", ".txt", ".data", ".parquet", ".pq")
        try:
            data, lines = load_with_lines(text, p.name)
        except PolicyError:
            if not table_like:
                raise
            data = None  # the YAML parser's message can quote the file's text: a table's cells
        if table_like and not (isinstance(data, Mapping) and set(data) & set(POLICY.fields)):
            raise PolicyError(
                f"{p.name} is not a YAML policy; it looks like a table (the table is the "
                "input, the policy a YAML file)"
            )
        # a policy (a mapping with a policy setting) gets its own errors, whatever its suffix
        return cls._build(data, lines, source=p.name, base_dir=p.parent)

    @classmethod
    def from_dict(
        cls, data: Mapping[str, Any], *, base_dir: str | os.PathLike[str] = "."
    ) -> Policy:
        """Validate a policy given as a dict (same structure as the YAML file)."""
        return cls._build(data, {}, source="<policy>", base_dir=Path(base_dir))

    @classmethod
    def _build(cls, data: Any, lines: dict, *, source: str, base_dir: Path) -> Policy:
        validate_policy(data, source, lines)

        def err(path: tuple[Any, ...], msg: str) -> PolicyError:
            return policy_error(source, lines, path, msg)

        columns: dict[str, ColumnSpec] = {}
        steps: list[tuple[str, Operator, tuple[Any, ...]]] = []  # in the order they run
        for name, spec in data["columns"].items():
            spec = {"role": spec} if isinstance(spec, str) else spec
            cname = str(name)
            path = ("columns", name)
            spec_ops = [k for k in ("operator", "operators") if k in spec]
            if len(spec_ops) == 2:
                raise err(path, "give either 'operator' or 'operators', not both")
            ops: list[Operator] = []
            if spec_ops:
                for i, (op_name, params) in enumerate(_operator_items(spec[spec_ops[0]])):
                    op_path = (
                        path
                        + (spec_ops[0],)
                        + ((i,) if isinstance(spec[spec_ops[0]], list) else ())
                    )
                    try:
                        ops.append(get_operator(op_name, params))
                        steps.append((cname, ops[-1], op_path))
                    except OperatorParameterError as exc:
                        # an unknown parameter: point at its own key (and line)
                        where = op_path + (exc.param,) if exc.param in params else op_path
                        raise err(where, f"column {cname!r}: {exc}") from None
                    except (ConfigError, InputError) as exc:
                        raise err(op_path, f"column {cname!r}: {exc}") from None
            hierarchy, hsource = None, None
            if "hierarchy" in spec:
                hierarchy, hsource = _load_hierarchy(
                    spec["hierarchy"], base_dir, lambda m, p=path: err(p + ("hierarchy",), m)
                )
            columns[cname] = ColumnSpec(
                cname, Role.parse(spec["role"]), ops, hierarchy, hsource, lines.get(path)
            )
        _check_fake_name_columns(steps, err)
        suppress = data.get("suppress", [])
        suppress = [suppress] if isinstance(suppress, str) else list(suppress)
        suppressor = None
        if suppress:
            try:
                suppressor = get_operator("suppress", {"condition": suppress})
            except (ConfigError, InputError) as exc:
                raise err(("suppress",), str(exc)) from None
        privacy = _privacy(data.get("privacy"), columns, err)
        default_role = Role.parse(data["default_role"]) if "default_role" in data else None
        _check_gender_columns(steps, columns, default_role, privacy, err)
        return cls(
            columns=columns,
            privacy=privacy,
            suppress=suppress,
            key=dict(data["key"]) if "key" in data else None,
            locale=data.get("locale", "en_US"),
            seed=data.get("seed"),
            input=dict(data.get("input", {})),
            default_role=default_role,
            base_dir=base_dir,
            source=source,
            raw=dict(data),
            lines=lines,
            suppressor=suppressor,
        )

    # ------------------------------------------------------------------ helpers
    def line(self, *path: Any) -> int | None:
        """Line of ``path`` (e.g. ``("columns", "Age")``) in the policy file, if known."""
        return self.lines.get(tuple(path))

    def error(self, path: tuple[Any, ...], message: str) -> PolicyError:
        """A PolicyError naming this policy's file, the line of ``path`` and the key."""
        return policy_error(self.source, self.lines, path, message)

    @property
    def quasi_identifiers(self) -> list[str]:
        return [c for c, s in self.columns.items() if s.role is Role.QUASI]

    @property
    def sensitive(self) -> list[str]:
        return [c for c, s in self.columns.items() if s.role is Role.SENSITIVE]

    def roles_for(self, df: pd.DataFrame) -> dict[str, Role]:
        """Role of every column of ``df`` (its listed role, else ``default_role``).

        Policy columns absent from ``df`` (e.g. dropped by an operator) are ignored; a column
        of ``df`` that is neither listed nor covered by ``default_role`` is an error.
        """
        out: dict[str, Role] = {}
        for c in map(str, df.columns):
            role = self.columns[c].role if c in self.columns else self.default_role
            if role is None:
                raise self.error(
                    ("columns",), f"column {c!r} is not in the policy and no default_role is set"
                )
            out[c] = role
        return out

    def check_columns(self, df: pd.DataFrame) -> None:
        """PolicyError for policy columns absent from ``df``, or unlisted columns with no default."""
        names = {str(c) for c in df.columns}
        for col in self.columns:
            if col not in names:
                near = [c for c in names if c.lower() == col.lower()]
                hint = f" (did you mean {near[0]!r}?)" if near else ""
                raise self.error(("columns", col), f"unknown column {col!r}: not in the data{hint}")
        unlisted = [str(c) for c in df.columns if str(c) not in self.columns]
        if unlisted and self.default_role is None:
            shown = ", ".join(repr(c) for c in unlisted[:5]) + (" ..." if len(unlisted) > 5 else "")
            raise self.error(
                ("columns",),
                f"{len(unlisted)} column(s) of the data are not in the policy: {shown}; list them "
                "(veil scan --policy-out drafts every column) or set default_role",
            )
        # the suppress conditions read the input's columns (parsed when the policy was loaded)
        for cond in getattr(self.suppressor, "conditions", []):
            gone = sorted(c for c in cond.columns() if c not in names)
            if gone:
                near = [c for c in names if c.lower() == gone[0].lower()]
                hint = f" (did you mean {near[0]!r}?)" if near else cond.text_hint(gone[0])
                raise self.error(
                    ("suppress",),
                    f"condition {cond.text!r}: unknown column {gone[0]!r}: not in the data{hint}",
                )
        for target in ("l", "t"):
            spec = (self.privacy.raw.get(target) if self.privacy else None) or {}
            col = spec.get("column") if isinstance(spec, Mapping) else None
            if col is not None and str(col) not in names:
                raise self.error(
                    ("privacy", target, "column"), f"unknown column {col!r}: not in the data"
                )

    def read_options(self) -> dict[str, Any]:
        """Keyword arguments for :func:`veil.io.read` from the policy's ``input`` section."""
        return dict(self.input)

    def key_loader(self, key_file: str | os.PathLike[str] | None = None) -> Callable[[], bytes]:
        """Lazy loader of the secret key: ``key_file`` if given, else the policy's ``key``,
        else ``$VEIL_KEY``.  Nothing is read until an operator asks for the key."""
        from veil.deid._keys import key_loader

        if key_file is not None:
            return key_loader(file=key_file)
        if self.key and "file" in self.key:
            path = Path(self.key["file"])
            return key_loader(file=path if path.is_absolute() else self.base_dir / path)
        if self.key and "env" in self.key:
            return key_loader(env=self.key["env"])
        return key_loader()


def _load_hierarchy(
    value: Any, base_dir: Path, err: Callable[[str], PolicyError]
) -> tuple[Hierarchy, str]:
    try:
        if isinstance(value, Mapping):
            return Hierarchy.from_mapping(value), "inline"
        path = Path(value)
        path = path if path.is_absolute() else base_dir / path
        if not path.is_file():
            rel = (
                ""
                if Path(value).is_absolute()
                else f" (looked for {path.resolve()}: relative to the policy file)"
            )
            raise err(f"hierarchy file not found: {value}{rel}")
        return Hierarchy.from_file(path), str(value)
    except (InputError, ConfigError) as exc:
        raise err(str(exc)) from None


#: The privacy settings that are choices (:func:`~veil.deid._policy_schema.choice_value`).
_CHOICES = ("algorithm", "suppressed", "row_order")


def _privacy(
    value: Any, columns: dict[str, ColumnSpec], err: Callable[..., PolicyError]
) -> PrivacyTargets | None:
    if value is None:
        return None
    # the choices as validated ("Random " is "random"): read as written, row_order: Random
    # kept the input's row order without an error
    value = {k: choice_value(v) if k in _CHOICES and v is not None else v for k, v in value.items()}
    for target, key in (("l", "variant"), ("t", "distance")):
        spec = value.get(target)
        if isinstance(spec, Mapping) and spec.get(key) is not None:
            value[target] = {**spec, key: choice_value(spec[key])}
    for target in ("l", "t"):
        spec = value.get(target)
        if (
            spec is not None
            and str(spec["column"]) in columns
            and columns[str(spec["column"])].role is not Role.SENSITIVE
        ):
            raise err(
                ("privacy", target, "column"), f"column {spec['column']!r} must have role sensitive"
            )
    lspec = value.get("l")
    if (
        lspec is not None
        and str(lspec.get("variant", "distinct")).lower() == "recursive"
        and "c" not in lspec
    ):
        raise err(("privacy", "l"), "recursive (c,l)-diversity needs c")
    algorithm = value.get("algorithm")
    return PrivacyTargets(
        k=value.get("k"),
        l=dict(lspec) if lspec is not None else None,
        t=dict(value["t"]) if value.get("t") is not None else None,
        suppression_limit=value.get("suppression_limit"),
        algorithm=algorithm,
        objective=value.get("objective"),
        raw=dict(value),
    )
