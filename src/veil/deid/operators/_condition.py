"""A small, safe condition language for record suppression (a subset of pandas ``query``).

Grammar (no ``eval``: the text is tokenized and parsed by recursive descent)::

    expr    := or
    or      := and ("or" and)*
    and     := not ("and" not)*
    not     := "not" not | atom
    atom    := "(" expr ")" | func "(" NAME ")" | operand [cmp operand | ["not"] "in" list]
    func    := isna | notna | isnull | notnull
    cmp     := == | != | < | <= | > | >=
    operand := NAME | `quoted name` | NUMBER | 'text' | "text" | true | false
    list    := "[" literal ("," literal)* "]"   (or with parentheses)

Every comparison involving a missing value is false (``!=`` too, unlike pandas); select
missing values explicitly with ``isna(col)``.  Also accepts ``&``, ``|``, ``~``.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from veil.errors import ConfigError, InputError

__all__ = ["evaluate_condition", "parse_condition", "Condition"]

_TOKEN = re.compile(
    r"""\s*(?:
    (?P<num>-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)
   |(?P<str>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
   |(?P<bq>`[^`]+`)
   |(?P<op><=|>=|==|!=|<|>|\(|\)|\[|\]|,|&|\||~)
   |(?P<name>[A-Za-z_][A-Za-z0-9_.\-]*)
    )""",
    re.VERBOSE,
)
_CMP: dict[str, Callable[[Any, Any], Any]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
_FUNCS = {"isna": True, "isnull": True, "notna": False, "notnull": False}
_KEYWORDS = {"and", "or", "not", "in", "true", "false", "True", "False"}


@dataclass(frozen=True)
class _Tok:
    kind: str  # num | str | name | col | op | kw
    text: str
    pos: int


def _tokenize(text: str) -> list[_Tok]:
    toks: list[_Tok] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            at = pos + len(text[pos:]) - len(text[pos:].lstrip())
            hint = "; compare with ==, not =" if text[at : at + 1] == "=" else ""
            raise ConfigError(f"condition {text!r}: cannot read it at character {at + 1}{hint}")
        kind = m.lastgroup or ""
        raw = m.group(kind)
        start = m.start(kind)
        if kind == "name" and raw in _KEYWORDS:
            kind = "kw"
        elif kind == "bq":
            kind, raw = "name", raw[1:-1]
        elif kind == "str":
            raw = bytes(raw[1:-1], "utf-8").decode("unicode_escape")
        toks.append(_Tok(kind, raw, start))
        pos = m.end()
    return toks


@dataclass(frozen=True)
class Condition:
    """A parsed condition: call :meth:`evaluate` on a DataFrame to get a boolean mask.

    Examples
    --------
    >>> cond = parse_condition("age < 18 or isna(age)")
    >>> sorted(cond.columns())
    ['age']
    >>> cond.evaluate(pd.DataFrame({"age": [10, None, 40]})).tolist()
    [True, True, False]
    """

    text: str
    tree: tuple[Any, ...]

    def columns(self) -> set[str]:
        """Column names the condition refers to."""
        found: set[str] = set()

        def walk(node: Any) -> None:
            if isinstance(node, tuple):
                if node and node[0] == "col":
                    found.add(node[1])
                for child in node[1:]:
                    walk(child)
            elif isinstance(node, list):
                for child in node:
                    walk(child)

        walk(self.tree)
        return found

    def text_hint(self, name: str) -> str:
        """A hint when the unknown column ``name`` is compared with another column: in
        ``County == Nairobi`` the bare word was most likely meant as text."""
        found = False

        def walk(node: Any) -> None:
            nonlocal found
            if isinstance(node, tuple) and node:
                if node[0] == "cmp" and all(
                    isinstance(x, tuple) and x[0] == "col" for x in node[2:]
                ):
                    found = found or name in (node[2][1], node[3][1])
                for child in node[1:]:
                    walk(child)

        walk(self.tree)
        return f" (a text value needs quotes: '{name}')" if found else ""

    def evaluate(self, df: pd.DataFrame) -> np.ndarray:
        """Boolean mask (numpy array) of the rows matching the condition."""
        missing = sorted(c for c in self.columns() if c not in df.columns)
        if missing:
            hint = self.text_hint(missing[0])
            raise InputError(f"condition {self.text!r}: no column(s) {missing} in the table{hint}")
        res = _eval(self.tree, df)
        if not isinstance(res, np.ndarray) or res.dtype != bool:
            raise ConfigError(f"condition {self.text!r} is not a true/false test")
        return res


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokenize(text)
        self.i = 0

    def _peek(self) -> _Tok | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def _fail(self, what: str) -> ConfigError:
        tok = self._peek()
        where = f"at {tok.text!r} (character {tok.pos + 1})" if tok else "at the end"
        return ConfigError(f"condition {self.text!r}: {what} {where}")

    def _accept(self, *texts: str) -> _Tok | None:
        tok = self._peek()
        if tok is not None and tok.kind in ("op", "kw") and tok.text in texts:
            self.i += 1
            return tok
        return None

    def parse(self) -> tuple[Any, ...]:
        if not self.toks:
            raise ConfigError("condition is empty")
        node = self._or()
        if self._peek() is not None:
            raise self._fail("unexpected text")
        return node

    def _or(self) -> tuple[Any, ...]:
        node = self._and()
        while self._accept("or", "|"):
            node = ("or", node, self._and())
        return node

    def _and(self) -> tuple[Any, ...]:
        node = self._not()
        while self._accept("and", "&"):
            node = ("and", node, self._not())
        return node

    def _not(self) -> tuple[Any, ...]:
        if self._accept("not", "~"):
            return ("not", self._not())
        return self._atom()

    def _atom(self) -> tuple[Any, ...]:
        tok = self._peek()
        if tok is None:
            raise self._fail("expected a test")
        if tok.kind == "op" and tok.text == "(":
            self.i += 1
            node = self._or()
            if not self._accept(")"):
                raise self._fail("expected ')'")
            return node
        if tok.kind == "name" and tok.text in _FUNCS:
            self.i += 1
            if not self._accept("("):
                raise self._fail(f"expected '(' after {tok.text}")
            col = self._operand()
            if col[0] != "col" or not self._accept(")"):
                raise self._fail(f"{tok.text}() takes one column name")
            return ("isna", col) if _FUNCS[tok.text] else ("not", ("isna", col))
        left = self._operand()
        nxt = self._peek()
        if nxt is not None and nxt.kind == "op" and nxt.text in _CMP:
            self.i += 1
            return ("cmp", nxt.text, left, self._operand())
        negate = False
        if nxt is not None and nxt.kind == "kw" and nxt.text == "not":
            self.i += 1
            negate = True
        if self._accept("in"):
            node: tuple[Any, ...] = ("in", left, self._list())
            return ("not", node) if negate else node
        if negate:
            raise self._fail("expected 'in' after 'not'")
        if left[0] == "col":
            return ("truth", left)
        raise self._fail("expected a comparison")

    def _list(self) -> list[Any]:
        close = "]" if self._accept("[") else ")" if self._accept("(") else None
        if close is None:
            raise self._fail("expected a list like [1, 2]")
        items: list[Any] = []
        if self._accept(close):
            return items
        while True:
            item = self._operand()
            if item[0] != "lit":
                raise self._fail("lists hold literal values only")
            items.append(item[1])
            if self._accept(close):
                return items
            if not self._accept(","):
                raise self._fail("expected ',' or the end of the list")
            if self._accept(close):  # trailing comma
                return items

    def _operand(self) -> tuple[Any, ...]:
        tok = self._peek()
        if tok is None:
            raise self._fail("expected a value or column")
        self.i += 1
        if tok.kind == "num":
            num = float(tok.text)
            return ("lit", int(num) if re.fullmatch(r"-?\d+", tok.text) else num)
        if tok.kind == "str":
            return ("lit", tok.text)
        if tok.kind == "kw" and tok.text in ("true", "True", "false", "False"):
            return ("lit", tok.text.lower() == "true")
        if tok.kind == "name":
            return ("col", tok.text)
        self.i -= 1
        raise self._fail("expected a value or column")


def parse_condition(text: str) -> Condition:
    """Parse a suppression condition; raise :class:`ConfigError` on a syntax error.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"Age": [25, 40, None], "Sex": ["F", "M", "F"]})
    >>> parse_condition("Age < 30 or (Sex == 'F' and isna(Age))").evaluate(df).tolist()
    [True, False, True]
    """
    if not isinstance(text, str):
        raise ConfigError(f"condition must be text, got {text!r}")
    return Condition(text, _Parser(text).parse())


def evaluate_condition(df: pd.DataFrame, text: str) -> np.ndarray:
    """Boolean mask of the rows of ``df`` matching the condition ``text``.

    Examples
    --------
    A comparison with a missing value is false, ``!=`` included (unlike pandas):

    >>> df = pd.DataFrame({"age": [10, None, 40], "county": ["a", "b", "c"]})
    >>> evaluate_condition(df, "age != 10").tolist()
    [False, False, True]
    >>> evaluate_condition(df, "not age > 30").tolist()  # two-valued: not(false) is true
    [True, True, False]
    """
    return parse_condition(text).evaluate(df)


def _column(df: pd.DataFrame, name: str, like: Any) -> pd.Series:
    s = df[name]
    if isinstance(like, (int, float)) and not isinstance(like, bool):
        if not pd.api.types.is_numeric_dtype(s.dtype) or pd.api.types.is_bool_dtype(s.dtype):
            s = pd.to_numeric(s, errors="coerce")
    return s


def _as_bool(values: Any) -> np.ndarray:
    if isinstance(values, pd.Series):
        return values.fillna(False).to_numpy(dtype=bool)
    return np.asarray(values, dtype=bool)


def _eval(node: tuple[Any, ...], df: pd.DataFrame) -> Any:
    kind = node[0]
    if kind == "or":
        return _eval(node[1], df) | _eval(node[2], df)
    if kind == "and":
        return _eval(node[1], df) & _eval(node[2], df)
    if kind == "not":
        return ~_eval(node[1], df)
    if kind == "isna":
        return df[node[1][1]].isna().to_numpy(dtype=bool)
    if kind == "truth":
        s = df[node[1][1]]
        if not pd.api.types.is_bool_dtype(s.dtype):
            raise ConfigError(f"column {node[1][1]!r} is not true/false; compare it with a value")
        return _as_bool(s)
    if kind == "in":
        s = df[node[1][1]]
        return s.isin(node[2]).to_numpy(dtype=bool) & s.notna().to_numpy(dtype=bool)
    if kind == "cmp":
        op, left, right = node[1], node[2], node[3]
        lv = (
            _column(df, left[1], right[1] if right[0] == "lit" else None)
            if left[0] == "col"
            else left[1]
        )
        rv = (
            _column(df, right[1], left[1] if left[0] == "lit" else None)
            if right[0] == "col"
            else right[1]
        )
        if left[0] == "lit" and right[0] == "lit":
            raise ConfigError("a condition must refer to at least one column")
        try:
            res = _CMP[op](lv, rv)
        except TypeError:
            raise ConfigError(
                f"cannot compare {left[1]!r} {op} {right[1]!r}: incompatible types"
            ) from None
        mask = _as_bool(res).copy()
        for side in (lv, rv):  # comparisons with missing values are false
            if isinstance(side, pd.Series):
                mask &= side.notna().to_numpy(dtype=bool)
        return mask
    raise ConfigError(f"unsupported condition element {kind!r}")  # pragma: no cover
