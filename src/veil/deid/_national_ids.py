"""Content detectors for national identifiers: UK NINO, Kenyan KRA PIN, Canadian SIN, Dutch BSN.

Each detector takes a 1-D object array of a column's distinct non-missing values and returns a
boolean mask, like those of :mod:`veil.deid._detectors`.

* The UK National Insurance number and the Kenyan KRA PIN are distinctive shapes (letters and
  digits in fixed places, with the prefixes HMRC never issues excluded), so each value is judged
  on its own, as e-mail addresses are.
* The Canadian social insurance number (Luhn check digit) and the Dutch citizen service number
  (BSN, "11-proof" check digit) are 9 digits, the shape of any reference number: a random one
  passes the Luhn check 1 time in 10 and the 11-proof 1 time in 11.  They are recognised only
  column-wise, when at least :data:`MIN_DISTINCT` distinct candidate values are present and at
  least :data:`CHECK_SHARE` of them pass.  For a column of ``n >= 10`` random candidates the
  chance of that is the binomial tail ``P(X >= 0.9 n)`` with ``X ~ Bin(n, 1/10)``, largest at
  ``n = 10`` (``9.1e-9``) and ``1.6e-16`` at ``n = 20``, so ordinary numbers are not flagged,
  while real identifiers all pass.

References
----------
HMRC, National Insurance Manual NIM39110 (format of the National Insurance number).
Kenya Revenue Authority, "PIN" (personal identification number: ``A`` for individuals, ``P``
for non-individuals, nine digits, a check letter).
Employment and Social Development Canada, Social Insurance Number Code of Practice (9 digits,
Luhn check digit; first digit 0 and 8 not used for persons).
Dutch Wet algemene bepalingen burgerservicenummer (2007); the "elfproef" check: with weights
9, 8, ..., 2, -1 the weighted digit sum is divisible by 11.
H. P. Luhn, "Computer for verifying numbers", US patent 2,950,048 (1960).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pandas as pd

from veil.deid._text import as_text, digit_matrix, fullmatch, luhn_valid

__all__ = [
    "CHECK_SHARE",
    "MIN_DISTINCT",
    "NINO_IN_TEXT",
    "KRA_PIN_IN_TEXT",
    "bsn_valid",
    "code_families",
    "detect_bsn",
    "detect_kra_pin",
    "detect_nino",
    "detect_sin",
]

#: Candidates a column must hold before a 9-digit checksum detector may classify it.
MIN_DISTINCT = 10
#: Share of a column's distinct candidates that must pass the check digit (chance: <= 1/10).
CHECK_SHARE = 0.9

#: NINO prefix: first letter not D F I Q U V, second not D F I O Q U V, and never one of the
#: administrative prefixes BG GB KN NK NT TN ZZ (HMRC NIM39110).
_NINO_PREFIX = r"(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]"
#: A column value: compact (``AB123456C``), in pairs (``AB 12 34 56 C``) or split any other
#: way by up to two spaces or hyphens between the groups (``AB 123456 C``, ``AB-12-34-56-C``);
#: suffix A-D.  Without the prefix look-ahead (which pandas' Arrow engine lacks): excluded
#: prefixes are removed afterwards from the few matches.
_NINO_SHAPE = _NINO_PREFIX.removeprefix("(?!BG|GB|KN|NK|NT|TN|ZZ)") + (
    r"[\s-]{0,2}\d{2}[\s-]{0,2}\d{2}[\s-]{0,2}\d{2}[\s-]{0,2}[A-D]"
)
#: In prose only the usual spellings: compact, in pairs, or 2-6-1 (``AB 123456 C``).
_NINO = _NINO_PREFIX + r"(?: ?\d{6} ?| \d{2} \d{2} \d{2} )[A-D]"
_NINO_EXCLUDED = frozenset({"BG", "GB", "KN", "NK", "NT", "TN", "ZZ"})
_KRA_PIN = r"[AP]\d{9}[A-Z]"
#: In prose: the same shapes in capitals, standing alone (not inside a longer code).
NINO_IN_TEXT = r"(?<![\w-])" + _NINO + r"(?![\w-])"
KRA_PIN_IN_TEXT = r"(?<![\w-])" + _KRA_PIN + r"(?![\w-])"
#: SIN as written: three groups of three digits with the same separator; first digit not 0/8.
_SIN = r"[1-79]\d{2}-\d{3}-\d{3}|[1-79]\d{2} \d{3} \d{3}"
#: BSN as written: 9 digits bare (8 when a leading zero was lost to an integer column), or
#: grouped 4-2-3 or 3-3-3 with dots or spaces.
_BSN = r"\d{8,9}|\d{4}\.\d{2}\.\d{3}|\d{4} \d{2} \d{3}|\d{3}\.\d{3}\.\d{3}"
_BSN_WEIGHTS = np.array([9, 8, 7, 6, 5, 4, 3, 2, -1])


_NINO_RX = re.compile(_NINO_SHAPE, re.IGNORECASE)
_KRA_RX = re.compile(_KRA_PIN, re.IGNORECASE)
_SIN_RX = re.compile(_SIN)
_BSN_RX = re.compile(_BSN)


def detect_nino(values: np.ndarray) -> np.ndarray:
    """UK National Insurance numbers (``AB123456C``, ``AB 12 34 56 C``, ``AB-123456-C``, any case).

    Examples
    --------
    >>> detect_nino(np.array(["AB123456C", "ab 12 34 56 d", "QQ123456C", "GB123456A"],
    ...                      dtype=object)).tolist()
    [True, True, False, False]
    """
    s = as_text(values)
    out = fullmatch(s, _NINO_RX)
    if out.any():
        out &= ~s.str[:2].str.upper().isin(_NINO_EXCLUDED).to_numpy(bool)
    return out


def detect_kra_pin(values: np.ndarray) -> np.ndarray:
    """Kenyan KRA PINs: ``A`` (individual) or ``P`` (non-individual), 9 digits, a letter.

    Examples
    --------
    >>> detect_kra_pin(np.array(["A012345678Z", "p051234567k", "B012345678Z"],
    ...                         dtype=object)).tolist()
    [True, True, False]
    """
    return fullmatch(as_text(values), _KRA_RX)


#: The NINO's and KRA PIN's layouts with any letters, as whole values in capitals.
_NINO_LAYOUT = re.compile(r"[A-Z]{2} ?(?:\d{6}|\d{2} \d{2} \d{2}) ?[A-Z]")
_KRA_LAYOUT = re.compile(r"[A-Z]\d{9}[A-Z]")


def code_families(values: np.ndarray | pd.Series) -> dict[str, np.ndarray]:
    """Values that are whole codes of a family laid out like NINOs or KRA PINs: kind -> mask.

    A product or part code such as ``XK204511M`` has the NINO's layout; a random code of that
    layout is a valid NINO 8.5% of the time (373 of 676 prefixes, 4 of 26 suffixes) and one of
    the KRA PIN's a valid PIN 7.7% of the time (``A`` or ``P`` first).  So where a column holds
    at least :data:`MIN_DISTINCT` distinct values of the layout and fewer than
    :data:`CHECK_SHARE` of them are valid, they are a family of codes, and the valid-looking
    ones among them are chance matches, not identifiers in free text.  Real NINOs and PINs are
    all valid, so a column of them (or of prose mentioning them) is never a family.

    Examples
    --------
    >>> codes = [f"XK{i:06d}M" for i in range(12)] + ["AB123456C"]
    >>> code_families(np.array(codes, dtype=object))["uk_nino"][-3:].tolist()
    [True, True, True]
    """
    s = as_text(values)
    out = {}
    for kind, layout in (("uk_nino", _NINO_LAYOUT), ("kra_pin", _KRA_LAYOUT)):
        lay = fullmatch(s, layout)
        idx = np.flatnonzero(lay)
        if len(idx) >= MIN_DISTINCT:
            valid = (detect_nino if kind == "uk_nino" else detect_kra_pin)(
                np.asarray(s.iloc[idx], dtype=object)
            )
            if valid.mean() < CHECK_SHARE:
                out[kind] = lay
                continue
        out[kind] = np.zeros(len(s), dtype=bool)
    return out


def _digit_matrix(digits: list[str]) -> np.ndarray:
    """``(n, 9)`` integer array of 9-digit strings (any script's digits)."""
    return digit_matrix(digits, 9)


def bsn_valid(mat: np.ndarray) -> np.ndarray:
    """The BSN 11-proof of 9-digit rows: weights 9..2 and -1, sum divisible by 11, not all zero.

    Examples
    --------
    >>> bsn_valid(np.array([[1, 1, 1, 2, 2, 2, 3, 3, 3], [1, 2, 3, 4, 5, 6, 7, 8, 2]])).tolist()
    [True, True]
    """
    s = mat @ _BSN_WEIGHTS
    return (s % 11 == 0) & (mat.sum(axis=1) > 0)


def _by_checksum(
    values: np.ndarray, shape: re.Pattern[str], check: Callable[[np.ndarray], np.ndarray]
) -> np.ndarray:
    """Values of ``shape`` passing ``check``, when the column as a whole passes (see module)."""
    s = as_text(values)
    cand = fullmatch(s, shape)
    out = np.zeros(len(s), dtype=bool)
    idx = np.flatnonzero(cand)
    if len(idx) < MIN_DISTINCT:
        return out
    digits = [x.replace(" ", "").replace("-", "").replace(".", "").zfill(9) for x in s[cand]]
    ok = check(_digit_matrix(digits))
    if ok.mean() >= CHECK_SHARE:
        out[idx] = ok
    return out


def detect_sin(values: np.ndarray) -> np.ndarray:
    """Canadian social insurance numbers written ``123-456-782`` or ``123 456 782``.

    Only in a column of at least :data:`MIN_DISTINCT` such values of which at least
    :data:`CHECK_SHARE` pass the Luhn check (a 3-3-3 phone number passes 1 time in 10).

    Examples
    --------
    >>> sins = ["390 404 796", "769 725 102", "606 950 699", "736 205 584", "324 329 853",
    ...         "443 342 290", "962 851 416", "377 421 128", "984 385 567", "700 360 670"]
    >>> detect_sin(np.array(sins + ["130 692 545"], dtype=object)).tolist()[-3:]
    [True, True, False]
    >>> detect_sin(np.array(sins[:3], dtype=object)).tolist()  # too few to tell
    [False, False, False]
    """
    return _by_checksum(values, _SIN_RX, luhn_valid)


def detect_bsn(values: np.ndarray) -> np.ndarray:
    """Dutch citizen service numbers (BSN): 9 digits (or 8, a lost leading zero) passing the
    11-proof, in a column of at least :data:`MIN_DISTINCT` candidates of which at least
    :data:`CHECK_SHARE` pass (a random 9-digit number passes 1 time in 11)."""
    return _by_checksum(values, _BSN_RX, bsn_valid)
