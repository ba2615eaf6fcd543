"""Character masking: full, partial, and format-aware for e-mail addresses and phone numbers."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from veil.deid._keys import shown
from veil.deid.operators._base import Operator, OperatorContext, register
from veil.deid.operators._util import (
    canonical_str,
    check_column,
    factorize_cells,
    from_codes,
    replace_column,
    require_choice,
    require_int,
)
from veil.deid.operators._vecmask import partial_matrix, phone_matrix, vectorized
from veil.errors import ConfigError

__all__ = ["Mask", "mask_partial", "mask_email", "mask_phone"]

_KINDS = ("full", "partial", "email", "phone")
# A phone's digits are the characters with a Unicode numeric value (str.isnumeric, the same set
# as unicodedata.numeric): decimal digits (category Nd: "0"-"9", full-width "０"-"９",
# Arabic-Indic, Devanagari, ...) and every other character a reader takes for a digit:
# superscript/subscript "¹₂", circled "①⓪", parenthesized "⑴", dingbat "❶", CJK "一二三", ...


def _country_code_end(text: str) -> int:
    """End of a leading ``+`` or ``00`` and the 1-3 digits after it when a non-digit follows
    them (the kept country code); 0 when there is none."""
    p = 1 if text.startswith("+") else 2 if text.startswith("00") else 0
    if not p:
        return 0
    end = p
    while end < len(text) and text[end].isnumeric():
        end += 1
    return end if 1 <= end - p <= 3 and end < len(text) else 0


def mask_partial(text: str, keep_first: int, keep_last: int, char: str) -> str:
    """Mask ``text`` keeping its first/last characters; same length as ``text``.

    A value no longer than ``keep_first + keep_last`` is masked entirely (showing it whole would
    reveal it).

    Examples
    --------
    >>> mask_partial("4111111111111111", 0, 4, "*")
    '************1111'
    >>> mask_partial("abc", 2, 2, "#")
    '###'
    """
    n = len(text)
    if n <= keep_first + keep_last:
        return char * n
    tail = text[n - keep_last :] if keep_last else ""
    return text[:keep_first] + char * (n - keep_first - keep_last) + tail


def mask_email(text: str, keep_first: int, char: str, keep_tld: bool = True) -> str:
    """Mask an e-mail address label by label; same length, ``@`` and dots kept.

    The local part and each domain label keep their first ``keep_first`` characters; the
    top-level domain is kept when ``keep_tld``.  Text without a single ``@`` is fully masked.

    Examples
    --------
    >>> mask_email("john.smith@example.co.uk", 1, "*")
    'j*********@e******.c*.uk'
    """
    if text.count("@") != 1:
        return char * len(text)
    local, domain = text.split("@")
    labels = domain.split(".")
    masked = [mask_partial(lab, keep_first, 0, char) for lab in labels]
    if keep_tld and len(labels) > 1:
        masked[-1] = labels[-1]
    return mask_partial(local, keep_first, 0, char) + "@" + ".".join(masked)


def mask_phone(text: str, keep_last: int, char: str, keep_country_code: bool = True) -> str:
    """Mask the digits of a phone number, keeping separators, country code and last digits.

    Digits are all characters with a Unicode numeric value (``str.isnumeric``): a number
    written in full-width (``０９０``), Arabic-Indic, superscript (``¹²³``), circled
    (``①②③``) or CJK (``一二三``) digits is masked too, not released as it is.  A character
    that stands for a number above 9 (``⑩``, ``Ⅻ``) is one digit position.  The country code is
    the 1-3 digits after a leading ``+`` or ``00`` when a separator follows them.  Non-digit
    characters (spaces, dashes, parentheses) are kept, so the length and the format are
    unchanged.

    Examples
    --------
    >>> mask_phone("+254 712-345-678", 2, "*")
    '+254 ***-***-*78'
    >>> mask_phone("(555) 123 4567", 4, "X")
    '(XXX) XXX 4567'
    """
    chars = list(text)
    start = _country_code_end(text) if keep_country_code else 0
    digit_pos = [i for i in range(start, len(chars)) if chars[i].isnumeric()]
    # keep the last digits only when some digits remain masked
    cut = len(digit_pos) - keep_last if keep_last < len(digit_pos) else len(digit_pos)
    for i in digit_pos[:cut]:
        chars[i] = char
    return "".join(chars)


@register
class Mask(Operator):
    """Replace characters by a mask character.

    Masking hides part of a value but is *not* anonymization on its own: kept characters, the
    length and the format still carry information.

    Parameters
    ----------
    kind
        ``"full"`` (every character; with ``length`` a fixed-length mask that hides the length),
        ``"partial"`` (keep ``keep_first`` / ``keep_last`` characters), ``"email"`` (label-wise,
        keeps ``@``, dots and the top-level domain) or ``"phone"`` (masks digits, keeps
        separators, the country code and ``keep_last`` digits).  Default: ``"partial"`` when
        ``keep_first`` or ``keep_last`` is given, else ``"full"``.
    char
        The mask character (one character, default ``"*"``).
    keep_first, keep_last
        Characters kept at the start / end (partial), at the start of each label (email, default
        1) or digits kept at the end (phone, default 2).
    length
        Fixed output length for ``kind="full"``.
    keep_country_code, keep_tld
        Format-aware options for phone numbers and e-mails (default True).

    Examples
    --------
    >>> import pandas as pd
    >>> from veil.deid.operators import OperatorContext, get_operator
    >>> df = pd.DataFrame({"phone": ["0712345678"]})
    >>> get_operator("mask", {"keep_last": 4}).apply(df, "phone", OperatorContext())["phone"][0]
    '******5678'
    """

    name = "mask"
    replaces_values = True

    def __init__(
        self,
        kind: str | None = None,
        char: str = "*",
        keep_first: int | None = None,
        keep_last: int | None = None,
        length: int | None = None,
        keep_country_code: bool = True,
        keep_tld: bool = True,
    ) -> None:
        if kind is None:
            kind = "partial" if (keep_first or keep_last) else "full"
        self.kind = require_choice(self.name, "kind", kind, _KINDS)
        if not isinstance(char, str) or len(char) != 1:
            raise ConfigError(f"operator 'mask': char must be one character, got {shown(char)}")
        self.char = char
        defaults = {"full": (0, 0), "partial": (0, 0), "email": (1, 0), "phone": (0, 2)}[self.kind]
        self.keep_first = require_int(
            self.name, "keep_first", defaults[0] if keep_first is None else keep_first
        )
        self.keep_last = require_int(
            self.name, "keep_last", defaults[1] if keep_last is None else keep_last
        )
        if self.kind == "full" and (self.keep_first or self.keep_last):
            raise ConfigError("operator 'mask': keep_first/keep_last need kind 'partial'")
        if length is not None:
            if self.kind != "full":
                raise ConfigError("operator 'mask': length is only allowed with kind 'full'")
            length = require_int(self.name, "length", length, minimum=1)
        self.length = length
        self.keep_country_code = bool(keep_country_code)
        self.keep_tld = bool(keep_tld)
        self._stats: dict[str, Any] = {}

    def mask_values(self, values: np.ndarray) -> list[str] | np.ndarray:
        """Mask an array of values (converted to text); one output per value."""
        c = self.char
        if pd.api.types.infer_dtype(values, skipna=False) == "string":
            texts = values
        else:
            texts = [canonical_str(v) for v in values]
        if self.kind == "full":
            if self.length is not None:
                fixed = c * self.length
                return [fixed] * len(texts)
            return [c * len(t) for t in texts]
        if self.kind == "partial":
            a, b = self.keep_first, self.keep_last
            return vectorized(
                texts,
                lambda m, n: partial_matrix(m, n, a, b, ord(c)),
                lambda t: mask_partial(t, a, b, c),
            )
        if self.kind == "email":
            return [mask_email(t, self.keep_first, c, self.keep_tld) for t in texts]
        k, cc = self.keep_last, self.keep_country_code
        return vectorized(
            texts,
            lambda m, n: phone_matrix(m, n, k, ord(c), cc),
            lambda t: mask_phone(t, k, c, cc),
        )

    def apply(self, df: pd.DataFrame, column: str | None, ctx: OperatorContext) -> pd.DataFrame:
        col = check_column(df, column, self.name)
        s = df[col]
        codes, uniques = factorize_cells(s)
        uvals = np.asarray(uniques, dtype=object)
        masked = self.mask_values(uvals) if len(uvals) else []
        self._stats = {}
        if self.kind != "full" or self.length is None:  # the output still carries information
            # records whose masked value no other record shares: the kept characters, length
            # and format single them out for anyone holding the original values
            mcodes = pd.factorize(np.asarray(masked, dtype=object))[0]
            records_per_mask = np.bincount(mcodes[codes[codes >= 0]])
            unique = int(np.count_nonzero(records_per_mask == 1))
            self._stats = {"unique_masked_records": unique}
            if unique:
                total = int(np.count_nonzero(codes >= 0))
                ctx.warn_once(
                    f"operator 'mask' on {str(col)!r}: {unique} of {total} record(s) keep a "
                    "masked value no other record has (kept characters, length and format): "
                    "anyone holding the original values can match them; keep fewer characters, "
                    "use kind full with a length, or drop the column"
                )
        return replace_column(df, col, from_codes(masked, codes, s))

    def stats(self) -> dict[str, Any]:
        return dict(self._stats)

    def describe(self) -> str:
        if self.kind == "full":
            how = f"to {self.length} characters" if self.length else "keeping the length"
            return f"fully masked with {self.char!r} {how}"
        if self.kind == "partial":
            return (
                f"masked with {self.char!r} except the first {self.keep_first} and last "
                f"{self.keep_last} characters"
            )
        if self.kind == "email":
            return "e-mail addresses masked label by label (first character and domain suffix kept)"
        return (
            f"phone digits masked (separators, country code and last {self.keep_last} digits kept)"
        )

    def params(self) -> dict[str, Any]:
        p: dict[str, Any] = {"kind": self.kind, "char": self.char}
        if self.kind in ("partial", "email"):
            p["keep_first"] = self.keep_first
        if self.kind in ("partial", "phone"):
            p["keep_last"] = self.keep_last
        if self.length is not None:
            p["length"] = self.length
        return p
