"""The column scan recognises phones written in digit-like characters.

``kind: phone`` masks every character with a Unicode numeric value (circled ``①``,
superscript ``¹``, CJK ``一``, ...); the scan found such a column only when its digits were
decimal digits (category Nd), so a column of ``①②③-④⑤⑥-⑦⑧⑨⓪`` was not flagged as phones and
no mask was drafted for it.  Whole cells are read with such digits folded to ASCII; phones
inside free text are still found only in decimal digits (documented in docs/scan.md).
"""

from __future__ import annotations

import unicodedata

import numpy as np
import pandas as pd
import pytest

from veil.deid import scan
from veil.deid._detectors import detect_phone

CIRCLED = "⓪①②③④⑤⑥⑦⑧⑨"
SUPER = "⁰¹²³⁴⁵⁶⁷⁸⁹"
CJK = "〇一二三四五六七八九"
FULL = "０１２３４５６７８９"


def _write(number: str, digits: str) -> str:
    return "".join(digits[int(c)] if c.isdigit() else c for c in number)


ASCII = ["+254 712 345 678", "(555) 123-4567", "0712-345678", "555.123.4567"]


@pytest.mark.parametrize("digits", [CIRCLED, SUPER, CJK, FULL])
def test_digit_like_phones_are_detected(digits: str) -> None:
    assert all(unicodedata.numeric(c) == i for i, c in enumerate(digits))
    values = np.array([_write(v, digits) for v in ASCII], dtype=object)
    assert detect_phone(np.array(ASCII, dtype=object)).all()
    assert detect_phone(values).all(), values


def test_full_width_separators_and_not_phones() -> None:
    # full-width '－' and '（）' separate groups as '-' and '()' do
    assert detect_phone(
        np.array(["０９０－１２３４－５６７８", "（５５５）１２３－４５６７"], dtype=object)
    ).all()
    # what is not a phone in ASCII digits is not one in circled digits either
    not_phones = ["2024-01-15", "123-45-6789", "02139-4307", "57819.85", "12345678"]
    assert not detect_phone(np.array([_write(v, CIRCLED) for v in not_phones], dtype=object)).any()


def test_scan_drafts_a_phone_mask_for_circled_phones() -> None:
    rng = np.random.default_rng(11)
    n = 400
    phones = [
        _write(
            f"0{rng.integers(700, 800)}-{rng.integers(100, 1000)}-{rng.integers(100, 1000)}",
            CIRCLED,
        )
        for _ in range(n)
    ]
    df = pd.DataFrame({"contact": phones, "age": np.arange(n) % 60 + 20})
    r = scan(df)
    assert (r["contact"].role.value, r["contact"].kind) == ("identifier", "phone")
