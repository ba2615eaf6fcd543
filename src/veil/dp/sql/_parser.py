"""Recursive-descent parser of Veil's SQL subset.

Grammar (keywords case-insensitive)::

    query      := SELECT item ("," item)* FROM data [WHERE expr] [GROUP BY name ("," name)*] [";"]
    item       := (aggregate | name) [[AS] alias]
    aggregate  := COUNT "(" ("*" | name) ")" | (SUM|AVG|MEAN|VAR|VARIANCE|STDDEV|STD|MEDIAN) "(" name ")"
                | QUANTILE "(" name "," number ")"
    expr       := and_expr (OR and_expr)*
    and_expr   := not_expr (AND not_expr)*
    not_expr   := NOT not_expr | "(" expr ")" | predicate
    predicate  := operand (cmp operand | [NOT] IN "(" literal ("," literal)* ")"
                | [NOT] BETWEEN operand AND operand | IS [NOT] NULL)
    operand    := name | number | "-" number | string | TRUE | FALSE | NULL

Everything else (JOIN, subqueries, HAVING, ORDER BY, LIMIT, DISTINCT, UNION, WITH, CASE, LIKE,
window functions, arithmetic, ``SELECT *``, other functions) raises :class:`ConfigError` naming
the construct.

Example
-------
>>> q = parse("SELECT county, COUNT(*) AS n FROM data WHERE age > 20 GROUP BY county")
>>> q.group_by, q.select[1].alias
(('county',), 'n')
"""

from __future__ import annotations

from veil.dp.sql._ast import (
    AGGREGATES,
    Aggregate,
    And,
    Between,
    Column,
    Comparison,
    Expr,
    InList,
    IsNull,
    Literal,
    Not,
    Operand,
    Or,
    Query,
    SelectItem,
)
from veil.dp.sql._lexer import Token, TokenKind, tokenize
from veil.errors import ConfigError

__all__ = ["parse", "parse_condition"]

#: Keywords that end a clause or cannot be used as bare names.
_RESERVED = {
    "SELECT", "FROM", "WHERE", "GROUP", "BY", "AS", "AND", "OR", "NOT", "IN", "BETWEEN", "IS",
    "NULL", "TRUE", "FALSE", "HAVING", "ORDER", "LIMIT", "OFFSET", "JOIN", "INNER", "LEFT",
    "RIGHT", "FULL", "CROSS", "NATURAL", "ON", "USING", "UNION", "INTERSECT", "EXCEPT", "WITH",
    "DISTINCT", "CASE", "WHEN", "THEN", "ELSE", "END", "LIKE", "ILIKE", "OVER", "WINDOW",
    "QUALIFY", "FETCH", "TOP", "ALL", "ANY", "EXISTS", "INTO", "OUTER",
}  # fmt: skip

#: Constructs outside the subset: leading keyword -> readable name.
_UNSUPPORTED = {
    "JOIN": "JOIN", "INNER": "JOIN", "LEFT": "JOIN", "RIGHT": "JOIN", "FULL": "JOIN",
    "CROSS": "JOIN", "NATURAL": "JOIN", "OUTER": "JOIN", "ON": "JOIN", "USING": "JOIN",
    "HAVING": "HAVING", "ORDER": "ORDER BY", "LIMIT": "LIMIT", "OFFSET": "OFFSET",
    "FETCH": "FETCH", "UNION": "UNION", "INTERSECT": "INTERSECT", "EXCEPT": "EXCEPT",
    "WITH": "WITH (common table expressions)", "DISTINCT": "DISTINCT", "CASE": "CASE",
    "LIKE": "LIKE", "ILIKE": "ILIKE", "OVER": "window functions (OVER)",
    "WINDOW": "window functions (WINDOW)", "QUALIFY": "QUALIFY", "TOP": "TOP",
    "EXISTS": "EXISTS (subqueries)", "ANY": "ANY (subqueries)", "ALL": "ALL",
    "INTO": "SELECT INTO",
}  # fmt: skip

_CMP = {"=": "=", "==": "=", "<>": "<>", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


def _unsupported(construct: str, tok: Token, hint: str = "") -> ConfigError:
    return ConfigError(
        f"SQL: not supported: {construct} (at position {tok.pos}){hint}; Veil's SQL subset is "
        "SELECT group columns and COUNT/SUM/AVG/VAR/STDDEV/MEDIAN/QUANTILE FROM data "
        "[WHERE ...] [GROUP BY ...]"
    )


def _arithmetic(toks: list[Token], i: int) -> ConfigError:
    """The error for an arithmetic operator at ``toks[i]``.

    A ``-`` written with no space between two names (``native-country``) is most likely a
    column name that needs quoting, and the message says so.
    """
    tok, hint = toks[i], ""
    if tok.text == "-" and 0 < i < len(toks) - 1:
        prev, nxt = toks[i - 1], toks[i + 1]
        if (
            prev.kind is TokenKind.IDENT
            and nxt.kind is TokenKind.IDENT
            and prev.pos + len(prev.text) == tok.pos
            and nxt.pos == tok.pos + 1
        ):
            hint = f'; a column name with a hyphen must be quoted: "{prev.text}-{nxt.text}"'
    return _unsupported(f"arithmetic ({tok.text!r})", tok, hint)


#: Deepest nesting of parentheses and NOT accepted in a condition.
_MAX_DEPTH = 100


class _Parser:
    def __init__(self, sql: str) -> None:
        self.toks = tokenize(sql)
        self.i = 0
        self.depth = 0  # nesting of parentheses and NOT in a condition

    # -- helpers ---------------------------------------------------------------------------
    @property
    def tok(self) -> Token:
        return self.toks[self.i]

    def advance(self) -> Token:
        tok = self.toks[self.i]
        if tok.kind is not TokenKind.EOF:
            self.i += 1
        return tok

    def check_unsupported(self) -> None:
        tok = self.tok
        if tok.kind is TokenKind.IDENT and tok.text.upper() in _UNSUPPORTED:
            raise _unsupported(_UNSUPPORTED[tok.text.upper()], tok)
        if tok.is_punct("(") and self.toks[self.i + 1].is_keyword("SELECT"):
            raise _unsupported("a subquery", tok)
        if tok.kind is TokenKind.OP and tok.text in ("+", "-", "/", "%", "||"):
            raise _arithmetic(self.toks, self.i)

    def expect_keyword(self, word: str) -> Token:
        self.check_unsupported()
        if not self.tok.is_keyword(word):
            raise self.error(f"expected {word}")
        return self.advance()

    def expect_punct(self, ch: str) -> Token:
        if not self.tok.is_punct(ch):
            self.check_unsupported()
            raise self.error(f"expected {ch!r}")
        return self.advance()

    def error(self, what: str) -> ConfigError:
        tok = self.tok
        found = "end of query" if tok.kind is TokenKind.EOF else repr(tok.text)
        return ConfigError(f"SQL: {what} at position {tok.pos}, found {found}")

    def name(self, what: str = "a column name") -> str:
        tok = self.tok
        if tok.kind is TokenKind.QUOTED_IDENT:
            self.advance()
            return tok.text
        if tok.kind is TokenKind.IDENT and tok.text.upper() not in _RESERVED:
            self.advance()
            if self.tok.is_punct("."):
                raise _unsupported("qualified names (table.column)", self.tok)
            return tok.text
        self.check_unsupported()
        raise self.error(f"expected {what}")

    # -- statement -------------------------------------------------------------------------
    def query(self) -> Query:
        if not self.tok.is_keyword("SELECT"):
            self.check_unsupported()
            if self.tok.kind is TokenKind.IDENT:
                raise _unsupported(f"{self.tok.text.upper()} statements", self.tok)
            raise self.error("expected SELECT")
        self.advance()
        if self.tok.is_keyword("DISTINCT", "ALL", "TOP"):
            self.check_unsupported()
        items = [self.select_item()]
        while self.tok.is_punct(","):
            self.advance()
            items.append(self.select_item())
        self.expect_keyword("FROM")
        if self.tok.is_punct("("):
            raise _unsupported("a subquery", self.tok)
        table_tok = self.tok
        table = self.name("a table name")
        # the input table is always called ``data`` (unquoted names are case-insensitive)
        quoted = table_tok.kind is TokenKind.QUOTED_IDENT
        if (table if quoted else table.lower()) != "data":
            raise _unsupported(
                f"table {table!r} (the input table is always called data)", table_tok
            )
        if self.tok.is_punct(","):
            raise _unsupported("JOIN (several tables in FROM)", self.tok)
        if self.tok.is_keyword("AS") or (
            self.tok.kind is TokenKind.IDENT and self.tok.text.upper() not in _RESERVED
        ):
            raise _unsupported("table aliases", self.tok)
        where = None
        if self.tok.is_keyword("WHERE"):
            self.advance()
            where = self.expr()
        group_by: list[str] = []
        if self.tok.is_keyword("GROUP"):
            self.advance()
            self.expect_keyword("BY")
            group_by.append(self.name())
            while self.tok.is_punct(","):
                self.advance()
                group_by.append(self.name())
        if self.tok.is_punct(";"):
            self.advance()
        if self.tok.kind is not TokenKind.EOF:
            self.check_unsupported()
            if self.tok.is_keyword("SELECT"):
                raise _unsupported("several statements", self.tok)
            raise self.error("unexpected text after the query")
        return Query(tuple(items), table, where, tuple(group_by))

    def select_item(self) -> SelectItem:
        tok = self.tok
        if tok.is_punct("*"):
            raise _unsupported("SELECT * (list the group columns and aggregates)", tok)
        self.check_unsupported()
        expr: Column | Aggregate
        if tok.kind is TokenKind.IDENT and self.toks[self.i + 1].is_punct("("):
            expr = self.aggregate()
        else:
            expr = Column(self.name("a column or an aggregate"))
        alias = None
        if self.tok.is_keyword("AS"):
            self.advance()
            alias = self.name("an alias")
        elif self.tok.kind is TokenKind.QUOTED_IDENT or (
            self.tok.kind is TokenKind.IDENT and self.tok.text.upper() not in _RESERVED
        ):
            alias = self.name("an alias")
        self.check_unsupported()
        return SelectItem(expr, alias)

    def aggregate(self) -> Aggregate:
        tok = self.advance()
        fname = tok.text.upper()
        if fname not in AGGREGATES:
            raise _unsupported(f"the function {tok.text}()", tok)
        self.expect_punct("(")
        if self.tok.is_keyword("DISTINCT"):
            raise _unsupported(f"{fname}(DISTINCT ...)", self.tok)
        if self.tok.is_punct("("):
            if self.toks[self.i + 1].is_keyword("SELECT"):
                raise _unsupported("a subquery", self.tok)
            raise _unsupported("expressions inside aggregates", self.tok)
        column: str | None
        if self.tok.is_punct("*"):
            if fname != "COUNT":
                raise self.error(f"{fname}(*) is not allowed; give a column")
            self.advance()
            column = None
        else:
            if self.tok.kind is TokenKind.IDENT and self.toks[self.i + 1].is_punct("("):
                raise _unsupported("nested function calls", self.tok)
            column = self.name()
        q = None
        func = AGGREGATES[fname]
        if func == "quantile":
            self.expect_punct(",")
            q = self.number()
            if not 0.0 <= q <= 1.0:
                raise ConfigError(f"SQL: {fname} level must lie in [0, 1], got {q}")
        if self.tok.is_punct(",") or self.tok.kind is TokenKind.OP:
            self.check_unsupported()
            raise self.error(
                f"{fname} takes {'two arguments' if q is not None else 'one argument'}"
            )
        self.expect_punct(")")
        if self.tok.is_keyword("OVER"):
            raise _unsupported("window functions (OVER)", self.tok)
        if self.tok.is_keyword("FILTER", "WITHIN"):
            raise _unsupported(f"{self.tok.text.upper()} clauses on aggregates", self.tok)
        return Aggregate(func, column, q, fname)

    def number(self) -> float:
        sign = 1.0
        if self.tok.is_punct("-"):
            self.advance()
            sign = -1.0
        tok = self.tok
        if tok.kind is not TokenKind.NUMBER:
            raise self.error("expected a number")
        self.advance()
        return sign * float(tok.text)

    # -- expressions -----------------------------------------------------------------------
    def expr(self) -> Expr:
        terms = [self.and_expr()]
        while self.tok.is_keyword("OR"):
            self.advance()
            terms.append(self.and_expr())
        return terms[0] if len(terms) == 1 else Or(tuple(terms))

    def and_expr(self) -> Expr:
        terms = [self.not_expr()]
        while self.tok.is_keyword("AND"):
            self.advance()
            terms.append(self.not_expr())
        return terms[0] if len(terms) == 1 else And(tuple(terms))

    def not_expr(self) -> Expr:
        if self.tok.is_keyword("NOT") or self.tok.is_punct("("):
            if self.depth >= _MAX_DEPTH:  # a ConfigError, not a RecursionError
                raise self.error(f"conditions nested more than {_MAX_DEPTH} deep")
            self.depth += 1
            try:
                return self._nested()
            finally:
                self.depth -= 1
        return self.predicate()

    def _nested(self) -> Expr:
        if self.tok.is_keyword("NOT"):
            self.advance()
            return Not(self.not_expr())
        if self.toks[self.i + 1].is_keyword("SELECT"):
            raise _unsupported("a subquery", self.tok)
        self.advance()
        inner = self.expr()
        self.expect_punct(")")
        return inner

    def operand(self) -> Operand:
        tok = self.tok
        self.check_unsupported_operand()
        if tok.kind is TokenKind.NUMBER or tok.is_punct("-"):
            first = self.toks[self.i + 1] if tok.is_punct("-") else tok
            value = self.number()
            if first.text.isdigit() and len(first.text) <= 4300:
                # digits only: the exact integer (through float64, 9007199254740993 became
                # 2^53 and matched other cells than the quoted '9007199254740993' does)
                return Literal(-int(first.text) if tok.is_punct("-") else int(first.text))
            return Literal(int(value) if value.is_integer() and "." not in tok.text else value)
        if tok.kind is TokenKind.STRING:
            self.advance()
            return Literal(tok.text)
        if tok.is_keyword("TRUE", "FALSE"):
            self.advance()
            return Literal(tok.text.upper() == "TRUE")
        if tok.is_keyword("NULL"):
            self.advance()
            return Literal(None)
        if tok.kind is TokenKind.IDENT and self.toks[self.i + 1].is_punct("("):
            what = "aggregates in WHERE" if tok.text.upper() in AGGREGATES else "functions"
            raise _unsupported(f"{what} ({tok.text}())", tok)
        col = Column(self.name("a column or a constant"))
        nxt = self.tok
        if nxt.kind is TokenKind.OP and nxt.text in ("+", "-", "/", "%", "||") or nxt.is_punct("*"):
            raise _arithmetic(self.toks, self.i)
        return col

    def check_unsupported_operand(self) -> None:
        tok = self.tok
        if tok.is_punct("(") and self.toks[self.i + 1].is_keyword("SELECT"):
            raise _unsupported("a subquery", tok)
        if tok.kind is TokenKind.IDENT and tok.text.upper() in _UNSUPPORTED:
            raise _unsupported(_UNSUPPORTED[tok.text.upper()], tok)

    def predicate(self) -> Expr:
        left = self.operand()
        tok = self.tok
        if tok.kind is TokenKind.OP and tok.text in _CMP:
            self.advance()
            right = self.operand()
            if self.tok.kind is TokenKind.OP and self.tok.text in _CMP:
                raise self.error("chained comparisons need AND")
            return Comparison(left, _CMP[tok.text], right)
        negated = False
        if tok.is_keyword("NOT"):
            self.advance()
            negated = True
        if self.tok.is_keyword("IN"):
            self.advance()
            self.expect_punct("(")
            if self.tok.is_keyword("SELECT"):
                raise _unsupported("a subquery", self.tok)
            values = [self.literal()]
            while self.tok.is_punct(","):
                self.advance()
                values.append(self.literal())
            self.expect_punct(")")
            return InList(left, tuple(values), negated)
        if self.tok.is_keyword("BETWEEN"):
            self.advance()
            low = self.operand()
            self.expect_keyword("AND")
            high = self.operand()
            return Between(left, low, high, negated)
        if not negated and self.tok.is_keyword("IS"):
            self.advance()
            neg = False
            if self.tok.is_keyword("NOT"):
                self.advance()
                neg = True
            self.expect_keyword("NULL")
            return IsNull(left, neg)
        self.check_unsupported()
        if isinstance(left, Literal) and not negated and isinstance(left.value, bool):
            return left
        if isinstance(left, Column) and not negated:
            raise self.error(f"expected a comparison after column {left.name!r}")
        raise self.error("expected a comparison, IN, BETWEEN or IS NULL")

    def literal(self) -> Literal:
        op = self.operand()
        if not isinstance(op, Literal):
            raise ConfigError(f"SQL: IN lists take constants only, found column {op.name!r}")
        return op


def parse(sql: str) -> Query:
    """Parse one statement of Veil's SQL subset.

    Parameters
    ----------
    sql
        ``SELECT ... FROM data [WHERE ...] [GROUP BY ...]`` (the table is always ``data``).

    Returns
    -------
    Query
        The syntax tree.

    Raises
    ------
    ConfigError
        For syntax errors and for every construct outside the subset (the message names it).

    Example
    -------
    >>> parse("SELECT AVG(age) FROM data").select[0].expr.func
    'mean'
    """
    return _Parser(sql).query()


def parse_condition(text: str) -> Expr:
    """Parse a stand-alone WHERE condition (e.g. for :meth:`veil.dp.frame.PrivateFrame.where`).

    Example
    -------
    >>> parse_condition("age BETWEEN 18 AND 65 AND sex = 'F'").terms[1].op
    '='
    """
    p = _Parser(text)
    expr = p.expr()
    if p.tok.kind is not TokenKind.EOF:
        p.check_unsupported()
        raise p.error("unexpected text after the condition")
    return expr
