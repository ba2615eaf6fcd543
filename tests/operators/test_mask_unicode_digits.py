"""Phone masking masks every decimal digit, not only ASCII ``0``-``9``.

A phone number written in full-width digits (common in Japanese data) or Arabic-Indic digits
was released exactly as written by ``kind: phone``: nothing of it is an ASCII digit.
"""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.deid.operators import OperatorContext, get_operator
from veil.deid.operators._mask import mask_phone
from veil.deid.operators._vecmask import phone_matrix, vectorized

NUMBERS = [
    "０９０－１２３４－５６７８",  # full-width
    "+254 ٧١٢-٣٤٥-٦٧٨",  # Arabic-Indic
    "۰۷۱۲ ۳۴۵ ۶۷۸",  # Extended Arabic-Indic (Persian)
    "०७१२-३४५-६७८",  # Devanagari
]


@pytest.mark.parametrize("number", NUMBERS)
def test_non_ascii_digits_are_masked(number: str) -> None:
    df = pd.DataFrame({"phone": [number, "+254 712-345-678"]})
    out = get_operator("mask", {"kind": "phone"}).apply(df, "phone", OperatorContext())
    got = out["phone"][0]
    assert len(got) == len(number)
    digits = [ch for ch in number if ch.isdecimal()]
    kept = [ch for ch in got if ch.isdecimal()]
    country = 3 if number.startswith("+254") else 0
    assert len(kept) == 2 + country  # the last two digits (and a country code) only
    assert got.count("*") == len(digits) - len(kept)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.text(alphabet="0123456789０１２９٠١٩۰۹०९+-() ", max_size=20), min_size=1, max_size=20
    ),
    st.integers(0, 4),
    st.booleans(),
)
def test_vectorized_phone_mask_matches_scalar_on_unicode_digits(
    values: list[str], keep: int, cc: bool
) -> None:
    def one(t: str) -> str:
        return mask_phone(t, keep, "#", cc)

    got = vectorized(values, lambda m, n: phone_matrix(m, n, keep, ord("#"), cc), one)
    assert list(got) == [one(v) for v in values]
    for g in got:
        assert sum(ch.isdecimal() for ch in g) <= keep + (5 if cc else 0)  # "00" + code
