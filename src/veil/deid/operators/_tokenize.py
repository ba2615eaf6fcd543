"""Reversible tokenization with deterministic authenticated encryption (AES-SIV, RFC 5297)."""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

import numpy as np
import pandas as pd
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESSIV

from veil.deid.operators._base import Operator, OperatorContext, register
from veil.deid.operators._util import (
    check_column,
    derive_key,
    map_uniques,
    replace_column,
    require_int,
)
from veil.errors import ConfigError, CryptoError

__all__ = ["Tokenize", "tokenize_values", "detokenize", "detokenize_frame"]

_PURPOSE = "tokenize:aes-siv-512"
_TOKEN_BODY = re.compile(r"[A-Za-z0-9_-]*")


def _cipher(master: bytes) -> AESSIV:
    return AESSIV(derive_key(master, _PURPOSE, 64))


def _encode_plain(value: Any) -> bytes:
    """Type-tagged plaintext so integers and floats come back as numbers."""
    if isinstance(value, (bool, np.bool_)):
        return b"s" + str(bool(value)).encode()
    if isinstance(value, (int, np.integer)):
        return b"i" + str(int(value)).encode()
    if isinstance(value, (float, np.floating)):
        return b"f" + repr(float(value)).encode()
    if isinstance(value, pd.Timestamp):
        return b"s" + value.isoformat().encode()
    return b"s" + str(value).encode("utf-8")


def _pad(plain: bytes, block: int) -> bytes:
    """``p`` + plaintext + 0x80 + zeros up to a multiple of ``block`` (ISO/IEC 7816-4)."""
    data = b"p" + plain + b"\x80"
    return data + b"\x00" * (-len(data) % block)


def _decode_plain(data: bytes) -> Any:
    if data[:1] == b"p":  # padded: strip the padding, then the inner plaintext
        inner = data[1:].rstrip(b"\x00")
        if not inner.endswith(b"\x80") or inner[:1] not in (b"i", b"f", b"s"):
            raise ValueError("bad padding")
        data = inner[:-1]
    tag, body = data[:1], data[1:].decode("utf-8")
    if tag == b"i":
        return int(body)
    if tag == b"f":
        return float(body)
    return body


def tokenize_values(
    values: Any, key: bytes, context: str, prefix: str = "", pad: int = 0
) -> list[str]:
    """Encrypt ``values`` to url-safe tokens bound to ``context`` (the column name).

    With ``pad`` > 0 the plaintext is padded to a multiple of ``pad`` bytes, so tokens show
    the value's length only to within ``pad`` bytes (default 0: the exact length shows).

    Examples
    --------
    >>> t = tokenize_values(["alice", 42], bytes(32), "id")
    >>> detokenize(t, bytes(32), "id")
    ['alice', 42]
    """
    siv = _cipher(key)
    ad = [context.encode("utf-8")]
    out = []
    for v in values:
        plain = _encode_plain(v)
        ct = siv.encrypt(_pad(plain, pad) if pad else plain, ad)
        out.append(prefix + base64.urlsafe_b64encode(ct).rstrip(b"=").decode("ascii"))
    return out


def _token_bytes(body: str) -> bytes:
    """The bytes of a token body, which must be their canonical unpadded url-safe base64.

    ``base64.urlsafe_b64decode`` ignores characters outside the alphabet and the unused low
    bits of the last character, so many strings decode to one ciphertext: a modified token
    would decrypt.  Only the exact encoding :func:`tokenize_values` writes is accepted.
    """
    if not _TOKEN_BODY.fullmatch(body):
        raise ValueError("not a token")
    raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    if base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii") != body:
        raise ValueError("not the canonical encoding of a token")
    return raw


def _decrypt_all(
    tokens: Any, key: bytes, context: str, prefix: str
) -> tuple[list[Any], np.ndarray]:
    """Plaintexts (None where missing or bad) and a mask of the tokens that failed."""
    siv = _cipher(key)
    ad = [context.encode("utf-8")]
    out: list[Any] = []
    bad: list[bool] = []
    for tok in tokens:
        if tok is None or tok is pd.NA or (isinstance(tok, float) and np.isnan(tok)):
            out.append(None)
            bad.append(False)
            continue
        text = str(tok)
        value = None
        if not prefix or text.startswith(prefix):
            body = text[len(prefix) :]
            try:
                raw = _token_bytes(body)
                value = _decode_plain(siv.decrypt(raw, ad))
            except (InvalidTag, ValueError, binascii.Error, UnicodeDecodeError):
                value = None
            else:
                out.append(value)
                bad.append(False)
                continue
        out.append(None)
        bad.append(True)
    return out, np.asarray(bad, dtype=bool)


def _fail(context: str, n_rows: int) -> CryptoError:
    return CryptoError(
        f"column {context!r}: {n_rows} token(s) failed authentication (tampered, wrong key, "
        "tokens from another column, or not tokens: pseudonymize, mask and fake are one-way, "
        "only tokenize can be reversed); nothing was decrypted"
    )


def detokenize(tokens: Any, key: bytes, context: str, prefix: str = "") -> list[Any]:
    """Decrypt tokens made by :func:`tokenize_values` with the same key and context.

    Missing values (None/NaN) stay None.  Any token that fails authentication (tampered,
    wrong key, moved from another column, or not a token) raises :class:`CryptoError` giving
    the number of bad tokens; nothing is returned then.

    Examples
    --------
    >>> detokenize(tokenize_values(["x"], bytes(32), "c"), bytes(32), "c")
    ['x']
    """
    out, bad = _decrypt_all(tokens, key, context, prefix)
    if bad.any():
        raise _fail(context, int(bad.sum()))
    return out


def _restore_dtype(values: list[Any], like: pd.Series) -> pd.Series:
    present = [v for v in values if v is not None]
    arr = np.array(values, dtype=object)
    if present and all(isinstance(v, int) for v in present):
        lo, hi = min(present), max(present)
        if -(2**63) <= lo and hi < 2**63:
            wide, ext = np.int64, "Int64"
        elif lo >= 0 and hi < 2**64:  # a uint64 column's large values
            wide, ext = np.uint64, "UInt64"
        else:
            return pd.Series(arr, index=like.index, name=like.name, dtype=object)
        if len(present) == len(values):
            return pd.Series(arr.astype(wide), index=like.index, name=like.name)
        return pd.Series(pd.array(values, dtype=ext), index=like.index, name=like.name)
    if present and all(isinstance(v, (int, float)) for v in present):
        f = np.array([np.nan if v is None else v for v in values], dtype=np.float64)
        return pd.Series(f, index=like.index, name=like.name)
    s = pd.Series(arr, index=like.index, name=like.name, dtype=object)
    if isinstance(like.dtype, pd.StringDtype):
        s = s.astype(like.dtype)
    return s


def detokenize_frame(
    df: pd.DataFrame,
    columns: list[str],
    key: bytes,
    prefix: str = "",
    contexts: dict[str, str] | None = None,
) -> pd.DataFrame:
    """Return a copy of ``df`` with the token ``columns`` decrypted (the key holder's side).

    ``contexts`` maps a column to the name it had when tokenized (default: its own name).
    All columns are checked before any result is returned.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"id": tokenize_values([7, 8], bytes(32), "id")})
    >>> detokenize_frame(df, ["id"], bytes(32))["id"].tolist()
    [7, 8]
    """
    out = df.copy(deep=False)
    for col in columns:
        check_column(df, col, "detokenize")
        s = df[col]
        codes, uniques = pd.factorize(s, use_na_sentinel=True)
        context = (contexts or {}).get(col, str(col))
        plain, bad = _decrypt_all(list(uniques), key, context, prefix)
        if bad.any():  # count rows, not distinct tokens
            raise _fail(str(col), int(bad[codes[codes >= 0]].sum()))
        plain.append(None)
        restored = [plain[c] for c in codes]
        out[col] = _restore_dtype(restored, s)
    return out


@register
class Tokenize(Operator):
    """Replace each value by a reversible token: AES-SIV encryption (RFC 5297), url-safe base64.

    Deterministic (the same value gives the same token, so joins still work) and authenticated
    (a modified token fails to decrypt).  The column name is the associated data, so a token
    moved to another column does not decrypt.  The 512-bit AES-SIV key is derived from
    ``ctx.secret()`` with HKDF.  The key holder reverses it with :func:`detokenize_frame` or
    ``veil reidentify``.  Tokens reveal the exact length of the value's text in UTF-8 bytes
    (a number's count of digits).

    Parameters
    ----------
    prefix
        Text put before each token (e.g. ``"tok_"``).
    pad
        Pad each plaintext to a multiple of this many bytes (ISO/IEC 7816-4 padding inside the
        ciphertext), so tokens of values up to ``pad - 3`` bytes all have one length; default
        0 (no padding: the exact length shows).  Decryption needs no setting.
    context
        Associated data binding the tokens; default the column name.

    Examples
    --------
    >>> import pandas as pd
    >>> from veil.deid.operators import OperatorContext, get_operator
    >>> ctx = OperatorContext(secret_loader=lambda: bytes(32))
    >>> df = pd.DataFrame({"ssn": ["078-05-1120"]})
    >>> tok = get_operator("tokenize").apply(df, "ssn", ctx)
    >>> detokenize_frame(tok, ["ssn"], bytes(32))["ssn"][0]
    '078-05-1120'
    """

    name = "tokenize"
    replaces_values = True

    def __init__(self, prefix: str = "", context: str | None = None, pad: int = 0) -> None:
        if not isinstance(prefix, str) or (context is not None and not isinstance(context, str)):
            raise ConfigError("operator 'tokenize': prefix and context must be text")
        self.pad = require_int(self.name, "pad", pad, maximum=4096)
        self.prefix = prefix
        self.context = context

    def apply(self, df: pd.DataFrame, column: str | None, ctx: OperatorContext) -> pd.DataFrame:
        col = check_column(df, column, self.name)
        key = ctx.secret()
        context = self.context if self.context is not None else str(col)
        new = map_uniques(
            df[col], lambda u: tokenize_values(u, key, context, self.prefix, self.pad)
        )
        return replace_column(df, col, new)

    def describe(self) -> str:
        return "replaced by reversible tokens (AES-SIV, key holder can re-identify)"

    def params(self) -> dict[str, Any]:
        p: dict[str, Any] = {"prefix": self.prefix, "algorithm": "AES-SIV-512", "pad": self.pad}
        if self.context is not None:
            p["context"] = self.context
        return p
