"""Labelled roles for the bundled datasets and a synthetic PII table."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd

ADULT_NAMES = [
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
    "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week",
    "native-country", "income",
]  # fmt: skip

ADULT_ROLES = {
    "age": "quasi", "workclass": "quasi", "fnlwgt": "insensitive", "education": "quasi",
    "education-num": "quasi", "marital-status": "quasi", "occupation": "quasi",
    "relationship": "insensitive", "race": "quasi", "sex": "quasi",
    "capital-gain": "insensitive", "capital-loss": "insensitive",
    "hours-per-week": "insensitive", "native-country": "quasi", "income": "sensitive",
}  # fmt: skip

INSURANCE_ROLES = {
    "id": "identifier", "County": "quasi", "Gender": "quasi", "Marital_status": "quasi",
    "No_of_dependents": "quasi", "Age": "quasi", "Tier": "insensitive",
    "Policy_limit": "insensitive", "Illness_category": "sensitive", "Date_of_entry": "quasi",
    "Updated_subscription": "insensitive", "Account_withdrawal": "insensitive",
    "Retention": "insensitive",
}  # fmt: skip


@lru_cache(maxsize=2)
def synthetic_pii(
    n: int = 400, seed: int = 7
) -> tuple[pd.DataFrame, dict[str, str], dict[str, str]]:
    """A table of generated PII under neutral headers: (frame, roles, kinds)."""
    from faker import Faker

    fake = Faker("en_US")
    fake.seed_instance(seed)
    rng = np.random.default_rng(seed)
    gb = Faker("en_GB")
    gb.seed_instance(seed)
    data: dict[str, list[object]] = {
        "c_email": [fake.email() for _ in range(n)],
        "contact": [fake.phone_number() for _ in range(n)],
        "mobile_no": [gb.phone_number() for _ in range(n)],
        "pan_field": [fake.credit_card_number() for _ in range(n)],
        "acct": [fake.iban() for _ in range(n)],
        "f1": [fake.ssn() for _ in range(n)],
        "host": [fake.ipv4() if i % 2 else fake.ipv6() for i in range(n)],
        "link": [fake.url() for _ in range(n)],
        "who": [fake.name() for _ in range(n)],
        "given": [fake.first_name() for _ in range(n)],
        "ref": [f"REF-{i:06d}" for i in rng.permutation(n)],
        # quasi-identifiers and sensitive columns, by header
        "zip": [fake.zipcode() for _ in range(n)],
        "birth_date": pd.to_datetime(
            [fake.date_of_birth(minimum_age=18, maximum_age=90) for _ in range(n)]
        ),
        "gender": rng.choice(["F", "M"], n).tolist(),
        "city": [fake.city() for _ in range(n)],
        "ethnicity": rng.choice(["A", "B", "C", "D"], n).tolist(),
        "job": [fake.job() for _ in range(n)],
        "diagnosis": rng.choice(["J45", "E11", "I10", "F32"], n).tolist(),
        "salary": rng.normal(50_000, 12_000, n).round(2).tolist(),
        "religion": rng.choice(["r1", "r2", "r3"], n).tolist(),
        # decoys: insensitive
        "visits": rng.integers(0, 12, n).tolist(),
        "score": rng.normal(0, 1, n).tolist(),
        "big_number": rng.integers(10_000_000, 10_000_050, n).astype(str).tolist(),
        "big_code": [
            str(4_000_000_000_000_000 + 10 * int(i) + 1) for i in rng.integers(0, n // 5, n)
        ],
        "status": rng.choice(["open", "closed", "pending"], n).tolist(),
        "comment": [fake.sentence() for _ in range(n)],
        "colour": rng.choice(["White", "Black", "Green"], n).tolist(),
    }
    kinds = {
        "c_email": "email", "contact": "phone", "mobile_no": "phone", "pan_field": "payment_card",
        "acct": "iban", "f1": "ssn", "host": "ip_address", "link": "url", "who": "person_name",
        "given": "person_name", "ref": "record_id",
    }  # fmt: skip
    roles = {c: "identifier" for c in kinds}
    roles.update({c: "quasi" for c in ("zip", "birth_date", "gender", "city", "ethnicity", "job")})
    roles.update({c: "sensitive" for c in ("diagnosis", "salary", "religion")})
    roles.update(
        {
            c: "insensitive"
            for c in ("visits", "score", "big_number", "big_code", "status", "comment", "colour")
        }
    )
    return pd.DataFrame(data), roles, kinds


#: Locales whose Faker ``city()`` draws real or town-shaped names (fr_FR and pt_BR use surnames).
CITY_LOCALES = ("en_US", "en_GB", "de_DE", "it_IT", "nl_NL", "en_CA", "pl_PL", "en_IN")
#: Faker method giving the region-level unit (state, county, province, department) per locale.
REGION_METHOD = {
    "en_US": "state", "en_GB": "county", "de_DE": "state", "fr_FR": "region", "es_ES": "state",
    "it_IT": "state", "nl_NL": "province", "en_CA": "province", "pl_PL": "region",
    "en_IN": "state",
}  # fmt: skip
#: Locales with a postcode shape the scan knows (en_IN's 6-digit PIN codes are not among them).
POSTCODE_LOCALES = ("en_US", "en_GB", "de_DE", "fr_FR", "es_ES", "it_IT", "nl_NL", "en_CA", "pl_PL")


@lru_cache(maxsize=1)
def location_frames(n: int = 200, seed: int = 11) -> tuple[pd.DataFrame, dict[str, str]]:
    """Faker locations of ten locales plus decoys, under meaningless headers ``col_1..``.

    Returns the frame and the true kind of every column (``postcode``, ``location``,
    ``address`` or ``other`` for decoys that must stay unclassified as locations).
    """
    from faker import Faker

    rng = np.random.default_rng(seed)
    cols: list[tuple[str, list[object]]] = []
    for loc in REGION_METHOD:
        f = Faker(loc)
        f.seed_instance(seed)
        if loc in POSTCODE_LOCALES:
            pool = [f.postcode() for _ in range(n // 2)]  # people share postcodes
            cols.append(("postcode", list(rng.choice(pool, n))))
        cols.append(("address", [f.street_address() for _ in range(n)]))
        cols.append(("address", [f.address() for _ in range(n)]))
        if loc in CITY_LOCALES:
            pool = [f.city() for _ in range(40)]
            cols.append(("location", list(rng.choice(pool, n))))
        cols.append(("location", [getattr(f, REGION_METHOD[loc])() for _ in range(n)]))
        cols.append(("location", [f.country() for _ in range(n)]))
    en = Faker("en_US")
    en.seed_instance(seed)
    zips = rng.choice(rng.integers(10_000, 99_999, 40), n)  # German-style ints, repeated
    cols.append(("postcode", zips.tolist()))
    decoys: list[list[object]] = [
        rng.integers(0, 100, n).tolist(),  # counts
        rng.integers(10_000, 99_999, n).tolist(),  # 5-digit amounts, near-unique
        (rng.integers(100, 999, n) * 100).tolist(),  # rounded 5-digit amounts, repeated
        rng.integers(1950, 2020, n).tolist(),  # years
        [f"{i:05d}" for i in rng.permutation(n) + 1],  # record numbers with leading zeros
        [f"SKU-{v}" for v in rng.integers(10_000, 99_999, n)],  # product codes
        [f"{a}-{b}-X" for a, b in zip(rng.choice(["AB", "CD"], n), rng.integers(1000, 9999, n))],
        [en.sentence() for _ in range(n)],  # free text
        [f"{en.random_int(1, 9)} items shipped" for _ in range(n)],  # text with numbers
        [en.name() for _ in range(n)],  # people, not places
        rng.choice(["Gold", "Silver", "Bronze"], n).tolist(),
        rng.choice(["North", "South", "East", "West"], n).tolist(),
        [en.job() for _ in range(n)],
    ]
    cols += [("other", d) for d in decoys]
    df = pd.DataFrame({f"col_{i + 1}": v for i, (_, v) in enumerate(cols)})
    return df, {f"col_{i + 1}": k for i, (k, _) in enumerate(cols)}
