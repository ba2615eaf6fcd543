"""Header keyword rules: what a column's name says about its role.

A header is split into lower-case tokens (``"Marital_status"`` -> ``marital status``,
``"zipCode"`` -> ``zip code``).  A rule matches when one of its keywords -- a token or a
space-separated run of tokens -- appears in the header.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from veil.schema import Role

__all__ = ["HeaderHint", "header_tokens", "header_hint"]


@dataclass(frozen=True)
class HeaderHint:
    """What a header suggests: a role, a kind (e.g. ``"age"``) and the keyword that matched."""

    role: Role
    kind: str
    keyword: str
    confidence: float


_I, _Q, _S = Role.IDENTIFIER, Role.QUASI, Role.SENSITIVE

# (role, kind, confidence, keywords) -- earlier rules win.
_RULES: tuple[tuple[Role, str, float, tuple[str, ...]], ...] = (
    (_I, "email", 0.8, ("email", "e mail", "mail address", "mail")),
    (_I, "phone", 0.8, ("phone", "telephone", "tel", "mobile", "cell", "msisdn", "fax")),
    (_I, "ssn", 0.85, ("ssn", "social security", "sin", "social insurance")),
    (_I, "iban", 0.85, ("iban", "account number", "acct", "bank account")),
    (_I, "payment_card", 0.85, ("credit card", "card number", "cc number", "card", "pan")),
    (_I, "ip_address", 0.8, ("ip", "ip address", "ipv4", "ipv6")),
    (_I, "url", 0.7, ("url", "website", "homepage", "web")),
    (
        _I,
        "national_id",
        0.85,
        (
            "passport",
            "national id",
            "nin",
            "nhs",
            "id number",
            "idno",
            "tax id",
            "tin",
            "kra pin",
            "kra",
            "huduma",
            "nino",
            "ni number",
            "ni no",
            "national insurance",
            "bsn",
            "burgerservicenummer",
            "sofinummer",
            "id no",
            "license number",
            "licence number",
            "driver license",
            "vat",
        ),
    ),
    (_I, "username", 0.75, ("username", "user name", "login", "handle", "user id")),
    (_I, "address", 0.8, ("address", "street", "addr", "house number")),
    (
        _I,
        "person_name",
        0.8,
        (
            "name",
            "first name",
            "firstname",
            "given name",
            "surname",
            "last name",
            "lastname",
            "fullname",
            "full name",
            "forename",
            "maiden",
        ),
    ),
    (_I, "record_id", 0.7, ("id", "uuid", "guid", "mrn", "record number", "identifier", "key")),
    (
        _Q,
        "birth_date",
        0.9,
        ("dob", "birth", "birthdate", "birthday", "born", "yob", "date of birth"),
    ),
    (_Q, "age", 0.9, ("age", "aged", "age years")),
    (_Q, "postcode", 0.9, ("zip", "zipcode", "postcode", "postal", "post code", "plz")),
    (_Q, "gender", 0.9, ("gender", "sex")),
    (_Q, "marital_status", 0.9, ("marital", "married", "civil status", "spouse")),
    (_Q, "ethnicity", 0.85, ("race", "ethnic", "ethnicity", "ancestry", "tribe")),
    (
        _S,
        "health",
        0.85,
        (
            "diagnosis",
            "illness",
            "disease",
            "condition",
            "icd",
            "medical",
            "health",
            "treatment",
            "medication",
            "drug",
            "hiv",
            "symptom",
            "disability",
            "allergy",
        ),
    ),
    (
        _S,
        "income",
        0.85,
        ("income", "salary", "wage", "wages", "earnings", "pay", "salary class", "revenue"),
    ),
    (_S, "religion", 0.85, ("religion", "religious", "faith", "belief")),
    (_S, "sexual_orientation", 0.85, ("sexual", "orientation")),
    (_S, "political_opinion", 0.8, ("political", "vote")),
    (_S, "criminal_record", 0.8, ("criminal", "conviction", "offence", "offense")),
    (
        _Q,
        "location",
        0.8,
        (
            "county",
            "region",
            "city",
            "town",
            "state",
            "province",
            "district",
            "country",
            "municipality",
            "village",
            "ward",
            "location",
            "residence",
            "nationality",
            "subcounty",
            "neighbourhood",
            "neighborhood",
        ),
    ),
    (
        _Q,
        "occupation",
        0.8,
        ("occupation", "job", "profession", "employer", "workclass", "employment", "work class"),
    ),
    (_Q, "education", 0.75, ("education", "degree", "school", "qualification")),
    (_Q, "household", 0.6, ("dependents", "dependants", "children", "household", "kids")),
    (_Q, "date", 0.6, ("date", "datetime", "timestamp", "admission date", "discharge date")),
)

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def header_tokens(name: object) -> list[str]:
    """Lower-case word tokens of a column name.

    Examples
    --------
    >>> header_tokens("Marital_status"), header_tokens("zipCode"), header_tokens("native-country")
    (['marital', 'status'], ['zip', 'code'], ['native', 'country'])
    """
    text = _CAMEL.sub(" ", str(name))
    return [t for t in re.split(r"[^A-Za-z0-9]+", text.lower()) if t]


def header_hint(name: object) -> HeaderHint | None:
    """The first rule whose keyword appears in the header, or None.

    Examples
    --------
    >>> header_hint("Illness_category").kind, header_hint("Date_of_entry").role.value
    ('health', 'quasi')
    >>> header_hint("Retention") is None
    True
    """
    tokens = header_tokens(name)
    if not tokens:
        return None
    joined = " " + " ".join(tokens) + " "
    glued = "".join(tokens)
    for role, kind, conf, keywords in _RULES:
        for kw in keywords:
            if f" {kw} " in joined or (" " in kw and kw.replace(" ", "") == glued):
                return HeaderHint(role, kind, kw, conf)
    return None
