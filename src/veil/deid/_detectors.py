"""Content detectors for direct identifiers, vectorized over a column's distinct values.

Each detector takes a 1-D object array of distinct non-missing strings and returns a boolean
mask of the values it recognises.  Regular expressions run through pandas' vectorized string
methods; checksums (Luhn for payment cards, ISO 7064 mod-97 for IBANs, the ISBN check digits
that tell book numbers from phones) run with numpy or on the few candidates the regex leaves.
National identifiers (UK NINO, Kenyan KRA PIN, Canadian SIN, Dutch BSN) are in
:mod:`veil.deid._national_ids`.

References
----------
H. P. Luhn, "Computer for verifying numbers", US patent 2,950,048 (1960).
ISO 13616-1:2020, Financial services -- International bank account number (IBAN).
"""

from __future__ import annotations

import ipaddress
import re
import sys
import unicodedata
from collections.abc import Callable
from functools import lru_cache

import numpy as np
import pandas as pd

from veil.deid._headers import header_hint, header_tokens
from veil.deid._national_ids import (
    KRA_PIN_IN_TEXT,
    NINO_IN_TEXT,
    code_families,
    detect_bsn,
    detect_kra_pin,
    detect_nino,
    detect_sin,
)
from veil.deid._places import detect_address
from veil.deid._text import as_text, digit_matrix, luhn_valid

__all__ = [
    "DETECTORS",
    "detect_email",
    "detect_phone",
    "detect_card",
    "detect_iban",
    "detect_ssn",
    "detect_ip",
    "detect_nino",
    "detect_kra_pin",
    "detect_sin",
    "detect_bsn",
    "versions_not_ips",
    "detect_url",
    "detect_person_name",
    "detect_address",
    "detect_embedded",
    "luhn_valid",
    "iban_valid",
    "name_lexicon",
]

_EMAIL = r"[A-Za-z0-9._%+'-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,24}"
_PHONE = r"\+?\(?\d[\d\s().-]{5,22}\d(?:\s*(?:x|ext\.?|#)\s*\d{1,6})?"
_SSN = r"(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}"
_IPV4 = r"(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
_URL = r"(?:(?:https?|ftp)://|www\.)[^\s/$.?#][^\s]*"
_IBAN = r"[A-Z]{2}\d{2}[A-Z0-9]{11,30}"
_CARD = r"\d{13,19}"
_NAME_TOKENS = r"[A-Za-zÀ-ÖØ-öø-ÿ'’.-]+(?: [A-Za-zÀ-ÖØ-öø-ÿ'’.-]+){0,3}"


#: Stripped text of the values; a Series prepared by :func:`as_text` passes through, so the
#: scan converts a column's distinct values once for all detectors.
_s = as_text


def detect_email(values: np.ndarray) -> np.ndarray:
    """E-mail addresses.

    Examples
    --------
    >>> detect_email(np.array(["a.b@x.org", "nope", "a@b"], dtype=object)).tolist()
    [True, False, False]
    """
    return _s(values).str.fullmatch(_EMAIL).to_numpy(bool)


#: Digit strings that are shaped like phones but are something else: dates, SSNs, US ZIP+4
#: codes (``02139-4307``), decimals written as text (``57819.85``, ``1234,56``), IPv4
#: addresses (``192.168.100.200``; a dotted phone has a part above 255 or a leading zero) and
#: dotted version or build numbers with a one-digit part after the first (``10.0.19041.1``;
#: phones written with dots group two digits or more, ``555.123.4567``, ``1.800.555.1234``).
_NOT_A_PHONE = (
    r"\d{1,4}[-./]\d{1,2}[-./]\d{1,4}|\d{3}-\d{2}-\d{4}|\d{5}-\d{4}|\d+[.,]\d+"
    r"|\d+(?:\.\d+)*\.\d(?:\.\d+)*|" + _IPV4
)


@lru_cache(maxsize=1)
def _digit_fold() -> dict[int, str]:
    """``str.translate`` table: every character with a whole Unicode numeric value below 100
    (circled ``①``, superscript ``¹``, CJK ``一``, full-width ``１``, ``⑩``, ...) to its ASCII
    digits, and the full-width forms ``！``-``～`` (``－``, ``（``, ``＋``) to ASCII."""
    table: dict[int, str] = {cp: chr(cp - 0xFEE0) for cp in range(0xFF01, 0xFF5F)}
    for cp in range(128, sys.maxunicode + 1):
        v = unicodedata.numeric(chr(cp), None)
        if v is not None and v == int(v) and 0 <= v < 100:
            table[cp] = str(int(v))
    return table


def fold_digits(s: pd.Series) -> pd.Series:
    """``s`` with the non-ASCII values' digit-like characters written as ASCII digits.

    A reader takes ``①②③``, ``¹²³`` or ``一二三`` for the digits ``123``, and ``kind: phone``
    masks them as digits; the phone detector reads cells through this fold so that it finds
    the same numbers.

    Examples
    --------
    >>> fold_digits(pd.Series(["⓪⑦①②－³⁴⁵", "a1"], dtype=object)).tolist()
    ['0712-345', 'a1']
    """
    wide = s.str.contains(r"[^\x00-\x7f]", regex=True).to_numpy(bool)
    if not wide.any():
        return s
    out = s.astype(object).to_numpy(copy=True)
    table = _digit_fold()
    for i in np.flatnonzero(wide):
        out[i] = out[i].translate(table)
    return pd.Series(out, index=s.index, dtype=s.dtype)


def detect_phone(values: np.ndarray) -> np.ndarray:
    """Phone numbers written as text: 7 to 15 digits with a '+', a leading 0 or separators.

    Bare integers without separators are not phones (they are far more often counts or IDs);
    neither are dates, SSNs, US ZIP+4 codes (``02139-4307``) or decimal numbers written as
    text (``57819.85``, ``1234,56``).  Digit-like characters (circled ``①``, superscript
    ``¹``, CJK ``一``, full-width ``１`` and ``－``) count as the digits and separators they
    stand for (:func:`fold_digits`), as ``kind: phone`` masks them.

    Examples
    --------
    >>> detect_phone(np.array(["+254 712 345 678", "(555) 123-4567", "12345678"], dtype=object)).tolist()
    [True, True, False]
    """
    s = fold_digits(_s(values))
    shape = s.str.fullmatch(_PHONE).to_numpy(bool)
    digits = s.str.replace(r"(?:x|ext\.?|#)\s*\d{1,6}$", "", regex=True).str.count(r"\d").to_numpy()
    styled = (
        s.str.startswith("+") | s.str.startswith("0") | s.str.contains(r"[\s().-]", regex=True)
    ).to_numpy(bool)
    other = s.str.fullmatch(_NOT_A_PHONE).to_numpy(bool)
    cand = shape & (digits >= 7) & (digits <= 15) & styled & ~other
    return cand & ~_isbns(s, cand & np.isin(digits, (10, 13)))


def _isbn_check(digits: pd.Series) -> np.ndarray:
    """ISBN-10 (weights 10..1, mod 11) or ISBN-13 (978/979, weights 1,3, mod 10) check of
    digit strings, vectorized per length."""
    out = np.zeros(len(digits), dtype=bool)
    lengths = digits.str.len().to_numpy()
    arr = digits.to_numpy(object)
    for n, weights, mod in ((10, np.arange(10, 0, -1), 11), (13, np.array([1, 3] * 6 + [1]), 10)):
        sel = np.flatnonzero(lengths == n)
        if not len(sel):
            continue
        mat = digit_matrix(arr[sel].tolist(), n)
        ok = (mat @ weights) % mod == 0
        if n == 13:
            ok &= (mat[:, 0] == 9) & (mat[:, 1] == 7) & ((mat[:, 2] == 8) | (mat[:, 2] == 9))
        out[sel] = ok
    return out


#: A column of phone-shaped values is one of ISBNs when at least this share of its (at least
#: ``_ISBN_MIN``) 10- or 13-digit values pass the ISBN check, which a random digit string
#: passes 1 time in 11 (ISBN-10) or 1 in 10 (ISBN-13 also needs the 978/979 prefix).
_ISBN_SHARE = 0.9
_ISBN_MIN = 10


def _isbns(s: pd.Series, cand: np.ndarray) -> np.ndarray:
    """Phone-shaped values with 10 or 13 digits (``cand``) that are ISBNs: written with three
    hyphens or more and a valid check digit (``978-3-16-148410-0``, as in free text), or, in a
    column where nearly all of them pass the check (``_ISBN_SHARE``), every value that passes."""
    out = np.zeros(len(s), dtype=bool)
    idx = np.flatnonzero(cand)
    if not len(idx):
        return out
    sub = s.iloc[idx]
    ok = _isbn_check(sub.str.replace(r"\D", "", regex=True))
    hyphenated = sub.str.count("-").to_numpy() >= 3
    if len(idx) >= _ISBN_MIN and ok.mean() >= _ISBN_SHARE:
        out[idx] = ok
    else:
        out[idx] = ok & hyphenated
    return out


def detect_card(values: np.ndarray) -> np.ndarray:
    """Payment card numbers: 13-19 digits (spaces/dashes allowed) passing the Luhn check."""
    s = _s(values).str.replace(r"[\s-]", "", regex=True)
    cand = s.str.fullmatch(_CARD).to_numpy(bool)
    out = np.zeros(len(s), dtype=bool)
    if not cand.any():
        return out
    idx = np.flatnonzero(cand)
    strs = s.to_numpy(object)[idx]
    lengths = np.fromiter((len(x) for x in strs), dtype=np.int64, count=len(strs))
    for n in np.unique(lengths):
        sel = idx[lengths == n]
        mat = digit_matrix(s.to_numpy(object)[sel].tolist(), int(n))
        out[sel] = luhn_valid(mat)
    return out


def iban_valid(iban: str) -> bool:
    """ISO 7064 mod-97-10 check of an IBAN (spaces ignored).

    Examples
    --------
    >>> iban_valid("GB82 WEST 1234 5698 7654 32"), iban_valid("GB82 WEST 1234 5698 7654 33")
    (True, False)
    """
    s = iban.replace(" ", "").upper()
    moved = s[4:] + s[:4]
    num = "".join(str(int(c, 36)) for c in moved)
    return int(num) % 97 == 1


def detect_iban(values: np.ndarray) -> np.ndarray:
    """IBANs (country code, check digits, BBAN) with a valid mod-97 checksum."""
    s = _s(values).str.replace(" ", "", regex=False).str.upper()
    cand = s.str.fullmatch(_IBAN).to_numpy(bool)
    out = np.zeros(len(s), dtype=bool)
    arr = s.to_numpy(object)
    for i in np.flatnonzero(cand):
        out[i] = iban_valid(arr[i])
    return out


def detect_ssn(values: np.ndarray) -> np.ndarray:
    """US social security numbers AAA-GG-SSSS (excluding never-issued area/group/serial)."""
    return _s(values).str.fullmatch(_SSN).to_numpy(bool)


def _is_ipv6(v: str) -> bool:
    try:
        ipaddress.IPv6Address(v)
    except ValueError:
        return False
    return True


def detect_ip(values: np.ndarray) -> np.ndarray:
    """IPv4 and IPv6 addresses."""
    s = _s(values)
    v4 = s.str.fullmatch(_IPV4).to_numpy(bool).copy()
    cand6 = s.str.fullmatch(r"[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*").to_numpy(bool)
    arr = s.to_numpy(object)
    for i in np.flatnonzero(cand6 & ~v4):
        v4[i] = _is_ipv6(arr[i])
    return v4


#: Dotted numbers, as versions are written (``2.1``, ``2.1.0``, ``v1.4.2-rc1``,
#: ``10.0.19041.1``); those that are not IPv4 addresses are evidence of a version column.
_DOTTED = r"[vV]?\d+(?:\.\d+)+(?:[-+][0-9A-Za-z.-]+)?"
#: Header words saying a column holds versions (unless the header also names an IP address).
_VERSION_WORDS = frozenset(
    {"version", "versions", "ver", "release", "build", "firmware", "revision", "rev", "semver"}
)
#: Share of a column's values that are dotted numbers but not IPv4 addresses (2 or 3 parts,
#: a part above 255, a ``v`` or a suffix) from which IPv4-shaped values in it are versions.
VERSION_SHARE = 0.1
#: Share of a column's IPv4-shaped values whose first three parts are below 100 (as in
#: versions, 6% of random addresses) needed before they can be read as versions.
VERSION_LIKE = 0.9


def versions_not_ips(
    header: object, values: np.ndarray, weights: np.ndarray, ip: np.ndarray
) -> bool:
    """Whether the IPv4-shaped values ``ip`` of a column are version numbers instead.

    An IPv4 address always has four parts of 0-255; a version such as ``1.2.3.4`` looks the
    same, so the column decides.  Versions have small leading parts: at least
    ``VERSION_LIKE`` of the (frequency-weighted) IPv4-shaped values must have their first
    three parts below 100, which a random address does with probability (100/256)**3 = 6%.
    Then the header says version/release/build, or at least ``VERSION_SHARE`` of the values
    are dotted numbers that cannot be IPv4 addresses (``2.1.0``, ``10.0.19041.1``) and most of
    those are not truncations of the column's own addresses (``81.12.200``: damaged log
    entries).  A header naming an IP address (``build_server_ip``) or IPv6 addresses in the
    column keep the addresses whatever else the column holds, and a column of 4-part versions
    alone under a neutral header still reads as IP addresses (the safe side).

    Examples
    --------
    >>> v = np.array(["1.2.3.4", "2.1.0", "1.0.0.7"], dtype=object)
    >>> versions_not_ips("col_1", v, np.ones(3), np.array([True, False, True]))
    True
    >>> v4, w, ip = v[[0, 2]], np.ones(2), np.array([True, True])
    >>> versions_not_ips("client_ip", v4, w, ip), versions_not_ips("app_version", v4, w, ip)
    (False, True)
    >>> logs = np.array(["81.12.200.7", "81.12.200", "203.0.113.9"], dtype=object)
    >>> versions_not_ips("build_host", logs, np.ones(3), np.array([True, False, True]))
    False
    """
    hint = header_hint(header)
    if hint is not None and hint.kind == "ip_address":
        return False
    s = _s(values)
    named = bool(_VERSION_WORDS.intersection(header_tokens(header)))
    dotted = s.str.fullmatch(_DOTTED).to_numpy(bool) & ~ip
    if not named and weights[dotted].sum() < VERSION_SHARE * weights.sum():
        return False  # the usual IP column: nothing says versions
    v4 = ip & s.str.fullmatch(_IPV4).to_numpy(bool)
    if weights[ip & ~v4].sum() > 0:
        return False  # IPv6 addresses are never versions
    lead = s[v4].str.extract(r"^(\d+)\.(\d+)\.(\d+)\.").astype(np.int64).to_numpy()
    small = (lead < 100).all(axis=1)
    if weights[v4][small].sum() < VERSION_LIKE * weights[v4].sum():
        return False  # parts spread over 0-255: addresses
    if named:
        return True
    arr = s.to_numpy(object)
    prefixes = {".".join(x.split(".")[:k]) for x in arr[v4] for k in (2, 3)}
    cut = np.fromiter((x in prefixes for x in arr[dotted]), dtype=bool, count=int(dotted.sum()))
    return bool(weights[dotted][cut].sum() < 0.5 * weights[dotted].sum())


def detect_url(values: np.ndarray) -> np.ndarray:
    """Web addresses (http, https, ftp or www.)."""
    return _s(values).str.fullmatch(_URL, case=False).to_numpy(bool)


@lru_cache(maxsize=1)
def name_lexicon() -> tuple[frozenset[str], frozenset[str]]:
    """Lower-cased first names and last names from Faker's person providers (several locales)."""
    import importlib

    first: set[str] = set()
    last: set[str] = set()
    locales = ("en_US", "en_GB", "en_IN", "fr_FR", "de_DE", "es_ES", "it_IT", "pt_BR", "nl_NL")
    for loc in locales + ("sw", "pl_PL", "tr_TR", "zh_CN", "ja_JP"):
        try:
            provider = importlib.import_module(f"faker.providers.person.{loc}").Provider
        except (ImportError, AttributeError):
            continue
        for attr in ("first_names", "first_names_male", "first_names_female"):
            names = getattr(provider, attr, None)
            if names:
                first.update(n.lower() for n in names if isinstance(n, str))
        names = getattr(provider, "last_names", None)
        if names:
            last.update(n.lower() for n in names if isinstance(n, str))
    # Words that are names somewhere but mostly mean something else in tables.
    common = {"white", "black", "brown", "green", "gray", "grey", "young", "king", "sales", "will"}
    return frozenset(first - common), frozenset(last - common)


def detect_person_name(values: np.ndarray) -> np.ndarray:
    """Person names: 1-4 word tokens whose first token is a known first name or last a known
    last name (two tokens or more), or a single known first name.

    Examples
    --------
    >>> detect_person_name(np.array(["John Smith", "Machakos", "Smith, Jane"], dtype=object)).tolist()
    [True, False, True]
    """
    first, last = name_lexicon()
    s = _s(values).str.replace(",", " ", regex=False).str.replace(r"\s+", " ", regex=True)
    shape = s.str.fullmatch(_NAME_TOKENS).to_numpy(bool)
    toks = [v.lower().split(" ") for v in s]
    head = [tk[0] for tk in toks]
    tail = [tk[-1] for tk in toks]

    def known(words: list[str], lexicon: frozenset[str]) -> np.ndarray:  # no copy of the set
        return np.fromiter((w in lexicon for w in words), dtype=bool, count=len(words))

    tok_first = known(head, first)
    tok_last = known(tail, last)
    ntok = np.fromiter((len(tk) for tk in toks), dtype=np.int64, count=len(toks))
    known_first_any = tok_first | known(tail, first)
    known_last_any = tok_last | known(head, last)
    multi = (ntok >= 2) & (known_first_any | known_last_any)
    single = (ntok == 1) & tok_first
    return shape & (multi | single)


_EMBEDDED = {
    "email": r"(?<![\w.%+'-])" + _EMAIL + r"(?![\w-])",
    "url": r"(?i)\b(?:(?:https?|ftp)://|www\.)\S+",
    "ssn": r"\b" + _SSN + r"\b",
    "uk_nino": NINO_IN_TEXT,
    "kra_pin": KRA_PIN_IN_TEXT,
}


#: A phone-shaped token inside prose: an optional '+' or '(', digits with spaces, dots,
#: dashes or brackets between them, an optional extension; not glued to letters, '/', ':' or
#: another number (so times, fractions and the halves of date ranges are not candidates).
_PHONE_IN_TEXT = re.compile(
    r"(?<![\w.,/:+-])(?:\+|\()?\d[\d \t().-]{5,22}\d(?:\s*(?:x|ext\.?|#)\s*\d{1,6})?"
    r"(?![\w/:%]|[.,-]\d)"
)
#: Words just before a number that say it is a phone; with one, 7-8 digits are enough.
_PHONE_CUE = re.compile(
    r"(?i)(?:\b(?:tel|phone|mobile|mob|cell|call|fax|whatsapp|sms|text)\b|\u260e)\W{0,4}$"
)
#: Words or symbols before/after a number that make it something else (money, ISBN, ...).
_CURRENCY_SIGN = "$€£¥₹"
_CURRENCY_CODE = "usd|eur|gbp|kes|ksh|inr"
_NOT_PHONE_BEFORE = re.compile(
    rf"(?i)(?:[{_CURRENCY_SIGN}]|\b(?:isbn(?:-1[03])?|{_CURRENCY_CODE})\W{{0,3}})$"
)
_NOT_PHONE_AFTER = re.compile(rf"(?i)^\s?(?:[{_CURRENCY_SIGN}%]|(?:{_CURRENCY_CODE})\b)")
_THOUSANDS = re.compile(r"\d{1,3}(?:([ .])\d{3})(?:\1\d{3})*(?:[.,]\d{1,2})?")
_DATE_IN = re.compile(
    r"(?<!\d)(?:\d{4}[-./]\d{1,2}[-./]\d{1,2}|\d{1,2}[-./]\d{1,2}[-./]\d{2,4})(?!\d)"
)
_DECIMALS = re.compile(r"\d[.,]\d+\s+\d+[.,]\d")
_YEARS = re.compile(r"(?:1[89]|20)\d\d(?:[\s-]+(?:1[89]|20)\d\d)+")


def _isbn_valid(digits: str) -> bool:
    """ISBN-10 (weights 10..1, mod 11) or ISBN-13 (weights 1,3, mod 10) check digits."""
    if len(digits) == 10:
        return sum((10 - i) * int(c) for i, c in enumerate(digits)) % 11 == 0
    if len(digits) == 13 and digits[:3] in ("978", "979"):
        return sum((3 if i % 2 else 1) * int(c) for i, c in enumerate(digits)) % 10 == 0
    return False


def _phone_in(text: str) -> bool:
    """Whether ``text`` contains a phone number (see :func:`detect_embedded`)."""
    for m in _PHONE_IN_TEXT.finditer(text):
        tok = m.group(0).strip()
        core = re.sub(r"\s*(?:x|ext\.?|#)\s*\d{1,6}$", "", tok)
        digits = re.sub(r"\D", "", core)
        before, after = text[: m.start()], text[m.end() :]
        need = 7 if _PHONE_CUE.search(before) else 9
        if not need <= len(digits) <= 15 or re.fullmatch(_NOT_A_PHONE, core):
            continue  # detect_phone's exclusions: dates, SSNs, ZIP+4 codes, decimals
        if not core.startswith(("+", "0")) and not re.search(r"[\s().-]", core):
            continue  # a bare integer is a count, an amount or a reference number
        if _NOT_PHONE_BEFORE.search(before) or _NOT_PHONE_AFTER.search(after):
            continue  # money or a book number
        plain = not core.startswith(("+", "0", "("))
        if plain and (
            _THOUSANDS.fullmatch(core) or _YEARS.fullmatch(core) or _DECIMALS.search(core)
        ):
            continue  # 1 250 000 000, 1.234.567.890, "1999 2000 2001", "10.5 20.5 30.5"
        if _DATE_IN.search(core) or re.fullmatch(_IPV4, core):
            continue
        if core.count("-") >= 3 and _isbn_valid(digits):
            continue
        return True
    return False


def detect_embedded(values: np.ndarray) -> dict[str, np.ndarray]:
    """Free text containing e-mail addresses, URLs, SSNs, UK National Insurance numbers,
    Kenyan KRA PINs or phone numbers: kind -> mask.

    NINOs and KRA PINs count in capitals and standing alone (``AB123456C``,
    ``AB 12 34 56 C``, ``A012345678Z``; not inside a longer code such as ``XA012345678Z``),
    except as whole values of a column of codes with their layout that are mostly not valid
    NINOs or PINs (:func:`~veil.deid._national_ids.code_families`).

    Phones in prose are held to more than :func:`detect_phone` asks of a whole cell: at least
    9 digits (7 right after a cue such as ``tel``, ``call`` or ``phone``), and no money
    (``$``, ``EUR``, ``1 250 000 000``), dates, runs of years, IPv4 addresses or valid ISBNs.

    Examples
    --------
    >>> m = detect_embedded(np.array(["call me: ann@x.org", "tel. (555) 123-4567",
    ...                               "paid 1 250 000 000 in 2019"], dtype=object))
    >>> m["email"].tolist(), m["phone"].tolist()
    ([True, False, False], [False, True, False])
    """
    s = _s(values)
    out = {k: s.str.contains(rx, regex=True).to_numpy(bool) for k, rx in _EMBEDDED.items()}
    phone = np.zeros(len(s), dtype=bool)
    cand = s.str.contains(r"\d[\d \t().-]{5,}\d", regex=True).to_numpy(bool)
    arr = s.to_numpy(object)
    for i in np.flatnonzero(cand):
        phone[i] = _phone_in(arr[i])
    # a column of ISBNs (whole values, >= 90% of at least 10 passing the check digit) is not
    # one of phone numbers in prose either: the column-wise rule of detect_phone
    n_digits = s.str.count(r"\d").to_numpy()
    whole = s.str.fullmatch(r"\s*\d[\d -]*[\dX]\s*").to_numpy(bool) & np.isin(n_digits, (10, 13))
    out["phone"] = phone & ~out["ssn"] & ~_isbns(s, whole)
    for kind, family in code_families(s).items():
        out[kind] = out[kind] & ~family  # chance matches among part codes of that layout
    return out


def _address(values: np.ndarray) -> np.ndarray:
    """:func:`detect_address` (a loop over Python strings) on a plain array: iterating a
    pandas Series of Arrow strings element by element costs a quarter more."""
    if isinstance(values, pd.Series):
        values = values.to_numpy(dtype=object)
    return detect_address(values)


DETECTORS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "email": detect_email,
    "ssn": detect_ssn,
    "uk_nino": detect_nino,
    "kra_pin": detect_kra_pin,
    "ca_sin": detect_sin,
    "nl_bsn": detect_bsn,
    "iban": detect_iban,
    "payment_card": detect_card,
    "ip_address": detect_ip,
    "url": detect_url,
    "phone": detect_phone,
    "address": _address,
    "person_name": detect_person_name,
}
"""Content detectors in priority order (the first that matches a column wins ties)."""
