"""Scan a table for identifying columns: content detectors, header rules and uniqueness.

Every column gets a role (identifier, quasi, sensitive, insensitive), a kind (``"email"``,
``"age"``, ...), a reason and a confidence in [0, 1].  Content wins over headers: a column of
e-mail addresses is an identifier whatever its name.  Detection runs on the distinct values of
a sample of at most ``sample_rows`` rows (fixed seed), so the cost does not grow with the table;
uniqueness figures use every row.

The classification follows the categories of the HIPAA Safe Harbor list and the ARX/sdcMicro
notion of direct and quasi-identifiers (Sweeney 2002, "k-anonymity: a model for protecting
privacy").
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from veil.deid._detectors import DETECTORS, detect_embedded, versions_not_ips
from veil.deid._headers import header_hint
from veil.deid._occupations import detect_education, detect_occupation
from veil.deid._places import place_masks, postcode_share
from veil.deid._text import as_text, hashable_cells, text_of, to_text
from veil.errors import InputError
from veil.io._dates import dominant_date_format
from veil.schema import Role

__all__ = ["ColumnFinding", "ScanResult", "scan"]

#: Share of (sampled, non-missing) values a detector must recognise to classify a column.
MATCH_THRESHOLD = 0.6
#: Share of values of a free-text column containing an e-mail, URL, SSN or phone number at
#: which the finding's confidence saturates (the column is flagged at far fewer, see below).
EMBEDDED_THRESHOLD = 0.1
#: Sampled rows that must contain an embedded identifier to flag a free-text column.  One is
#: enough: a single e-mail address or phone number in a notes column is personal data, and a
#: share rule (10% before the scan audit, or 1%) lets a column of 1,000 notes with two
#: e-mails through.  A false alarm costs a dropped column the reviewer can keep by editing
#: the draft (the reason gives the count); a miss publishes the identifier.  The embedded
#: detectors are built for this: e-mails need a domain and TLD, SSNs exclude never-issued
#: numbers, phones in prose need 9 digits (7 after a cue word) and exclude money, dates,
#: years, IP addresses and ISBNs.
EMBEDDED_MIN_ROWS = 1
_PLURAL = {
    "email": "e-mail addresses",
    "url": "web addresses",
    "ssn": "social security numbers",
    "address": "street addresses",
    "ip_address": "IP addresses",
    "phone": "phone numbers",
    "uk_nino": "UK National Insurance numbers",
    "kra_pin": "Kenyan KRA PINs",
    "ca_sin": "Canadian social insurance numbers (Luhn check digit)",
    "nl_bsn": "Dutch citizen service numbers (BSN, 11-proof check digit)",
}
#: Kinds whose values passed a check digit column-wise: the phone reading of the same digit
#: groups (``123-456-782``) never replaces them, even with a higher share.
_CHECKED = frozenset({"ca_sin", "nl_bsn"})
_GENDER = {
    "m",
    "f",
    "male",
    "female",
    "man",
    "woman",
    "men",
    "women",
    "other",
    "x",
    "u",
    "unknown",
    "non-binary",
    "nonbinary",
    "diverse",
}
_MARITAL = r"(?i)^(single|married|divorced|widowed|separated|never[- ]married|married-.*|partner.*|cohabiting|civil partnership)$"
_RACE = (
    r"(?i)(?:white|black|asian|hispanic|latino|indian|pacific|african|caucasian|amer-indian|eskimo)"
)
_INCOME_CLASS = r"^[<>]=?\s*\$?\d+[kK]?\.?$"
#: Diagnoses and illnesses (a value mentions one of these words: sensitive, kind ``health``).
_HEALTH = (
    r"(?i)\b(?:diabet\w*|asthma\w*|cancer|carcinoma|tumou?r|leuk(?:a)?emia|lymphoma|"
    r"hypertension|hypertensive|hiv|aids|depress\w*|anxiety|schizophreni\w*|bipolar|"
    r"chronic|congenital|arthritis|stroke|cardiac|heart (?:disease|failure)|renal|kidney|"
    r"hepatitis|tuberculosis|malaria|covid(?:-19)?|influenza|pneumonia|epilep\w*|dementia|"
    r"alzheimer\w*|parkinson\w*|obes\w*|disorder|syndrome|disease|infection|allerg\w*|copd|"
    r"bronchitis|sickle[- ]cell|ulcer|migraine|autism|adhd|psychosis|anaemia|anemia)\b"
)
#: Religions and beliefs (sensitive, kind ``religion``).
_RELIGION = (
    r"(?i)\b(?:christian\w*|catholic|protestant|orthodox|anglican|baptist|methodist|"
    r"pentecostal|lutheran|evangelical|mormon|muslim|islam\w*|sunni|shia|hindu\w*|buddhis\w*|"
    r"jewish|judaism|sikh\w*|jain\w*|atheis\w*|agnostic|taois\w*|shinto|bah[aá]'?i|"
    r"no religion|irreligious)\b"
)


@dataclass(frozen=True)
class ColumnFinding:
    """The scan's verdict on one column.

    Examples
    --------
    >>> f = scan(pd.DataFrame({"email": ["ann@x.org", "bob@y.com"], "age": [31, 45]}))["email"]
    >>> f.role.value, f.kind, f.confidence, f.distinct_share
    ('identifier', 'email', 0.99, 1.0)
    >>> f.reason
    "100% of values look like e-mail addresses; header 'email'"
    """

    column: str
    role: Role
    kind: str
    reason: str
    confidence: float
    distinct: int
    distinct_share: float
    unique_records_share: float
    missing_share: float
    dtype: str
    minimum: float | None = None
    maximum: float | None = None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["role"] = self.role.value
        return d


@dataclass
class ScanResult:
    """Column findings plus uniqueness of the quasi-identifier combination.

    Attributes
    ----------
    columns
        One :class:`ColumnFinding` per column, in table order.
    n_rows
        Number of records.
    qi_unique_share
        Share of records unique on the combination of the quasi-identifiers found.
    qi_smallest_class
        Size of the smallest group of records sharing the same quasi-identifier values.

    Examples
    --------
    >>> df = pd.DataFrame({"zip": ["13053", "13068", "13053", "13068"], "age": [28, 29, 28, 35],
    ...                    "diagnosis": ["flu", "cold", "flu", "hiv"]})
    >>> result = scan(df)
    >>> result.quasi_identifiers, result.qi_unique_share, result.qi_smallest_class
    (['zip', 'age'], 0.5, 1)
    >>> result["diagnosis"].role.value, result.to_frame().shape
    ('sensitive', (3, 12))
    """

    columns: list[ColumnFinding]
    n_rows: int
    qi_unique_share: float = 0.0
    qi_smallest_class: int = 0
    missing_values: list[str] = field(default_factory=list)

    def __getitem__(self, column: str) -> ColumnFinding:
        for f in self.columns:
            if f.column == column:
                return f
        raise KeyError(column)

    @property
    def roles(self) -> dict[str, Role]:
        """Column name -> role."""
        return {f.column: f.role for f in self.columns}

    @property
    def quasi_identifiers(self) -> list[str]:
        return [f.column for f in self.columns if f.role is Role.QUASI]

    def to_frame(self) -> pd.DataFrame:
        """One row per column."""
        return pd.DataFrame([f.to_dict() for f in self.columns])

    def to_dict(self) -> dict[str, Any]:
        """JSON-able summary."""
        return {
            "n_rows": self.n_rows,
            "quasi_identifiers": self.quasi_identifiers,
            "qi_unique_share": self.qi_unique_share,
            "qi_smallest_class": self.qi_smallest_class,
            "columns": [f.to_dict() for f in self.columns],
        }

    def to_policy(self, k: int = 5) -> dict[str, Any]:
        """Draft a policy (as a dict) with the roles found and suggested operators."""
        from veil.deid._scan_draft import draft_policy

        return draft_policy(self, k=k)

    def to_yaml(self, k: int = 5) -> str:
        """Draft policy as commented YAML text, ready to edit."""
        from veil.deid._scan_draft import draft_yaml

        return draft_yaml(self, k=k)


def _sample(s: pd.Series, n: int) -> pd.Series:
    if len(s) <= n:
        return s
    idx = np.sort(np.random.default_rng(0).choice(len(s), n, replace=False))
    return s.iloc[idx]


#: Cell texts that stand for "no value" in text columns read without a matching missing marker
#: (or built in memory): they are left out of the shares the identifier detectors compute, so a
#: column of 95% ``""`` or ``"N/A"`` and 5% e-mail addresses is still a column of e-mails.
_PLACEHOLDERS = frozenset(
    {
        "",
        "-",
        "--",
        "---",
        "\u2013",
        "\u2014",
        ".",
        "?",
        "n/a",
        "na",
        "n.a.",
        "none",
        "null",
        "nil",
        "nan",
        "missing",
        "unknown",
    }
)


def _without_placeholders(vc: pd.Series) -> pd.Series:
    """Value counts without blank or placeholder texts (see ``_PLACEHOLDERS``)."""
    keep = [not (isinstance(v, str) and v.strip().lower() in _PLACEHOLDERS) for v in vc.index]
    return vc[np.asarray(keep, dtype=bool)] if not all(keep) else vc


def _content_identifier(vc: pd.Series, header: str) -> tuple[str, float] | None:
    """Best matching detector and its frequency-weighted share of matching values.

    IPv4-shaped values are not IP addresses in a column of versions (see
    :func:`~veil.deid._detectors.versions_not_ips`).  A check-digit kind (SIN, BSN) matches
    only on column-wise evidence (10 or more distinct values, 90% passing), so it counts below
    ``MATCH_THRESHOLD`` too: SINs among notes or bare digits are still SINs.
    """
    values = np.asarray(vc.index, dtype=object)
    if not all(isinstance(v, str) for v in values[:50]):
        values = np.array([text_of(v) for v in values], dtype=object)
    values = as_text(values)  # converted once for every detector
    weights = vc.to_numpy(dtype=float)
    total = weights.sum()
    best: tuple[str, float] | None = None
    checked: tuple[str, float] | None = None  # a check-digit kind below the threshold
    for kind, detector in DETECTORS.items():
        mask = detector(values)
        share = float(weights[mask].sum() / total)
        if share < MATCH_THRESHOLD:
            checked = checked or ((kind, share) if kind in _CHECKED and share > 0 else None)
            continue
        if kind == "ip_address" and versions_not_ips(header, values, weights, mask):
            continue
        if kind == "phone" and best is not None and best[0] in _CHECKED:
            continue  # a few typos in a SIN column must not make it one of phones
        if best is None or share > best[1] + 0.05:
            best = (kind, share)
    return best or checked


def _embedded_identifier(vc: pd.Series) -> tuple[str, float, int] | None:
    """The most frequent kind of identifier embedded in free text: kind, share, rows.

    None unless at least ``EMBEDDED_MIN_ROWS`` (sampled, non-blank) rows contain one.
    """
    values = np.array([text_of(v) for v in np.asarray(vc.index, dtype=object)], dtype=object)
    weights = vc.to_numpy(dtype=float)
    best: tuple[str, float, int] | None = None
    for kind, mask in detect_embedded(values).items():
        rows = int(weights[mask].sum())
        share = float(rows / weights.sum())
        if rows >= EMBEDDED_MIN_ROWS and (best is None or share > best[1]):
            best = (kind, share, rows)
    return best


def _vocabulary_share(idx: pd.Series, w: np.ndarray, pattern: str) -> tuple[float, int]:
    """Weighted share of values mentioning a word of ``pattern`` and how many distinct ones do."""
    hit = idx.str.contains(pattern, regex=True).to_numpy(bool)
    return float(w[hit].sum() / w.sum()), int(hit.sum())


_PLACE_WORDS = {"city": "cities", "region": "regions/counties/states", "country": "countries"}


def _place(vc: pd.Series) -> tuple[float, str]:
    """Frequency-weighted share of values that are place names, and which kinds (for a reason)."""
    values = np.asarray(vc.index, dtype=object)
    if len(values) == 0:
        return 0.0, ""
    w = vc.to_numpy(dtype=float)
    masks = place_masks(values)
    anyhit = np.logical_or.reduce(list(masks.values()))
    if anyhit.sum() < min(3, len(values)):
        return 0.0, ""
    parts = [(float(w[m].sum() / w.sum()), _PLACE_WORDS[k]) for k, m in masks.items() if m.any()]
    text = ", ".join(f"{name} {sh:.0%}" for sh, name in sorted(parts, reverse=True))
    return float(w[anyhit].sum() / w.sum()), text


def _location(s: pd.Series, vc: pd.Series) -> tuple[str, str, float, Role] | None:
    """Postcodes and place names (cities, counties, regions, countries) by content."""
    share = postcode_share(s, vc)
    if share >= MATCH_THRESHOLD:
        if pd.api.types.is_integer_dtype(s):
            why = "5-digit integers, repeated and unrounded, like postcodes"
            return ("postcode", why, 0.55, Role.QUASI)
        return (
            "postcode",
            f"{share:.0%} of values look like postcodes",
            0.5 + 0.4 * share,
            Role.QUASI,
        )
    if pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s):
        return None
    share, kinds = _place(vc)
    if share >= MATCH_THRESHOLD:
        why = f"{share:.0%} of values are place names ({kinds})"
        return ("location", why, 0.5 + 0.4 * share, Role.QUASI)
    if len(vc) > 5000:
        return None
    values, w = np.asarray(vc.index, dtype=object), vc.to_numpy(dtype=float)
    for kind, detect, what in (
        ("education", detect_education, "education levels"),
        ("occupation", detect_occupation, "occupations or employment statuses"),
    ):
        hit = detect(values)
        share = float(w[hit].sum() / w.sum())
        if share >= MATCH_THRESHOLD and hit.sum() >= min(3, len(vc)):
            return (kind, f"{share:.0%} of values are {what}", 0.5 + 0.3 * share, Role.QUASI)
    return None


def _content_quasi(s: pd.Series, vc: pd.Series) -> tuple[str, str, float, Role] | None:
    """Quasi-identifiers and sensitive columns recognised by their values (no header hint).

    Checked before the near-unique ID rule, so a column of birth dates under a neutral header
    is a quasi-identifier (``date``), not a record id.
    """
    if pd.api.types.is_datetime64_any_dtype(s):
        return ("date", "values are dates", 0.6, Role.QUASI)
    if pd.api.types.is_integer_dtype(s) and not pd.api.types.is_bool_dtype(s):
        return _location(s, vc)
    if pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s) or len(vc) == 0:
        return None
    idx = to_text(pd.Series(np.asarray(vc.index, dtype=object))).str.strip()
    w = vc.to_numpy(dtype=float)
    fmt = dominant_date_format(idx, w)
    if fmt is not None:
        return ("date", f"values are dates (text, {fmt})", 0.6, Role.QUASI)
    low = idx.str.lower()
    if len(vc) <= 6 and (w[low.isin(_GENDER).to_numpy()].sum() / w.sum()) >= 0.9:
        return ("gender", "values look like genders", 0.75, Role.QUASI)
    if (w[idx.str.match(_MARITAL).to_numpy(bool)].sum() / w.sum()) >= 0.7:
        return ("marital_status", "values look like marital statuses", 0.75, Role.QUASI)
    if (
        len(vc) <= 30
        and (w[idx.str.contains(_RACE, regex=True).to_numpy(bool)].sum() / w.sum()) >= 0.9
    ):
        return ("ethnicity", "values look like ethnic groups", 0.7, Role.QUASI)
    if len(vc) <= 10 and (w[idx.str.match(_INCOME_CLASS).to_numpy(bool)].sum() / w.sum()) >= 0.9:
        return ("income", "values look like income classes", 0.6, Role.SENSITIVE)
    if len(vc) <= 500:
        share, hits = _vocabulary_share(idx, w, _HEALTH)
        if share >= 0.5 and hits >= 2:
            why = f"{share:.0%} of values name diagnoses or illnesses"
            return ("health", why, 0.5 + 0.3 * share, Role.SENSITIVE)
    if len(vc) <= 60:
        share, hits = _vocabulary_share(idx, w, _RELIGION)
        if share >= 0.6 and hits >= 2:
            return (
                "religion",
                f"{share:.0%} of values name religions",
                0.5 + 0.3 * share,
                Role.SENSITIVE,
            )
    return _location(s, vc)


#: Text that is a number; integer text (digits only, e.g. ``00123``) can be a record id.
_NUMBER_TEXT = r"[+-]?(?:\d+(?:[.,]\d*)?|[.,]\d+)(?:[eE][+-]?\d+)?"
_INTEGER_TEXT = r"[+-]?\d+"


def _id_like(s: pd.Series, distinct: int, n: int) -> bool:
    """Near-unique integers (also floats that are all whole numbers, e.g. ids with gaps read as
    float) or short codes with digits.  A continuous measure (non-integer numbers, as numbers or
    as text such as ``52345.17``) and dates are not record ids."""
    if n < 20 or distinct < 0.95 * s.notna().sum():
        return False
    if pd.api.types.is_bool_dtype(s) or pd.api.types.is_datetime64_any_dtype(s):
        return False
    if pd.api.types.is_integer_dtype(s):
        return True
    if pd.api.types.is_numeric_dtype(s):
        if not pd.api.types.is_float_dtype(s):
            return False
        v = _sample(s.dropna(), 1000).to_numpy(dtype=float)
        return bool(np.isfinite(v).all() and (v == np.floor(v)).all())
    sample = to_text(_sample(s.dropna(), 1000)).str.strip()
    if sample.str.fullmatch(_NUMBER_TEXT).mean() >= 0.9:  # numbers written as text
        return bool(sample.str.fullmatch(_INTEGER_TEXT).mean() >= 0.9)
    return bool(
        sample.str.fullmatch(r"[A-Za-z0-9_.:/#-]{2,64}").mean() >= 0.9
        and sample.str.contains(r"\d").mean() >= 0.5
    )


def _classify(name: str, s: pd.Series, sample_rows: int) -> ColumnFinding:
    n = len(s)
    codes, uniques = pd.factorize(s, use_na_sentinel=True)
    valid = codes >= 0
    n_valid = int(valid.sum())
    distinct = len(uniques)
    counts = np.bincount(codes[valid], minlength=distinct) if distinct else np.zeros(0, int)
    unique_records = int((counts == 1).sum())
    base = {
        "column": name,
        "distinct": distinct,
        "distinct_share": distinct / n_valid if n_valid else 0.0,
        "unique_records_share": unique_records / n if n else 0.0,
        "missing_share": 1 - n_valid / n if n else 0.0,
        "dtype": str(s.dtype),
    }
    if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s) and n_valid:
        base["minimum"] = float(np.nanmin(s.to_numpy(dtype=float, na_value=np.nan)))
        base["maximum"] = float(np.nanmax(s.to_numpy(dtype=float, na_value=np.nan)))

    def finding(role: Role, kind: str, reason: str, conf: float) -> ColumnFinding:
        return ColumnFinding(
            role=role, kind=kind, reason=reason, confidence=round(min(conf, 0.99), 2), **base
        )

    if n_valid == 0:
        return finding(Role.INSENSITIVE, "empty", "no values", 0.5)
    hint = header_hint(name)
    vc = _sample(s.dropna(), sample_rows).value_counts(sort=False)
    content = None
    filled = _without_placeholders(vc)
    if (
        not pd.api.types.is_datetime64_any_dtype(s)
        and not pd.api.types.is_float_dtype(s)
        and not pd.api.types.is_bool_dtype(s)
        and len(filled)
    ):
        content = _content_identifier(filled, name)
    if content is not None:
        kind, share = content
        agree = hint is not None and hint.role is Role.IDENTIFIER
        conf = 0.5 + 0.45 * share + (0.05 if agree else 0.0)
        why = f"{share:.0%} of values look like {_PLURAL.get(kind, kind.replace('_', ' ') + 's')}"
        if kind == "person_name" and hint is not None and hint.role is not Role.IDENTIFIER:
            content = None  # e.g. a county named like a person: trust the header
        elif kind == "person_name" and _place(vc)[0] >= share:
            content = None  # towns named after people ("Lake Anna", "Jacksonville")
        else:
            return finding(
                Role.IDENTIFIER, kind, why + (f"; header '{name}'" if agree else ""), conf
            )
    if (
        content is None
        and not pd.api.types.is_numeric_dtype(s)
        and not pd.api.types.is_datetime64_any_dtype(s)
        and len(filled)
    ):
        embedded = _embedded_identifier(filled)
        if embedded is not None:
            kind, share, rows = embedded
            why = f"{rows} of {int(filled.sum())} values ({share:.1%}) contain {_PLURAL[kind]}"
            why += " in free text"
            return finding(
                Role.IDENTIFIER,
                "free_text",
                why,
                0.5 + 0.4 * min(1.0, share / EMBEDDED_THRESHOLD / 2),
            )
    id_like = _id_like(s, distinct, n)
    if hint is not None and hint.role is Role.IDENTIFIER:
        if id_like or distinct >= 50 or base["distinct_share"] >= 0.5:
            return finding(
                Role.IDENTIFIER,
                hint.kind,
                f"header mentions '{hint.keyword}', {base['distinct_share']:.0%} distinct",
                hint.confidence + (0.1 if id_like else 0.0),
            )
        hint = None  # e.g. "email_opt_in" with values yes/no
    if hint is not None:
        reason = f"header mentions '{hint.keyword}'"
        conf = hint.confidence
        cq = _content_quasi(s, vc)
        if cq is not None and cq[0] == hint.kind:
            reason += f"; {cq[1]}"
            conf += 0.05
        return finding(hint.role, hint.kind, reason, conf)
    cq = _content_quasi(s, vc)
    if cq is not None:
        kind, why, conf, role = cq
        return finding(role, kind, why, conf)
    if id_like:
        return finding(
            Role.IDENTIFIER,
            "record_id",
            f"near-unique ID-like values ({base['distinct_share']:.0%} distinct)",
            0.7,
        )
    return finding(Role.INSENSITIVE, "other", "no identifying header or content found", 0.5)


def qi_uniqueness(df: pd.DataFrame, columns: list[str]) -> tuple[float, int]:
    """Share of records unique on ``columns`` and the smallest class size (0 with no columns)."""
    if not columns or len(df) == 0:
        return 0.0, 0
    codes = np.zeros(len(df), dtype=np.int64)
    for col in columns:
        c, u = pd.factorize(df[col], use_na_sentinel=False)
        codes = codes * (len(u) + 1) + c
        codes, _ = pd.factorize(codes)
    counts = np.bincount(codes)
    return float((counts == 1).sum() / len(df)), int(counts.min())


def scan(df: pd.DataFrame, *, sample_rows: int = 50_000) -> ScanResult:
    """Classify every column of ``df`` as identifier, quasi-identifier, sensitive or insensitive.

    Parameters
    ----------
    df
        The table (never modified).
    sample_rows
        Content detectors look at the distinct values of at most this many rows (a fixed-seed
        random sample); uniqueness uses all rows.

    Returns
    -------
    ScanResult
        Findings per column (role, kind, reason, confidence, uniqueness) and the uniqueness of
        the combination of quasi-identifiers.

    Examples
    --------
    >>> df = pd.DataFrame({"mail": ["ann@x.org", "bob@y.com", "cy@z.net"], "age": [31, 45, 52],
    ...                    "illness": ["flu", "none", "flu"]})
    >>> r = scan(df)
    >>> [(f.column, f.role.value, f.kind) for f in r.columns]
    [('mail', 'identifier', 'email'), ('age', 'quasi', 'age'), ('illness', 'sensitive', 'health')]
    """
    if not isinstance(df, pd.DataFrame):
        raise InputError(f"scan expects a pandas DataFrame, got {type(df).__name__}")
    if df.shape[0] == 0 or df.shape[1] == 0:
        raise InputError("cannot scan an empty table")
    from veil.deid.operators._util import require_unique_columns  # lazy: keys, cryptography

    require_unique_columns(df)
    columns = {col: hashable_cells(df[col]) for col in df.columns}
    findings = [_classify(str(col), s, sample_rows) for col, s in columns.items()]
    qis = [f.column for f in findings if f.role is Role.QUASI]
    by_name = {str(c): c for c in df.columns}
    share, smallest = qi_uniqueness(
        pd.DataFrame({q: columns[by_name[q]] for q in qis}, index=df.index), qis
    )
    return ScanResult(findings, len(df), share, smallest)
