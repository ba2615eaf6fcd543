"""Phone masking masks every character a reader takes for a digit, not only decimal digits.

``kind: phone`` masked Unicode decimal digits (category Nd) only, so a number written in
circled (``①②③``), superscript (``¹²³``), parenthesized (``⑴``), dingbat (``❶``) or CJK
(``一二三``) digits was released exactly as written.  Every character with a Unicode numeric
value (``str.isnumeric``, ``unicodedata.numeric``) is a digit of the phone now.
"""

from __future__ import annotations

import sys
import unicodedata

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.deid.operators import OperatorContext, get_operator
from veil.deid.operators._mask import mask_phone
from veil.deid.operators._vecmask import phone_matrix, vectorized

NUMBERS = [
    "①②③-④⑤⑥-⑦⑧⑨⓪",  # circled
    "⁰⁷¹² ³⁴⁵ ⁶⁷⁸",  # superscript
    "₀₇₁₂ ₃₄₅ ₆₇₈",  # subscript
    "⑴⑵⑶-⑷⑸⑹-⑺⑻⑼",  # parenthesized
    "❶❷❸ ❹❺❻ ❼❽❾",  # dingbat negative circled
    "一三八 一二三四 五六七八",  # CJK numerals
    "+²⁵⁴ ⁷¹²-³⁴⁵-⁶⁷⁸",  # superscript with a country code
]

#: Every code point with a Unicode numeric value (digits, numbers, numerals, fractions).
NUMERIC = "".join(c for c in map(chr, range(sys.maxunicode + 1)) if c.isnumeric())


def _digits(text: str) -> list[str]:
    return [ch for ch in text if unicodedata.numeric(ch, None) is not None]


@pytest.mark.parametrize("number", NUMBERS)
@pytest.mark.parametrize("keep_last", [0, 2])
def test_numeric_characters_are_masked(number: str, keep_last: int) -> None:
    df = pd.DataFrame({"phone": [number, "+254 712-345-678"] * 3})
    op = get_operator("mask", {"kind": "phone", "keep_last": keep_last})
    got = op.apply(df, "phone", OperatorContext())["phone"][0]
    assert len(got) == len(number)
    country = number[1:4] if number.startswith("+") else ""
    kept = _digits(got)
    assert kept == _digits(country) + (_digits(number)[-keep_last:] if keep_last else [])
    assert got.count("*") == len(_digits(number)) - len(kept)
    # the separators are kept as they were
    assert [a for a, b in zip(number, got, strict=True) if a != b] == _digits(number)[
        len(_digits(country)) : len(_digits(number)) - keep_last
    ]


def test_no_numeric_character_survives_a_full_phone_mask() -> None:
    """keep_last 0 without a country code: nothing that reads as a digit is left."""
    chunks = [NUMERIC[i : i + 40] for i in range(0, len(NUMERIC), 40)]
    scalar = [mask_phone(t, 0, "#", False) for t in chunks]
    vec = vectorized(chunks, lambda m, n: phone_matrix(m, n, 0, ord("#"), False), lambda t: "")
    for text, a, b in zip(chunks, scalar, vec, strict=True):
        assert a == b == "#" * len(text)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.text(alphabet="0123456789０٩①⑩⓪¹²₃⑴❶一十½Ⅻ+-() ", max_size=20), min_size=1, max_size=20
    ),
    st.integers(0, 4),
    st.booleans(),
)
def test_vectorized_phone_mask_matches_scalar_on_numeric_characters(
    values: list[str], keep: int, cc: bool
) -> None:
    def one(t: str) -> str:
        return mask_phone(t, keep, "#", cc)

    got = vectorized(values, lambda m, n: phone_matrix(m, n, keep, ord("#"), cc), one)
    assert list(got) == [one(v) for v in values]
    for g in got:
        assert len(_digits(g)) <= keep + (5 if cc else 0)  # "00" + a code of 3
