"""Keyed pseudonymization with HMAC-SHA-256."""

from __future__ import annotations

import base64
import unicodedata
from typing import Any

import numpy as np
import pandas as pd

from veil.deid.operators._base import Operator, OperatorContext, register
from veil.deid.operators._util import (
    check_column,
    derive_key,
    hmac_sha256_many,
    keyed_text,
    map_uniques,
    replace_column,
    require_choice,
    require_int,
)
from veil.errors import ConfigError, CryptoError

__all__ = ["Pseudonymize", "pseudonyms"]

_MAX_LEN = {"hex": 64, "base32": 52}


def _normalize(text: str, how: str) -> str:
    # canonically equivalent texts (precomposed "é" vs "e" + combining accent, as macOS file
    # names and some keyboards write it) are one value: NFC first, which leaves NFC text as is
    text = unicodedata.normalize("NFC", text) if how != "none" else text
    if how == "strip":
        return text.strip()
    if how == "lower":
        return text.strip().lower()
    return text


def _texts(values: Any, normalize: str) -> list[str]:
    vals = values if isinstance(values, np.ndarray) else np.asarray(list(values), dtype=object)
    if pd.api.types.infer_dtype(vals, skipna=False) == "string":  # fast path: all str
        texts = list(vals)
    else:
        texts = [keyed_text(v) for v in vals]  # bytes: losslessly
    if normalize != "none":
        texts = [_normalize(t, normalize) for t in texts]
    return texts


def _encode(macs: list[bytes], length: int, encoding: str, prefix: str) -> list[str]:
    if encoding == "hex":
        nbytes = (length + 1) // 2
        if length % 2 == 0 and not prefix:
            return [m[:nbytes].hex() for m in macs]
        return [prefix + m[:nbytes].hex()[:length] for m in macs]
    return [prefix + base64.b32encode(m).decode("ascii").lower()[:length] for m in macs]


def _has_collision(macs: list[bytes], out: list[str], bits_per_char: int, length: int) -> bool:
    """Whether two different MACs give the same pseudonym (checked on 64-bit prefixes first)."""
    top = np.frombuffer(b"".join(m[:8] for m in macs), dtype=">u8")
    bits = bits_per_char * length
    if bits < 64:
        top = top >> np.uint64(64 - bits)
    top = np.sort(top)  # (np.unique is much slower on numpy 2.4's hash path)
    if not (top[1:] == top[:-1]).any():
        return False
    return len(set(out)) != len(set(macs))


def pseudonyms(
    values: Any,
    key: bytes,
    *,
    length: int = 20,
    encoding: str = "hex",
    prefix: str = "",
    scope: str = "",
    normalize: str = "none",
) -> list[str]:
    """Pseudonyms of ``values`` under the *master* ``key`` (no collision check).

    The sub-key is HKDF(master, ``"pseudonymize:" + scope``); each pseudonym is ``prefix`` plus
    the first ``length`` characters of the hex or base32 encoding of
    HMAC-SHA-256(sub-key, canonical text of the value).

    Examples
    --------
    >>> p = pseudonyms(["alice", "bob", "alice"], b"k" * 32, length=8)
    >>> p[0] == p[2] != p[1], len(p[0])
    (True, 8)
    """
    sub = derive_key(key, "pseudonymize:" + scope)
    texts = _texts(values, normalize)
    macs = hmac_sha256_many(sub, (t.encode("utf-8", "surrogatepass") for t in texts))
    return _encode(macs, length, encoding, prefix)


@register
class Pseudonymize(Operator):
    """Replace each value by a keyed pseudonym (HMAC-SHA-256, RFC 2104).

    The same value gets the same pseudonym in every file and every run that uses the same key
    and ``scope``, so released tables can still be joined; without the key the mapping can be
    neither computed nor inverted (unlike plain hashing, which falls to a dictionary attack).
    The key comes from ``ctx.secret()`` and is never printed, logged or reported.

    Pseudonymized data is still personal data (GDPR Recital 26): the key holder can re-link it,
    and the other columns may identify people.

    Parameters
    ----------
    length
        Characters of the digest kept (default 20 hex characters = 80 bits: collisions among a
        billion distinct values have probability ~4e-7).  Collisions within the column are
        detected and raise :class:`~veil.errors.CryptoError`.
    encoding
        ``"hex"`` (default) or ``"base32"`` (lower case, 5 bits per character).
    prefix
        Text put before each pseudonym (e.g. ``"P-"``).
    scope
        Domain-separation label: different scopes give unrelated pseudonyms for the same value.
        The column name is not an input: with one key and scope, a value gets the same
        pseudonym in every column and release (linkable); give columns that must not be
        linked their own scope.
    normalize
        ``"none"`` (default: the exact text), ``"strip"`` (Unicode NFC, then trim spaces) or
        ``"lower"`` (NFC, trim and lower-case) before hashing, so ``" Ann@X.org"`` and
        ``"ann@x.org"`` can share a pseudonym, and so can a name typed precomposed (NFC) and
        decomposed (NFD).

    Examples
    --------
    >>> import pandas as pd
    >>> from veil.deid.operators import OperatorContext, get_operator
    >>> ctx = OperatorContext(secret_loader=lambda: bytes(32))
    >>> df = pd.DataFrame({"id": ["A1", "B2", "A1"]})
    >>> out = get_operator("pseudonymize", {"length": 12, "prefix": "P-"}).apply(df, "id", ctx)
    >>> out["id"][0] == out["id"][2], out["id"][0][:2], len(out["id"][0])
    (True, 'P-', 14)
    """

    name = "pseudonymize"
    replaces_values = True

    def __init__(
        self,
        length: int = 20,
        encoding: str = "hex",
        prefix: str = "",
        scope: str = "",
        normalize: str = "none",
    ) -> None:
        self.encoding = require_choice(self.name, "encoding", encoding, ("hex", "base32"))
        self.length = require_int(self.name, "length", length, minimum=8)
        if self.length > _MAX_LEN[self.encoding]:
            raise ConfigError(
                f"operator 'pseudonymize': length must be <= {_MAX_LEN[self.encoding]} for "
                f"{self.encoding}, got {length}"
            )
        if not isinstance(prefix, str) or not isinstance(scope, str):
            raise ConfigError("operator 'pseudonymize': prefix and scope must be text")
        self.prefix = prefix
        self.scope = scope
        self.normalize = require_choice(
            self.name, "normalize", normalize, ("none", "strip", "lower")
        )

    def _transform(self, key: bytes, uniques: np.ndarray) -> list[str]:
        sub = derive_key(key, "pseudonymize:" + self.scope)
        texts = _texts(uniques, self.normalize)
        macs = hmac_sha256_many(sub, (t.encode("utf-8", "surrogatepass") for t in texts))
        out = _encode(macs, self.length, self.encoding, self.prefix)
        if _has_collision(macs, out, 4 if self.encoding == "hex" else 5, self.length):
            raise CryptoError(
                f"operator 'pseudonymize': two distinct values got the same pseudonym at length "
                f"{self.length}; use a larger length"
            )
        return out

    def apply(self, df: pd.DataFrame, column: str | None, ctx: OperatorContext) -> pd.DataFrame:
        col = check_column(df, column, self.name)
        key = ctx.secret()
        return replace_column(df, col, map_uniques(df[col], lambda u: self._transform(key, u)))

    def describe(self) -> str:
        return (
            f"replaced by keyed pseudonyms (HMAC-SHA-256, {self.length} {self.encoding} "
            "characters); re-linkable only with the key"
        )

    def params(self) -> dict[str, Any]:
        return {
            "length": self.length,
            "encoding": self.encoding,
            "prefix": self.prefix,
            "scope": self.scope,
            "normalize": self.normalize,
        }
