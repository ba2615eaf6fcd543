"""Postcodes, place names and street addresses found by content alone (meaningless headers).

Ground truth: Faker locations of ten locales with decoys (``_ground_truth.location_frames``)
and the bundled tables with their headers replaced by ``col_1..col_n``.  Precision and recall
are asserted per kind of location.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from veil.deid import scan
from veil.deid._places import detect_address, detect_postcode, place_masks
from veil.io import read
from veil.schema import Role

from ._ground_truth import ADULT_NAMES, location_frames

KINDS = ("postcode", "location", "address")
ROLE = {"postcode": Role.QUASI, "location": Role.QUASI, "address": Role.IDENTIFIER}


def _renamed(df: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, str]]:
    names = {c: f"col_{i + 1}" for i, c in enumerate(df.columns)}
    return df.rename(columns=names), names


@pytest.fixture(scope="module")
def ds004148_tsv(datasets_dir: Path) -> Path:
    return datasets_dir / "ds004148" / "participants.tsv"


@pytest.fixture(scope="module")
def labelled(insurance_csv: Path, adult_data: Path, ds004148_tsv: Path) -> list[tuple]:
    """(findings by column, true kind by column) for every labelled table."""
    out = []
    df, truth = location_frames()
    out.append((scan(df), truth))
    ins, names = _renamed(read(insurance_csv))
    truth = {v: "location" if k == "County" else "other" for k, v in names.items()}
    out.append((scan(ins), truth))
    adult, names = _renamed(read(adult_data, names=ADULT_NAMES))
    truth = {v: "location" if k == "native-country" else "other" for k, v in names.items()}
    out.append((scan(adult), truth))
    bids, names = _renamed(read(ds004148_tsv))  # ~200 scores and counts: no locations at all
    out.append((scan(bids), dict.fromkeys(names.values(), "other")))
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_precision_recall_by_content(labelled: list[tuple], kind: str) -> None:
    tp = fp = fn = 0
    wrong = []
    for result, truth in labelled:
        for f in result.columns:
            pred, true = f.kind == kind, truth[f.column] == kind
            tp += pred and true
            fp += pred and not true
            fn += true and not pred
            if pred != true:
                wrong.append((f.column, truth[f.column], f.kind, f.reason))
            if pred:
                assert f.role is ROLE[kind] and 0.5 < f.confidence <= 0.99, f
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    assert tp >= 5 or kind != "address"
    assert precision >= 0.95, (kind, precision, wrong)
    assert recall >= 0.95, (kind, recall, wrong)


def test_every_faker_location_found_and_no_decoy(labelled: list[tuple]) -> None:
    result, truth = labelled[0]
    got = {f.column: f.kind if f.kind in KINDS else "other" for f in result.columns}
    assert got == truth
    reasons = {f.kind: f.reason for f in result.columns if f.kind in KINDS}
    assert "place names" in reasons["location"] and "postcodes" in reasons["postcode"]


def test_kenyan_counties_by_content(insurance_csv: Path) -> None:
    ins, names = _renamed(read(insurance_csv))
    f = scan(ins)[names["County"]]
    assert (f.role, f.kind) == (Role.QUASI, "location")
    assert "regions/counties/states" in f.reason


def test_header_and_content_agree() -> None:
    df = pd.DataFrame({"zip": ["02139", "02142", "10001", "94103"] * 10})
    f = scan(df)["zip"]
    assert f.kind == "postcode" and "look like postcodes" in f.reason and f.confidence > 0.9


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (["02139", "SW1A 1AA", "K1A 0B1", "1234 AB", "12345-6789", "00-950"], True),
        (["1234", "123456", "SKU-12345", "AB12CD", "A1", "2024-01-05", "12.345"], False),
    ],
)
def test_postcode_shapes(values: list[str], expected: bool) -> None:
    assert detect_postcode(np.array(values, dtype=object)).tolist() == [expected] * len(values)


def test_integer_postcodes_need_repetition_and_no_rounding() -> None:
    rng = np.random.default_rng(2)
    n = 500
    zips = rng.choice(rng.integers(10_000, 99_999, 60), n)
    amounts = rng.integers(10_000, 99_999, n)  # near-unique: not postcodes
    rounded = rng.choice(np.arange(10_000, 99_999, 500), n)  # repeated but rounded
    sequence = rng.choice(np.arange(20_000, 20_100), n)  # a dense range of codes
    r = scan(pd.DataFrame({"a": zips, "b": amounts, "c": rounded, "d": sequence}))
    assert r["a"].kind == "postcode" and r["a"].confidence < 0.6
    assert [r[c].kind for c in "bcd"].count("postcode") == 0


def test_text_sequences_are_ids_not_postcodes() -> None:
    df = pd.DataFrame({"code": [f"{i:05d}" for i in range(1, 301)]})
    assert scan(df)["code"].kind == "record_id"


def test_address_shapes() -> None:
    yes = [
        "221B Baker Street", "10 Downing St", "1600 Pennsylvania Avenue NW", "123 main st",
        "5 W 42nd Street, New York, NY 10036", "083 Crosby Plaza Apt. 533\nFarleytown, MT 73436",
        "Hauptstraße 5", "Goethe-Straße 7", "Bahnhofstr. 12a", "Kerkstraat 3",
        "12, rue de la Paix", "Calle Mayor 7", "C. de Modesta Gallego 8", "Via Roma, 10",
        "Rua Augusta 100", "ul. Długa 3", "Flat 3\nRoss Brooks", "PO Box 42",
    ]  # fmt: skip
    no = [
        "Baker Street", "42 apples", "Room 12", "visit 4 ok", "SKU-12345", "12345",
        "The meeting is at 10", "3 items shipped", "Order 42 shipped to customer",
        # numbers followed by words that are street words somewhere
        "3 items at the station", "2 keys", "10 points", "4 people in the garden",
        "2 bed apartment near park", "100 mile route", "3 way valve", "2 lights",
        # street words before a number without a street name
        "via email 3 times", "C 12", "Largo 3", "place 2 orders", "route 66", "Plaza 1",
        "String 5", "Spring 2024",
    ]  # fmt: skip
    got_yes = detect_address(np.array(yes, dtype=object))
    got_no = detect_address(np.array(no, dtype=object))
    assert got_yes.all(), [v for v, g in zip(yes, got_yes) if not g]
    assert not got_no.any(), [v for v, g in zip(no, got_no) if g]


def test_towns_named_after_people_are_places() -> None:
    from faker import Faker

    fake = Faker("en_US")
    fake.seed_instance(3)
    towns = [fake.city() for _ in range(200)]  # "Lake Jamesview", "New Melanie", ...
    people = [fake.name() for _ in range(200)]
    r = scan(pd.DataFrame({"a": towns, "b": people}))
    assert (r["a"].role, r["a"].kind) == (Role.QUASI, "location")
    assert (r["b"].role, r["b"].kind) == (Role.IDENTIFIER, "person_name")


def test_place_masks_by_vocabulary() -> None:
    m = place_masks(
        np.array(["Nairobi (County)", "Taita–Taveta", "Germany", "Zürich"], dtype=object)
    )
    assert m["region"][:2].tolist() == [True, True]
    assert m["country"][2] and not m["country"][0]


def test_draft_drops_addresses_and_coarsens_postcodes() -> None:
    from faker import Faker

    fake = Faker("en_GB")
    fake.seed_instance(5)
    df = pd.DataFrame(
        {
            "a": [fake.street_address() for _ in range(100)],
            "b": [fake.postcode() for _ in range(100)],
        }
    )
    cols = scan(df).to_policy()["columns"]
    assert cols["a"] == {"role": "identifier", "operator": "drop"}
    assert cols["b"] == {"role": "quasi", "operator": {"name": "generalize", "keep": 3}}


def test_scan_stays_fast_on_many_distinct_places() -> None:
    # the detectors look at distinct values of a sample, so a long column costs little more
    from faker import Faker

    fake = Faker("de_DE")
    fake.seed_instance(1)
    pool = [fake.street_address() for _ in range(300)]
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.choice(pool, 200_000)})
    assert scan(df, sample_rows=5_000)["a"].kind == "address"
