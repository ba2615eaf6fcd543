"""Labelled national identifiers (UK NINO, Kenyan KRA PIN, Canadian SIN, Dutch BSN) and hard
negatives, generated with a fixed seed.

The generators implement the published rules from scratch -- they import nothing from
:mod:`veil.deid` -- so the scan tests that use this table are an independent oracle:

* NINO (HMRC National Insurance Manual NIM39110): two prefix letters, six digits, a suffix
  ``A``-``D``; the first letter is never D, F, I, Q, U or V, the second never D, F, I, O, Q, U
  or V, and the prefixes BG, GB, KN, NK, NT, TN and ZZ are not allocated.  Written compact
  (``AB123456C``) or in pairs (``AB 12 34 56 C``).
* KRA PIN (Kenya Revenue Authority): ``A`` (individuals) or ``P`` (companies), nine digits,
  a check letter.  Individual PINs issued so far start ``A00``/``A01``, companies ``P05``/``P06``.
* SIN (Employment and Social Development Canada, SIN Code of Practice): nine digits, the last a
  Luhn check digit (H. P. Luhn, US patent 2,950,048, 1960); the first digit is never 0 or 8 for
  a person; written ``123-456-782`` or ``123 456 782``.
* BSN (Wet algemene bepalingen burgerservicenummer, 2007): nine digits whose weighted sum with
  weights 9, 8, ..., 2, -1 is divisible by 11 (the "elfproef").  Stored as text, or as an integer
  column that lost the leading zero.

Hard negatives share the shapes but not the rules: 9-digit order numbers (bare, integer and
3-3-3 with dashes), product codes shaped ``AB123456C`` whose prefix or suffix HMRC never issues,
11-character codes (letter, nine digits, letter, first letter not A/P, and random capitals and
digits), ISBN-10 and ISBN-13 with valid check digits, version and build strings, phone numbers
and postcodes of the three countries, and notes that quote order numbers and product codes.
"""

from __future__ import annotations

import string
from functools import lru_cache

import numpy as np
import pandas as pd

_UPPER = string.ascii_uppercase
NINO_FIRST = [c for c in _UPPER if c not in "DFIQUV"]
NINO_SECOND = [c for c in _UPPER if c not in "DFIOQUV"]
NINO_UNALLOCATED = frozenset({"BG", "GB", "KN", "NK", "NT", "TN", "ZZ"})
NINO_PREFIXES = [a + b for a in NINO_FIRST for b in NINO_SECOND if a + b not in NINO_UNALLOCATED]
#: Prefixes HMRC never issues: a forbidden letter in either place, or an unallocated pair.
BAD_PREFIXES = sorted({a + b for a in _UPPER for b in _UPPER} - set(NINO_PREFIXES))


def luhn_check_digit(body: str) -> str:
    """The Luhn digit to append to ``body``: from the right, every second digit of the full
    number (starting with the one left of the check digit) is doubled, digits of products summed.
    """
    total = 0
    for i, ch in enumerate(reversed(body)):
        d = int(ch)
        if i % 2 == 0:  # these sit at odd positions from the right once the check is appended
            d *= 2
            d = d - 9 if d > 9 else d
        total += d
    return str((10 - total % 10) % 10)


def luhn_ok(number: str) -> bool:
    """Whether a digit string passes the Luhn check."""
    return luhn_check_digit(number[:-1]) == number[-1]


def elfproef_ok(number: str) -> bool:
    """Whether 9 digits pass the BSN 11-proof (weights 9..2, -1) and are not all zero."""
    weights = (9, 8, 7, 6, 5, 4, 3, 2, -1)
    return sum(w * int(c) for w, c in zip(weights, number)) % 11 == 0 and set(number) != {"0"}


def nino(rng: np.random.Generator, spaced: bool = False) -> str:
    """A National Insurance number HMRC could issue."""
    p = NINO_PREFIXES[rng.integers(len(NINO_PREFIXES))]
    d = "".join(str(x) for x in rng.integers(0, 10, 6))
    s = "ABCD"[rng.integers(4)]
    return f"{p} {d[:2]} {d[2:4]} {d[4:]} {s}" if spaced else f"{p}{d}{s}"


def kra_pin(rng: np.random.Generator, company: bool = False) -> str:
    """A KRA PIN: ``A00``/``A01`` + 7 digits for people, ``P05``/``P06`` + 7 for companies."""
    head = ("P05", "P06")[rng.integers(2)] if company else ("A00", "A01")[rng.integers(2)]
    return head + "".join(str(x) for x in rng.integers(0, 10, 7)) + _UPPER[rng.integers(26)]


def sin(rng: np.random.Generator, sep: str = " ") -> str:
    """A social insurance number of a person (first digit 1-7 or 9), Luhn-valid, 3-3-3."""
    body = "12345679"[rng.integers(8)]
    body += "".join(str(x) for x in rng.integers(0, 10, 7))
    d = body + luhn_check_digit(body)
    return f"{d[:3]}{sep}{d[3:6]}{sep}{d[6:]}"


def bsn(rng: np.random.Generator) -> str:
    """A 9-digit BSN passing the 11-proof (drawn until the check digit is 0-9)."""
    while True:
        body = "".join(str(x) for x in rng.integers(0, 10, 8))
        check = sum(w * int(c) for w, c in zip(range(9, 1, -1), body)) % 11
        if check < 10 and body != "0" * 8:
            return body + str(check)


def isbn13(rng: np.random.Generator) -> str:
    """A hyphenated ISBN-13 (978/979 prefix) with its mod-10 check digit (weights 1, 3)."""
    body = ("978", "979")[rng.integers(2)] + "".join(str(x) for x in rng.integers(0, 10, 9))
    check = (10 - sum((1, 3)[i % 2] * int(c) for i, c in enumerate(body)) % 10) % 10
    return f"{body[:3]}-{body[3]}-{body[4:8]}-{body[8:]}-{check}"


def isbn10(rng: np.random.Generator) -> str:
    """A bare ISBN-10 (mod-11 check, weights 10..1); the check ``X`` stands for 10."""
    while True:
        body = "".join(str(x) for x in rng.integers(0, 10, 9))
        check = (11 - sum((10 - i) * int(c) for i, c in enumerate(body)) % 11) % 11
        if check < 10:  # keep them all-digit: the harder negative for 9-10 digit detectors
            return body + str(check)


def _pool(rng: np.random.Generator, make, size: int, n: int) -> list[object]:
    """``n`` draws from ``size`` generated values: codes that repeat across rows."""
    pool = [make() for _ in range(size)]
    return [pool[i] for i in rng.integers(0, size, n)]


def _with_missing(rng: np.random.Generator, values: list[object], share: float) -> list[object]:
    return [None if rng.random() < share else v for v in values]


@lru_cache(maxsize=2)
def national_id_pii(
    n: int = 400, seed: int = 2026
) -> tuple[pd.DataFrame, dict[str, str], dict[str, str]]:
    """National identifiers and hard negatives under neutral headers: (frame, roles, kinds).

    ``kinds`` gives the expected scan kind of every identifier and postcode column, and
    ``"other"`` for the decoys, which must be ``insensitive`` and never of a national-id kind.
    """
    from faker import Faker

    rng = np.random.default_rng(seed)
    fakers = {loc: Faker(loc) for loc in ("en_GB", "en_CA", "nl_NL", "en_US")}
    for i, f in enumerate(fakers.values()):
        f.seed_instance(seed + i)
    gb, ca, nl, en = (fakers[k] for k in ("en_GB", "en_CA", "nl_NL", "en_US"))

    def digits(k: int, first: str = "123456789") -> str:
        return first[rng.integers(len(first))] + "".join(str(x) for x in rng.integers(0, 10, k - 1))

    def bad_product() -> str:
        p = BAD_PREFIXES[rng.integers(len(BAD_PREFIXES))]
        return p + digits(6, string.digits) + "ABCDEFGHJKLMNPXYZ"[rng.integers(17)]

    def valid_prefix_bad_suffix() -> str:
        return (
            NINO_PREFIXES[rng.integers(len(NINO_PREFIXES))]
            + digits(6, string.digits)
            + ("EFGHKMNPRSTWXYZ"[rng.integers(15)])
        )

    def alnum11() -> str:
        chars = string.ascii_uppercase + string.digits
        return "".join(chars[i] for i in rng.integers(0, len(chars), 11))

    def parcel() -> str:  # KRA-shaped, but no KRA first letter
        return (
            "BCDEFGHJKLMNRSTWXZ"[rng.integers(18)]
            + digits(9, string.digits)
            + _UPPER[rng.integers(26)]
        )

    def version() -> str:
        major, minor, patch = rng.integers(0, 20), rng.integers(0, 40), rng.integers(0, 30)
        return f"{major}.{minor}.{patch}" + ("", "-beta", "-rc1")[rng.integers(3)]

    def build() -> str:  # Windows-style builds: 4 parts, the third above 255 (not an IPv4)
        return f"10.0.{(19041, 19044, 19045, 22000, 22621, 22631)[rng.integers(6)]}.{rng.integers(1, 4200)}"

    def ke_phone() -> str:
        d = digits(8, string.digits)
        return (f"+254 7{d[:2]} {d[2:5]} {d[5:]}", f"07{d[:2]} {d[2:5]} {d[5:]}")[rng.integers(2)]

    ninos = [nino(rng, spaced=False) for _ in range(n)]
    notes = [en.sentence(nb_words=10) for _ in range(n)]
    for i in rng.choice(n, 5, replace=False):
        notes[i] = (
            f"Caller confirmed NI number {nino(rng)} before updating the tax code.",
            f"Payroll query: employee NINO {nino(rng, spaced=True)} missing on P60.",
        )[int(i) % 2]
    orders = _pool(rng, lambda: digits(9), n // 3, n)
    products = _pool(rng, bad_product, 80, n)
    data: dict[str, list[object]] = {
        # identifiers
        "uk_ref": _with_missing(rng, ninos, 0.03),
        "uk_ref2": [nino(rng, spaced=True) for _ in range(n)],
        "ke_ref": _with_missing(rng, [kra_pin(rng, company=i % 10 == 0) for i in range(n)], 0.03),
        "ke_payer": _pool(rng, lambda: kra_pin(rng), n // 4, n),  # people paying repeatedly
        "ca_ref": [sin(rng, sep="-") for _ in range(n)],
        "ca_ref2": _with_missing(rng, [sin(rng, sep=" ") for _ in range(n)], 0.03),
        "nl_ref": [bsn(rng) for _ in range(n)],
        "nl_num": [int(bsn(rng)) for _ in range(n)],  # integers: leading zeros lost
        "contact_ke": [ke_phone() for _ in range(n)],
        "contact_ca": [ca.phone_number() for _ in range(n)],
        "contact_nl": [nl.phone_number() for _ in range(n)],
        "remarks": notes,
        # quasi-identifiers: postcodes people share
        "area_uk": _pool(rng, gb.postcode, n // 2, n),
        "area_nl": _pool(rng, nl.postcode, n // 2, n),
        "area_ca": _pool(rng, ca.postcode, n // 2, n),
        # decoys: insensitive
        "order_no": orders,
        "order_int": [int(x) for x in _pool(rng, lambda: digits(9), n // 3, n)],
        "shipment": [f"{x[:3]}-{x[3:6]}-{x[6:]}" for x in _pool(rng, lambda: digits(9), n // 3, n)],
        "product": products,
        "part": _pool(rng, valid_prefix_bad_suffix, 80, n),
        "lot": _pool(rng, alnum11, 60, n),
        "parcel_batch": _pool(rng, parcel, 60, n),
        "isbn13": _pool(rng, lambda: isbn13(rng), 60, n),
        "isbn10": _pool(rng, lambda: isbn10(rng), 60, n),
        "version": _pool(rng, version, 40, n),
        "os_build": _pool(rng, build, 40, n),
        "log": [
            f"Order {o} packed: part {p}, firmware {version()}" for o, p in zip(orders, products)
        ],
    }
    kinds = {
        "uk_ref": "uk_nino", "uk_ref2": "uk_nino", "ke_ref": "kra_pin", "ke_payer": "kra_pin",
        "ca_ref": "ca_sin", "ca_ref2": "ca_sin", "nl_ref": "nl_bsn", "nl_num": "nl_bsn",
        "contact_ke": "phone", "contact_ca": "phone", "contact_nl": "phone", "remarks": "free_text",
        "area_uk": "postcode", "area_nl": "postcode", "area_ca": "postcode",
    }  # fmt: skip
    roles = {c: "identifier" for c, k in kinds.items() if k != "postcode"}
    roles.update({c: "quasi" for c, k in kinds.items() if k == "postcode"})
    for c in data:
        if c not in kinds:
            kinds[c] = "other"
            roles[c] = "insensitive"
    return pd.DataFrame(data), roles, kinds


#: Columns the scan gets wrong at the time of writing (reported, not fixed here): the true
#: labels above stay as they are; the tests expect these to fail (strict ``xfail``) and keep
#: them out of the pooled thresholds, so a fix shows up as an unexpected pass.
KNOWN_MISSES = {
    "shipment": "9-digit numbers written 3-3-3 with dashes read as phone numbers",
}
