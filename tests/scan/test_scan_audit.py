"""Regressions from the scan audit: sparse identifier columns padded with blank/placeholder
text, and number shapes (ZIP+4 codes, decimal amounts) that are not phone numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.deid import apply, scan
from veil.deid._detectors import detect_phone


@pytest.mark.parametrize("fill", ["", " ", "-", "N/A", "none", "NULL"])
def test_sparse_email_column_padded_with_placeholders_is_found(fill: str) -> None:
    # 5% e-mail addresses, 95% blank or placeholder text (a table built in memory, or a CSV whose
    # placeholder is not a missing marker): still a column of e-mail addresses
    n = 400
    col = [f"user{i}@example.org" if i % 20 == 0 else fill for i in range(n)]
    phones = [f"+254 7{i % 100:02d} 123 456" if i % 20 == 0 else fill for i in range(n)]
    df = pd.DataFrame({"contact": col, "other": phones, "age": np.arange(n) % 60 + 20})
    r = scan(df)
    assert (r["contact"].role.value, r["contact"].kind) == ("identifier", "email")
    assert (r["other"].role.value, r["other"].kind) == ("identifier", "phone")
    release, _ = apply(df, r.to_policy(k=2))
    originals = {v for v in col if v != fill}
    assert "contact" not in release.columns or not originals & set(release["contact"].astype(str))


def test_placeholder_only_column_is_not_an_identifier() -> None:
    df = pd.DataFrame({"x": ["N/A", "", "-"] * 20})
    assert scan(df)["x"].role.value == "insensitive"


def test_zip_plus_four_and_decimal_text_are_not_phones() -> None:
    rng = np.random.default_rng(0)
    zips = [f"{rng.integers(10000, 99999)}-{rng.integers(0, 9999):04d}" for _ in range(200)]
    amounts = [f"{rng.integers(1000, 99999)}.{rng.integers(0, 99):02d}" for _ in range(200)]
    euro = [f"{rng.integers(1000, 99999)},{rng.integers(0, 99):02d}" for _ in range(200)]
    for values in (zips, amounts, euro):
        assert not detect_phone(np.array(values, dtype=object)).any(), values[:3]
    phones = ["555.123.4567", "(555) 123-4567", "+254 712 345 678", "0712-345678"]
    assert detect_phone(np.array(phones, dtype=object)).all()
    r = scan(pd.DataFrame({"zip": zips, "c1": zips, "amount": amounts}))
    assert (r["zip"].role.value, r["zip"].kind) == ("quasi", "postcode")
    assert (r["c1"].role.value, r["c1"].kind) == ("quasi", "postcode")
    assert r["amount"].kind != "phone"
