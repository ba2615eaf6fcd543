"""Regressions from the scan audit of free-text columns: phone numbers written inside prose,
and e-mails or phones in only a few rows of a notes column (were below the 10% share)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from veil.cli.main import main
from veil.deid import scan
from veil.deid._detectors import detect_embedded

PHONES_IN_TEXT = [
    "call +254 712 345 678 after 5pm",
    "tel. (555) 123-4567",
    "mobile: 0712-345678, ask for the manager",
    "reach her on 555.123.4567.",
    "office +44 20 7946 0958 ext 12",
    "tel 555-1234 (home)",
]
NOT_PHONES = [
    "paid $1 250 000 000 in 2019",
    "budget 1.234.567.890 EUR approved",
    "amount 12345678.90 settled",
    "see ISBN 978-3-16-148410-0 chapter 2",
    "book 0-306-40615-2 p. 3",
    "meeting 2020-01-15 10:30 to 11:45",
    "seen in 1999 2000 2001 and 2002",
    "Cambridge MA 02139-4307",
    "server 192.168.100.200 down",
    "scores 10.5 20.5 30.5 40.5",
    "from 2019-2020 season",
    "12 items at 10:30 on 15.01.2020",
    "ssn 123-45-6789 on file",
    "ref 123456789 closed",
]


def test_embedded_phones_found_and_number_prose_is_not() -> None:
    got = detect_embedded(np.array(PHONES_IN_TEXT + NOT_PHONES, dtype=object))["phone"]
    n = len(PHONES_IN_TEXT)
    assert got[:n].all(), [v for v, g in zip(PHONES_IN_TEXT, got[:n]) if not g]
    assert not got[n:].any(), [v for v, g in zip(NOT_PHONES, got[n:]) if g]


def _prose(i: int, rng: np.random.Generator) -> str:
    """A note full of numbers that are no identifiers: amounts, years, times, dates, counts."""
    return (
        f"visit {i}: paid KES {rng.integers(100, 99999)}.{rng.integers(0, 99):02d} in "
        f"{rng.integers(1990, 2030)}, {rng.integers(1, 12)}:{rng.integers(0, 59):02d} on "
        f"2024-{rng.integers(1, 12):02d}-{rng.integers(1, 28):02d}, {rng.integers(1, 50)} items"
    )


def test_few_emails_or_phones_in_a_large_notes_column_are_flagged() -> None:
    rng = np.random.default_rng(1)
    n = 1000
    base = [_prose(i, rng) for i in range(n)]
    emails = list(base)
    emails[10] = "customer asked for a call back, mail: ann.smith@example.org"
    emails[700] = "wrong address bob@mail.co.ke, fixed"
    phones = list(base)
    phones[5] = "call +254 712 345 678 after 5pm"
    r = scan(pd.DataFrame({"notes": emails, "memo": phones, "prose": base}))
    assert (r["notes"].role.value, r["notes"].kind) == ("identifier", "free_text")
    assert "2 of 1000" in r["notes"].reason and "e-mail" in r["notes"].reason
    assert (r["memo"].role.value, r["memo"].kind) == ("identifier", "free_text")
    assert "phone" in r["memo"].reason
    assert r["prose"].role.value == "insensitive", r["prose"].reason
    assert r.to_policy()["columns"]["notes"]["operator"] == "drop"


@pytest.mark.parametrize("fill", ["", "N/A"])
def test_one_embedded_email_among_placeholders_is_flagged(fill: str) -> None:
    notes = [fill] * 300 + ["follow up with jo@example.com"]
    assert scan(pd.DataFrame({"notes": notes}))["notes"].kind == "free_text"


def test_scan_policy_out_then_anonymize_leaves_no_embedded_identifier(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = np.random.default_rng(2)
    n = 600
    notes = [_prose(i, rng) for i in range(n)]
    secrets = {
        3: "call +254 712 345 678 after 5pm",
        250: "tel. (555) 123-4567 evenings",
        400: "mail ann.smith@example.org re invoice",
    }
    for i, v in secrets.items():
        notes[i] = v
    df = pd.DataFrame(
        {
            "age": rng.integers(20, 80, n),
            "gender": rng.choice(["male", "female"], n),
            "notes": notes,
            "remarks": [_prose(i, rng) for i in range(n)],
        }
    )
    df.loc[77, "remarks"] = "client bob@mail.co.ke prefers e-mail"
    src = tmp_path / "visits.csv"
    df.to_csv(src, index=False)
    draft, out = tmp_path / "p.yaml", tmp_path / "o"
    assert main(["scan", str(src), "--policy-out", str(draft)]) == 0
    assert main(["anonymize", str(src), "--policy", str(draft), "--out", str(out)]) == 0, (
        capsys.readouterr().err
    )
    text = (out / "visits.csv").read_text()
    for needle in ("712 345 678", "123-4567", "ann.smith@example.org", "bob@mail.co.ke"):
        assert needle not in text
    assert not re.search(r"[\w.]+@[\w.]+\.\w+", text)
    assert not detect_embedded(np.array(text.splitlines(), dtype=object))["phone"].any()
    report = json.loads((out / "report.json").read_text())
    assert report["targets"]["all_met"]
