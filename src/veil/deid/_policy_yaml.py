"""Loading YAML while remembering the line of every key, for error messages.

``yaml.compose`` keeps the position of each node; we build plain Python objects from the node
tree and a map ``path -> line`` where ``path`` is the tuple of keys/indices leading to a node.

Values that are matched against cells or written into cells (hierarchies, column names, missing-
value markers, operator labels and constants: :func:`text_mode`) keep the text written in the
file.  The data read from a CSV file is text, and YAML 1.1 rewrites many plain scalars: ZIP code
``01301`` is the octal number 705, ``No`` / ``yes`` / ``on`` are booleans, ``1.50`` is 1.5,
``12:30`` is 750 (base 60), ``0x1F`` is 31, ``~`` / ``null`` are None and ``2024-01-01`` a date.
Numbers, booleans and choices elsewhere (``k``, ``epsilon``, ``bins``, ``unique: yes``) are
read by YAML's rules, as before.
"""

from __future__ import annotations

from typing import Any

import yaml

from veil.errors import PolicyError

__all__ = ["load_with_lines", "format_path", "policy_error", "text_mode"]

Path_ = tuple[Any, ...]

#: Most YAML nodes a policy may expand to (aliases included): a "billion laughs" file is an
#: error, not an hour of work.
MAX_NODES = 1_000_000


#: Tags a mapping or list may carry: YAML's own (``!!map``, ``!!seq``), explicit or implied.
_PLAIN_TAGS = frozenset({"tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"})


#: Text scalars everywhere under these policy keys (keys and values): tables of cell values,
#: column names, missing-value markers, free text.
_POLICY_TEXT = frozenset({"description", "locale"})
_INPUT_TEXT = frozenset({"delimiter", "encoding", "missing_values", "names", "columns"})
#: Operator parameters that hold cell values, labels, column names or characters: text.
_OPERATOR_TEXT = frozenset(
    {
        "hierarchy",  # generalize: an inline hierarchy (or a path)
        "labels",  # generalize: bin labels
        "char",  # mask
        "split",  # generalize: separator
        "prefix",  # pseudonymize, tokenize, rename_columns, pca
        "scope",  # pseudonymize
        "context",  # tokenize
        "gender_map",  # fake: cell value -> female / male
        "gender_column",  # fake
        "name_column",  # fake
        "start",  # fake: dates, read by pandas from their text
        "end",
        "columns",  # pca, rename_columns: column names
        "locale",  # fake
    }
)
#: Operator parameters that are a cell constant, text or number: a plain scalar keeps YAML's
#: number only when it writes back as written (``0``, ``2.5``), else it is the text written
#: (``01301``, ``No``, ``1.50``, ``~``).  ``choices``: its list items and mapping keys (the
#: mapping's values are weights, numbers).  ``pad``: tokenize's length, generalize's text.
_OPERATOR_CONSTANT = frozenset({"value", "choices", "pad"})


def _operator_mode(rest: Path_) -> str | None:
    """Mode of a scalar at ``rest`` below one operator item (``(param, ...)``)."""
    if not rest or not isinstance(rest[0], str):
        return None
    param, below = rest[0], rest[1:]
    if param in _OPERATOR_TEXT:
        return "text"
    if param in _OPERATOR_CONSTANT:
        if param == "choices" and below and not (below[0] == "<key>" or isinstance(below[0], int)):
            return None  # choices: {Nairobi: 0.5}: the weight
        return "constant"
    return None


def text_mode(path: Path_) -> str | None:
    """How a plain (unquoted) scalar at ``path`` of a policy is read.

    ``"text"``: the text written; ``"constant"``: YAML's int or float when it writes back as
    written, else the text written; None: YAML's own reading (numbers, booleans, choices).
    ``path`` is the tuple of keys and list indices, ``"<key>"`` standing for a mapping key.

    Examples
    --------
    >>> text_mode(("columns", "zip", "hierarchy", "<key>"))
    'text'
    >>> text_mode(("columns", "zip", "operator", 0, "value")), text_mode(("privacy", "k"))
    ('constant', None)
    """
    p = tuple(path)
    if not p or not isinstance(p[0], str):
        return None
    head = p[0]
    if head in _POLICY_TEXT or head == "key":
        return "text"
    if p[1:] == ("<key>",) and head == "columns":
        return "text"  # a column is named by its header's text
    if head == "input" and len(p) > 1:
        if p[1] in _INPUT_TEXT or (p[1] == "parse_dates" and len(p) > 2):
            return "text"  # parse_dates: true stays a boolean, its list items are names
        return None
    if head == "privacy" and len(p) > 2 and p[1] in ("l", "t"):
        return "text" if p[2] in ("column", "hierarchy") else None
    if head == "columns" and len(p) > 2:
        spec = p[2:]
        if spec[0] in ("hierarchy", "description"):
            return "text"
        if spec[0] in ("operator", "operators"):
            rest = spec[1:]
            if rest and isinstance(rest[0], int):
                rest = rest[1:]
            return _operator_mode(rest)
    return None


_RESOLVER = yaml.resolver.Resolver()


def _plain(n: yaml.Node) -> bool:
    """An unquoted scalar typed by YAML's implicit rules only (no ``!!tag``: those stay errors)."""
    return (
        isinstance(n, yaml.ScalarNode)
        and n.style is None
        and n.tag == _RESOLVER.resolve(yaml.ScalarNode, n.value, (True, False))
    )


def _written(n: yaml.ScalarNode, mode: str, value: Any) -> Any:
    """The scalar ``n`` read in ``mode`` (see :func:`text_mode`); ``value``: YAML's reading."""
    if n.style is not None or isinstance(value, str):  # quoted or block text, or plain text
        return value
    if mode == "constant" and type(value) in (int, float) and str(value) == n.value:
        return value
    return n.value


def _one_line(exc: Exception) -> str:
    """A YAML or value error as one line, without PyYAML's quoted source and caret lines."""
    problem = getattr(exc, "problem", None)
    text = problem if isinstance(problem, str) and problem else str(exc)
    return " ".join(text.split())


def format_path(path: Path_) -> str:
    """``("columns", "Age", "operator", 0)`` -> ``columns.Age.operator[0]``."""
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(top level)"


def policy_error(source: str, lines: dict[Path_, int], path: Path_, message: str) -> PolicyError:
    """A PolicyError naming the source, the line (of the nearest known node) and the key."""
    line = None
    p = tuple(path)
    while p and line is None:
        line = lines.get(p)
        p = p[:-1]
    where = f"{source}, line {line}" if line is not None else source
    return PolicyError(f"{where}: {format_path(tuple(path))}: {message}")


def load_with_lines(text: str, source: str) -> tuple[Any, dict[Path_, int]]:
    """Parse YAML ``text``; return ``(data, lines)``.  Duplicate keys are an error.

    Examples
    --------
    >>> data, lines = load_with_lines("a: 1\\nb:\\n  c: [x, y]\\n", "p.yaml")
    >>> data, lines[("b", "c")], lines[("b", "c", 1)]
    ({'a': 1, 'b': {'c': ['x', 'y']}}, 3, 3)
    """
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        line = f", line {mark.line + 1}" if mark is not None else ""
        raise PolicyError(f"{source}{line}: invalid YAML: {problem}") from None
    except RecursionError:
        raise PolicyError(f"{source}: invalid YAML: nested too deeply") from None
    lines: dict[Path_, int] = {}
    constructor = yaml.constructor.SafeConstructor()
    open_nodes: set[int] = set()  # collections being built: an alias to one is a cycle
    count = 0

    def build(n: yaml.Node, path: Path_) -> Any:
        nonlocal count
        lines.setdefault(path, n.start_mark.line + 1)
        count += 1
        if count > MAX_NODES:
            raise policy_error(
                source, lines, path, f"the policy expands to more than {MAX_NODES} YAML nodes"
            )
        if isinstance(n, (yaml.MappingNode, yaml.SequenceNode)):
            if n.tag not in _PLAIN_TAGS:  # !!python/object/apply:..., !!set, !!omap, !custom
                raise policy_error(source, lines, path, f"invalid value (unsupported tag {n.tag})")
            if id(n) in open_nodes:
                raise policy_error(source, lines, path, "an alias refers to itself")
            open_nodes.add(id(n))
            try:
                return build_collection(n, path)
            finally:
                open_nodes.discard(id(n))
        mode = text_mode(path) if _plain(n) else None
        if mode == "text":
            return n.value  # not even constructed: 10**5000 or 2024-13-45 are texts here
        try:
            value = constructor.construct_object(n, deep=True)
        except (yaml.YAMLError, ValueError) as exc:  # ValueError: e.g. an int of 5000 digits
            raise policy_error(source, lines, path, f"invalid value ({_one_line(exc)})") from None
        return value if mode is None else _written(n, mode, value)

    def build_collection(n: yaml.Node, path: Path_) -> Any:
        if isinstance(n, yaml.SequenceNode):
            return [build(item, path + (i,)) for i, item in enumerate(n.value)]
        out: dict[Any, Any] = {}
        for knode, vnode in n.value:
            if knode.tag == "tag:yaml.org,2002:merge":
                raise policy_error(
                    source,
                    lines,
                    path,
                    "YAML merge keys (<<) are not supported: write the keys out, or reuse a "
                    "whole value with an alias (*name)",
                )
            key = build(knode, path + ("<key>",))
            if isinstance(key, (list, dict)):
                raise policy_error(source, lines, path, "mapping keys must be scalars")
            if key in out:
                line = knode.start_mark.line + 1
                raise PolicyError(
                    f"{source}, line {line}: {format_path(path + (key,))}: duplicate key"
                )
            lines[path + (key,)] = knode.start_mark.line + 1
            out[key] = build(vnode, path + (key,))
        return out

    try:
        data = build(node, ()) if node is not None else None
    except RecursionError:
        raise PolicyError(f"{source}: invalid YAML: nested too deeply") from None
    lines.pop(("<key>",), None)
    return data, {k: v for k, v in lines.items() if "<key>" not in k}
