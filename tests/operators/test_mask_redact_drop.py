"""drop, redact and mask."""

from __future__ import annotations

import pandas as pd
import pytest
from _helpers import ctx, people

from veil.deid.operators import get_operator
from veil.deid.operators._mask import mask_email, mask_partial, mask_phone
from veil.errors import ConfigError


def test_drop_removes_only_that_column() -> None:
    df = people()
    out = get_operator("drop").apply(df, "email", ctx())
    assert list(out.columns) == [c for c in df.columns if c != "email"]
    assert out.index.equals(df.index)


def test_redact_constant_and_missing() -> None:
    out = get_operator("redact", {"value": "XX"}).apply(people(), "email", ctx())["email"]
    assert out.iloc[:4].tolist() == ["XX"] * 4 and pd.isna(out.iloc[4])
    out = get_operator("redact", {"value": "XX", "keep_missing": False}).apply(
        people(), "email", ctx()
    )
    assert out["email"].tolist() == ["XX"] * 5


def test_mask_full_keeps_length_or_fixed_length() -> None:
    out = get_operator("mask").apply(people(), "id", ctx())["id"]
    assert out.iloc[:4].tolist() == ["**"] * 4 and pd.isna(out.iloc[4])
    out = get_operator("mask", {"length": 8, "char": "#"}).apply(people(), "email", ctx())["email"]
    assert set(out.dropna()) == {"########"}


def test_mask_partial() -> None:
    assert mask_partial("4111111111111111", 4, 4, "*") == "4111********1111"
    assert mask_partial("abcd", 2, 2, "*") == "****"  # too short: nothing shown
    out = get_operator("mask", {"keep_first": 1, "keep_last": 1}).apply(people(), "zip", ctx())
    assert out["zip"].tolist() == ["0***9", "0***2", "1***1", "0***9", "9***0"]


def test_mask_email_and_phone() -> None:
    assert mask_email("john@example.com", 1, "*") == "j***@e******.com"
    assert mask_email("not-an-email", 1, "*") == "************"
    assert mask_email("ab@cd.org", 1, "*", keep_tld=False) == "a*@c*.o**"
    assert mask_phone("+254 712-345-678", 2, "*") == "+254 ***-***-*78"
    assert mask_phone("+254 712-345-678", 0, "*", keep_country_code=False) == "+*** ***-***-***"
    assert mask_phone("0712345678", 3, "x") == "xxxxxxx678"
    out = get_operator("mask", {"kind": "email"}).apply(people(), "email", ctx())["email"]
    assert out.iloc[0] == "j*********@e******.com"
    out = get_operator("mask", {"kind": "phone", "keep_last": 3}).apply(people(), "phone", ctx())
    assert out["phone"].iloc[1] == "(***) *** *567"


def test_mask_numbers_as_text() -> None:
    df = pd.DataFrame({"card": [4111111111111111, 5500000000000004]})
    out = get_operator("mask", {"keep_last": 4}).apply(df, "card", ctx())
    assert out["card"].tolist() == ["************1111", "************0004"]


@pytest.mark.parametrize(
    "params",
    [
        {"kind": "bogus"},
        {"char": "**"},
        {"kind": "full", "keep_last": 2},
        {"kind": "partial", "length": 3},
        {"keep_last": -1},
    ],
)
def test_mask_bad_params(params: dict) -> None:
    with pytest.raises(ConfigError):
        get_operator("mask", params)


def test_redact_bad_value() -> None:
    with pytest.raises(ConfigError):
        get_operator("redact", {"value": ["x"]})
