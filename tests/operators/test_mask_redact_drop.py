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


def test_partial_mask_that_leaves_records_unique_is_reported() -> None:
    # the attack: a card issuer (or anyone who knows a victim's card) matches released masks
    # against the originals; every record whose mask is unique in the column is re-identified
    import numpy as np

    rng = np.random.default_rng(5)
    cards = [f"4{rng.integers(10**14, 10**15)}" for _ in range(200)]
    cards += cards[:20]  # 20 people appear twice
    df = pd.DataFrame({"card": cards})
    c = ctx()
    op = get_operator("mask", {"keep_last": 4})
    released = op.apply(df, "card", c)["card"]
    masks_of = {card: mask_partial(card, 0, 4, "*") for card in set(cards)}
    counts = released.value_counts()
    linked = sum(1 for card in cards if counts[masks_of[card]] == 1)  # records singled out
    assert linked > 100
    assert op.stats()["unique_masked_records"] == linked
    assert len(c.warnings) == 1 and f"{linked} of {len(cards)} record(s)" in c.warnings[0]
    assert not any(card[-4:] in c.warnings[0] for card in cards[:50])  # counts, never values


@pytest.mark.parametrize(
    ("params", "values", "warned"),
    [
        ({"kind": "full", "length": 8}, ["Ann", "Bartholomew"], False),  # constant output
        ({"kind": "full"}, ["Ann", "Bartholomew", "Bob"], True),  # the length singles one out
        ({"keep_first": 1}, ["Ann", "Amy", "Bob", "Ben"], False),  # every mask shared
        ({"kind": "phone", "keep_last": 2}, ["0712 345 678", "0700 000 078", None], False),
        ({"kind": "email"}, ["ann@x.org", "bob@y.org"], True),
    ],
)
def test_unique_mask_warning_only_when_a_record_stands_out(
    params: dict, values: list, warned: bool
) -> None:
    c = ctx()
    get_operator("mask", params).apply(pd.DataFrame({"v": values}), "v", c)
    assert bool(c.warnings) is warned
