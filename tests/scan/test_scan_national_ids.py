"""National identifiers by content: UK NINO, Kenyan KRA PIN, Canadian SIN, Dutch BSN.

Negative columns are generated with fixed seeds and have the same length and alphabet as the
identifiers, so the tests can fail if a detector flags ordinary codes or numbers.  The chance
that such a column passes is computed in the tests (binomial tails), not asserted from outputs.
"""

from __future__ import annotations

import json
import math
import string
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom

from veil.cli.main import main
from veil.deid import scan
from veil.deid._detectors import detect_embedded
from veil.deid._national_ids import (
    CHECK_SHARE,
    MIN_DISTINCT,
    detect_bsn,
    detect_kra_pin,
    detect_nino,
    detect_sin,
)
from veil.deid._scan import MATCH_THRESHOLD
from veil.deid._text import ARROW_FROM

LETTERS = np.array(list(string.ascii_uppercase))
_FIRST = [c for c in string.ascii_uppercase if c not in "DFIQUV"]
_SECOND = [c for c in string.ascii_uppercase if c not in "DFIQUVO"]
_BAD = {"BG", "GB", "KN", "NK", "NT", "TN", "ZZ"}
NINO_PREFIXES = [a + b for a in _FIRST for b in _SECOND if a + b not in _BAD]


def _nino(rng: np.random.Generator, spaced: bool) -> str:
    p = NINO_PREFIXES[rng.integers(len(NINO_PREFIXES))]
    d = f"{rng.integers(0, 10**6):06d}"
    s = "ABCD"[rng.integers(4)]
    return f"{p} {d[:2]} {d[2:4]} {d[4:]} {s}" if spaced else f"{p}{d}{s}"


def _kra(rng: np.random.Generator) -> str:
    return f"{'AP'[rng.integers(2)]}{rng.integers(0, 10**9):09d}{LETTERS[rng.integers(26)]}"


def _luhn_digit(body: str) -> int:
    total = 0
    for i, c in enumerate(reversed(body)):  # the check digit will sit right of ``body``
        d = int(c) * (2 if i % 2 == 0 else 1)
        total += d - 9 if d > 9 else d
    return (10 - total % 10) % 10


def _sin(rng: np.random.Generator, sep: str = "-") -> str:
    body = str(rng.choice([1, 2, 3, 4, 5, 6, 7, 9])) + f"{rng.integers(0, 10**7):07d}"
    d = body + str(_luhn_digit(body))
    return f"{d[:3]}{sep}{d[3:6]}{sep}{d[6:]}"


def _bsn(rng: np.random.Generator) -> str:
    while True:
        body = f"{rng.integers(0, 10**8):08d}"
        check = sum(w * int(c) for w, c in zip(range(9, 1, -1), body)) % 11
        if check < 10 and body != "0" * 8:
            return body + str(check)


def _tail(n: int, p: float, share: float) -> float:
    """P(X >= share * n) for X ~ Bin(n, p): the chance a random column reaches ``share``."""
    return float(binom.sf(math.ceil(share * n - 1e-9) - 1, n, p))


# -- single values -------------------------------------------------------------------------


def test_nino_structure() -> None:
    good = ["AB123456C", "AB 12 34 56 C", "ce123456a", "ZY000000D", "OA123456B"]
    # grouped otherwise: still a valid prefix, six digits and a suffix, so still a NINO
    good += ["AB 1234 56 C", "AB-123456-C", "ab 123456 c", "AB12 34 56C"]
    bad = [
        "QQ123456C",  # Q never a first letter (HMRC's QQ 12 34 56 C is the specimen)
        "DA123456A",  # D F I Q U V never first
        "AO123456A",  # O never second
        "AV123456A",  # D F I Q U V never second
        "GB123456A",  # administrative prefixes BG GB KN NK NT TN ZZ
        "NT123456A",
        "ZZ123456A",
        "AB123456E",  # suffix A-D only
        "AB12345C",  # six digits
        "AB1234567C",
        "AB 12 34 56 E",  # suffix A-D also when grouped
        "AB/12/34/56/C",  # spaces or hyphens only
        "AB   123456 C",  # at most two separators between groups
    ]
    got = detect_nino(np.array(good + bad, dtype=object))
    assert got[: len(good)].all(), [v for v, g in zip(good, got) if not g]
    assert not got[len(good) :].any(), [v for v, g in zip(bad, got[len(good) :]) if g]


def test_kra_pin_structure() -> None:
    good = ["A012345678Z", "P051234567K", "a123456789b"]
    bad = ["B012345678Z", "A01234567Z", "A0123456789Z", "A012345678", "AA12345678Z"]
    got = detect_kra_pin(np.array(good + bad, dtype=object))
    assert got.tolist() == [True] * len(good) + [False] * len(bad)


# -- columns -------------------------------------------------------------------------------


def test_national_id_columns_found_by_content() -> None:
    rng = np.random.default_rng(10)
    n = 400
    bsn = [_bsn(rng) for _ in range(n)]
    df = pd.DataFrame(
        {
            "col_1": [_nino(rng, spaced=i % 2 == 0) for i in range(n)],
            "col_2": [_kra(rng) for _ in range(n)],
            "col_3": [_sin(rng, "-") for _ in range(n)],
            "col_4": [_sin(rng, " ") for _ in range(n)],
            "col_5": bsn,
            "col_6": np.array(bsn, dtype=np.int64),  # read as integers: leading zeros lost
            "col_7": [f"{b[:4]}.{b[4:6]}.{b[6:]}" for b in bsn],
        }
    )
    assert (df["col_6"] < 10**8).any()  # some BSNs start with 0
    r = scan(df)
    expected = {
        "col_1": ("uk_nino", "UK National Insurance numbers"),
        "col_2": ("kra_pin", "Kenyan KRA PINs"),
        "col_3": ("ca_sin", "Canadian social insurance numbers"),
        "col_4": ("ca_sin", "Canadian social insurance numbers"),
        "col_5": ("nl_bsn", "Dutch citizen service numbers"),
        "col_6": ("nl_bsn", "Dutch citizen service numbers"),
        "col_7": ("nl_bsn", "Dutch citizen service numbers"),
    }
    for c, (kind, words) in expected.items():
        f = r[c]
        assert (f.role.value, f.kind) == ("identifier", kind), (c, f.reason)
        assert f.reason.startswith("100% of values look like") and words in f.reason, f.reason
        assert r.to_policy()["columns"][c]["operator"] == "drop"


def test_a_few_typos_keep_a_checksum_column_and_many_do_not() -> None:
    rng = np.random.default_rng(11)
    n = 200

    def corrupt(v: str) -> str:  # change the last digit: the check then fails
        return v[:-1] + str((int(v[-1]) + 1 + int(rng.integers(9))) % 10)

    sins = [_sin(rng) for _ in range(n)]
    few = [corrupt(v) if i % 12 == 0 else v for i, v in enumerate(sins)]  # 8% fail
    many = [corrupt(v) if i % 5 == 0 else v for i, v in enumerate(sins)]  # 20% fail
    r = scan(pd.DataFrame({"col_1": few, "col_2": many}))
    assert r["col_1"].kind == "ca_sin", r["col_1"].reason
    assert r["col_2"].kind != "ca_sin", r["col_2"].reason  # a 3-3-3 phone column now
    assert r["col_2"].role.value == "identifier"


def test_random_numbers_and_codes_of_the_same_shape_are_not_national_ids() -> None:
    """Columns of random values with the identifiers' length and alphabet.

    Chance rates (a random value passing): Luhn 1/10, 11-proof 1/11 (a check digit mod 11);
    NINO on ``[A-Z]{2}\\d{6}[A-Z]``: 373 of 676 prefixes times 4 of 26 suffixes = 8.5%; KRA PIN
    on ``[A-Z]\\d{9}[A-Z]``: 2 of 26 first letters = 7.7%.  The checksum detectors need
    ``CHECK_SHARE`` = 90% of >= ``MIN_DISTINCT`` = 10 distinct values to pass and the shape
    detectors ``MATCH_THRESHOLD`` = 60% of the values; the binomial tails are computed below.
    """
    worst_checksum = max(_tail(n, 0.1, CHECK_SHARE) for n in range(MIN_DISTINCT, 2000))
    assert worst_checksum < 1e-8  # at n = 10: 10 * 0.1**9 * 0.9 + 0.1**10 = 9.1e-9
    nino_rate = len(NINO_PREFIXES) / 26**2 * 4 / 26
    assert abs(nino_rate - 0.085) < 0.001
    assert _tail(20, nino_rate, MATCH_THRESHOLD) < 1e-8
    assert _tail(20, 2 / 26, MATCH_THRESHOLD) < 1e-8

    rng = np.random.default_rng(12)
    n = 500
    nine = rng.integers(10**8, 10**9, n)
    df = pd.DataFrame(
        {
            "col_1": nine,  # integers
            "col_2": nine.astype(str),
            "col_3": [f"{v // 10**6}-{v // 1000 % 1000:03d}-{v % 1000:03d}" for v in nine],
            "col_4": [f"{v // 10**6} {v // 1000 % 1000:03d} {v % 1000:03d}" for v in nine],
            "col_5": [
                "".join(LETTERS[rng.integers(26, size=2)])
                + f"{rng.integers(0, 10**6):06d}"
                + LETTERS[rng.integers(26)]
                for _ in range(n)
            ],
            "col_6": [
                LETTERS[rng.integers(26)]
                + f"{rng.integers(0, 10**9):09d}"
                + LETTERS[rng.integers(26)]
                for _ in range(n)
            ],
            # Kenyan national ID numbers: bare 7-8 digit integers, not told by content
            "col_7": rng.integers(10**6, 10**8, n),
        }
    )
    national = {"uk_nino", "kra_pin", "ca_sin", "nl_bsn", "national_id"}
    r = scan(df)
    for c in df.columns:
        assert r[c].kind not in national, (c, r[c].kind, r[c].reason)
    # and many short columns of random 9-digit numbers (each passes with p <= 9.1e-9)
    for i in range(300):
        v = np.array([str(x) for x in rng.integers(10**8, 10**9, MIN_DISTINCT)], dtype=object)
        spaced = np.array([f"{x[:3]}-{x[3:6]}-{x[6:]}" for x in v], dtype=object)
        assert not detect_bsn(v).any() and not detect_sin(spaced).any(), i


def test_many_distinct_values_take_the_vectorized_path() -> None:
    # >= ARROW_FROM distinct values run through pandas' Arrow engine, which lacks look-aheads:
    # the excluded NINO prefixes must still be excluded there
    rng = np.random.default_rng(16)
    n = ARROW_FROM + 500
    ninos = [_nino(rng, spaced=i % 3 == 0) for i in range(n)]
    bad = [f"{p}{i:06d}A" for p in sorted(_BAD) for i in range(60)]
    got = detect_nino(np.array(ninos + bad, dtype=object))
    assert got[:n].all() and not got[n:].any()
    kras = [_kra(rng).lower() for _ in range(n)]
    assert detect_kra_pin(np.array(kras + bad, dtype=object)).tolist() == [True] * n + [
        False
    ] * len(bad)
    sins = [_sin(rng) for _ in range(n)]
    assert detect_sin(np.array(sins, dtype=object)).all()
    nine = np.array([str(x) for x in rng.integers(10**8, 10**9, n)], dtype=object)
    assert not detect_bsn(nine).any()


def test_too_few_values_are_not_taken_for_checksum_ids() -> None:
    rng = np.random.default_rng(13)
    few = np.array([_bsn(rng) for _ in range(MIN_DISTINCT - 1)], dtype=object)
    assert not detect_bsn(few).any()
    assert detect_bsn(np.append(few, _bsn(rng))).all()


@pytest.mark.parametrize(
    "header",
    ["national_id", "NationalID", "id_number", "kra_pin", "nino", "ni_number", "sin", "bsn"],
)
def test_headers_name_national_identifiers(header: str) -> None:
    # Kenyan national ID numbers are bare 7-8 digit integers: only the header can tell
    rng = np.random.default_rng(14)
    ids = rng.integers(10**6, 10**8, 300)
    f = scan(pd.DataFrame({header: ids}))[header]
    assert f.role.value == "identifier" and f.kind in ("national_id", "ssn"), (header, f.reason)
    assert "header mentions" in f.reason


# -- free text -----------------------------------------------------------------------------

IN_TEXT = [
    "NI number AB123456C on file",
    "nino: CE 12 34 56 A, verified",
    "KRA PIN A012345678Z submitted",
    "supplier P051234567K (company)",
]
NOT_IN_TEXT = [
    "order SKU123456C shipped",  # three letters: not a NINO standing alone
    "ref GB123456A closed",  # administrative prefix
    "part QQ123456C",  # specimen prefix
    "code AB1234567C",  # seven digits
    "item A0123456789Z",  # ten digits: not a KRA PIN
    "batch XA012345678Z",  # glued to a letter
    "serial AB123456C-2",  # part of a longer code
    "paid KES 12345 for 3 items",
]


def test_national_ids_in_free_text() -> None:
    got = detect_embedded(np.array(IN_TEXT + NOT_IN_TEXT, dtype=object))
    hit = got["uk_nino"] | got["kra_pin"]
    n = len(IN_TEXT)
    assert hit[:n].all(), [v for v, g in zip(IN_TEXT, hit[:n]) if not g]
    assert not hit[n:].any(), [v for v, g in zip(NOT_IN_TEXT, hit[n:]) if g]
    notes = [f"visit {i} ok, paid KES {100 + i}" for i in range(300)]
    notes[42] = IN_TEXT[0]
    f = scan(pd.DataFrame({"notes": notes}))["notes"]
    assert (f.role.value, f.kind) == ("identifier", "free_text")
    assert "1 of 300" in f.reason and "National Insurance" in f.reason


def test_scan_policy_out_then_anonymize_releases_no_national_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = np.random.default_rng(15)
    n = 600
    df = pd.DataFrame(
        {
            "col_1": [_nino(rng, spaced=False) for _ in range(n)],
            "col_2": [_kra(rng) for _ in range(n)],
            "col_3": [_sin(rng) for _ in range(n)],
            "col_4": [_bsn(rng) for _ in range(n)],
            "age": rng.integers(20, 80, n),
            "gender": rng.choice(["male", "female"], n),
            "notes": [f"visit {i} ok" for i in range(n)],
        }
    )
    df.loc[9, "notes"] = "KRA PIN A098765432Q given at the desk"
    src = tmp_path / "people.csv"
    df.to_csv(src, index=False)
    draft, out = tmp_path / "p.yaml", tmp_path / "o"
    assert main(["scan", str(src), "--policy-out", str(draft)]) == 0
    rc = main(["anonymize", str(src), "--policy", str(draft), "--out", str(out)])
    assert rc == 0, capsys.readouterr().err
    text = (out / "people.csv").read_text()
    for c in ("col_1", "col_2", "col_3", "col_4"):
        assert not any(str(v) in text for v in df[c]), c
    assert "A098765432Q" not in text
    lines = np.array(text.splitlines(), dtype=object)
    assert not detect_nino(lines).any() and not detect_kra_pin(lines).any()
    emb = detect_embedded(lines)
    assert not emb["uk_nino"].any() and not emb["kra_pin"].any()
    report = json.loads((out / "report.json").read_text())
    assert report["targets"]["all_met"]
