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
