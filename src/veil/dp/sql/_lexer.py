"""Tokenizer of Veil's SQL subset.

A small hand-written scanner: identifiers (bare, ``"double quoted"`` or `` `back-quoted` ``),
single-quoted strings (``''`` escapes a quote), integer and decimal numbers, punctuation and
comparison operators.  Keywords are recognised case-insensitively by the parser, not here, so
that a column may be called ``count`` when quoted.

Example
-------
>>> [t.text for t in tokenize("SELECT COUNT(*) FROM data")]
['SELECT', 'COUNT', '(', '*', ')', 'FROM', 'data', '']
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from veil.errors import ConfigError

__all__ = ["Token", "TokenKind", "tokenize"]


class TokenKind(Enum):
    """Kinds of lexical tokens."""

    IDENT = "identifier"
    QUOTED_IDENT = "quoted identifier"
    STRING = "string"
    NUMBER = "number"
    OP = "operator"
    PUNCT = "punctuation"
    EOF = "end of query"


@dataclass(frozen=True)
class Token:
    """One token: its kind, its text (unquoted for strings/quoted identifiers) and position."""

    kind: TokenKind
    text: str
    pos: int

    def is_keyword(self, *words: str) -> bool:
        """True when this is a bare identifier equal (case-insensitively) to one of ``words``."""
        return self.kind is TokenKind.IDENT and self.text.upper() in words

    def is_punct(self, *chars: str) -> bool:
        """True when this is one of the punctuation/operator strings ``chars``."""
        return self.kind in (TokenKind.PUNCT, TokenKind.OP) and self.text in chars


#: ASCII digits only: str.isdigit() also accepts "²" or "٣", which float() and int() refuse
_DIGITS = frozenset("0123456789")
_TWO_CHAR_OPS = ("<=", ">=", "<>", "!=", "==", "||")
_ONE_CHAR_OPS = "=<>+-/%"
_PUNCT = "(),.*;"


def _read_quoted(sql: str, start: int, quote: str, what: str) -> tuple[str, int]:
    """Read a quoted run starting after ``start``; a doubled quote escapes itself."""
    i = start + 1
    out: list[str] = []
    while i < len(sql):
        ch = sql[i]
        if ch == quote:
            if i + 1 < len(sql) and sql[i + 1] == quote:
                out.append(quote)
                i += 2
                continue
            return "".join(out), i + 1
        out.append(ch)
        i += 1
    raise ConfigError(f"SQL: unterminated {what} starting at position {start}")


def tokenize(sql: str) -> list[Token]:
    """Split ``sql`` into tokens, ending with an EOF token.

    Parameters
    ----------
    sql
        The query text.

    Returns
    -------
    list of Token

    Raises
    ------
    ConfigError
        On an unterminated string or identifier or a character outside the subset.
    """
    if not isinstance(sql, str):
        raise ConfigError(f"SQL: the query must be a string, got {type(sql).__name__}")
    tokens: list[Token] = []
    i, n = 0, len(sql)
    while i < n:
        ch = sql[i]
        if ch.isspace():
            i += 1
        elif sql.startswith("--", i):  # line comment
            j = sql.find("\n", i)
            i = n if j < 0 else j + 1
        elif sql.startswith("/*", i):
            j = sql.find("*/", i + 2)
            if j < 0:
                raise ConfigError(f"SQL: unterminated comment starting at position {i}")
            i = j + 2
        elif ch == "'":
            text, j = _read_quoted(sql, i, "'", "string")
            tokens.append(Token(TokenKind.STRING, text, i))
            i = j
        elif ch in '"`':
            text, j = _read_quoted(sql, i, ch, "quoted identifier")
            if not text:
                raise ConfigError(f"SQL: empty quoted identifier at position {i}")
            tokens.append(Token(TokenKind.QUOTED_IDENT, text, i))
            i = j
        elif ch in _DIGITS or (ch == "." and i + 1 < n and sql[i + 1] in _DIGITS):
            j = i
            while j < n and (sql[j] in _DIGITS or sql[j] == "."):
                j += 1
            if j < n and sql[j] in "eE":
                k = j + 1
                if k < n and sql[k] in "+-":
                    k += 1
                if k < n and sql[k] in _DIGITS:
                    j = k
                    while j < n and sql[j] in _DIGITS:
                        j += 1
            text = sql[i:j]
            if text.count(".") > 1:
                raise ConfigError(f"SQL: malformed number {text!r} at position {i}")
            tokens.append(Token(TokenKind.NUMBER, text, i))
            i = j
        elif ch.isalpha() or ch == "_":
            j = i
            while j < n and (sql[j].isalnum() or sql[j] == "_"):
                j += 1
            tokens.append(Token(TokenKind.IDENT, sql[i:j], i))
            i = j
        elif sql[i : i + 2] in _TWO_CHAR_OPS:
            tokens.append(Token(TokenKind.OP, sql[i : i + 2], i))
            i += 2
        elif ch in _ONE_CHAR_OPS:
            tokens.append(Token(TokenKind.OP, ch, i))
            i += 1
        elif ch in _PUNCT:
            tokens.append(Token(TokenKind.PUNCT, ch, i))
            i += 1
        else:
            raise ConfigError(f"SQL: unexpected character {ch!r} at position {i}")
    tokens.append(Token(TokenKind.EOF, "", n))
    return tokens
