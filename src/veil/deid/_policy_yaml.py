"""Loading YAML while remembering the line of every key, for error messages.

``yaml.compose`` keeps the position of each node; we build plain Python objects from the node
tree and a map ``path -> line`` where ``path`` is the tuple of keys/indices leading to a node.
"""

from __future__ import annotations

from typing import Any

import yaml

from veil.errors import PolicyError

__all__ = ["load_with_lines", "format_path", "policy_error"]

Path_ = tuple[Any, ...]

#: Most YAML nodes a policy may expand to (aliases included): a "billion laughs" file is an
#: error, not an hour of work.
MAX_NODES = 1_000_000


#: Tags a mapping or list may carry: YAML's own (``!!map``, ``!!seq``), explicit or implied.
_PLAIN_TAGS = frozenset({"tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"})


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
        try:
            return constructor.construct_object(n, deep=True)
        except (yaml.YAMLError, ValueError) as exc:  # ValueError: e.g. an int of 5000 digits
            raise policy_error(source, lines, path, f"invalid value ({_one_line(exc)})") from None

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
            if path == ("columns",) and isinstance(knode, yaml.ScalarNode):
                # a column is named by its text: unquoted No / on / null / 1.50 would otherwise
                # become False / True / None / 1.5 (YAML 1.1), never matching the header
                key = knode.value
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
