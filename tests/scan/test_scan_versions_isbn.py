"""Regressions: version strings read as IPv4 addresses and ISBN columns read as phone numbers.

A 4-part version such as ``1.2.3.4`` is a valid IPv4 address, so content alone cannot tell it
from one; the column can: IPv4 addresses always have four parts of 0-255, so a column that also
holds 2- or 3-part dotted numbers (``2.1.0``) or parts above 255 (``10.0.19041.1``), or whose
header says version/release/build, is a column of versions.  ISBNs carry a check digit, so a
column of hyphenated ISBNs (or of bare ones, nearly all passing the check) is not one of phones.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.deid import scan
from veil.deid._detectors import detect_embedded, detect_phone


def _versions(rng: np.random.Generator, n: int, three_part: float = 0.0) -> list[str]:
    """``n`` rows drawn from 30 releases: 4-part versions with few-digit parts (each also a
    valid IPv4 address), a share ``three_part`` of the releases written with 3 parts."""
    pool = []
    for i in range(30):
        parts = [rng.integers(1, 10), rng.integers(0, 10), rng.integers(0, 20)]
        if i >= three_part * 30:
            parts.append(rng.integers(0, 100))
        pool.append(".".join(str(p) for p in parts))
    return [str(v) for v in rng.choice(pool, n)]


def _ipv4(rng: np.random.Generator, n: int) -> list[str]:
    return [".".join(str(x) for x in rng.integers(0, 256, 4)) for _ in range(n)]


def test_version_header_is_not_an_ip_column() -> None:
    rng = np.random.default_rng(0)
    v = _versions(rng, 300)  # every value is also a valid IPv4 address
    for name in ("version", "app_version", "release", "build", "firmwareVersion", "OS_Rev"):
        f = scan(pd.DataFrame({name: v}))[name]
        assert (f.role.value, f.kind) == ("insensitive", "other"), (name, f.reason)


def test_versions_mixed_with_three_part_versions_are_not_ips() -> None:
    rng = np.random.default_rng(1)
    mixed = _versions(rng, 300, three_part=0.2)  # 2.1.0 next to 1.2.3.4
    builds = [f"10.0.{b}.{p}" for b, p in zip(rng.choice([19041, 19045, 22621], 20), range(20))]
    windows = [str(v) for v in rng.choice(builds, 150)] + _versions(rng, 150)
    r = scan(pd.DataFrame({"col_1": mixed, "col_2": windows}))
    for c in ("col_1", "col_2"):
        assert (r[c].role.value, r[c].kind) == ("insensitive", "other"), (c, r[c].reason)


def test_ip_columns_still_found() -> None:
    rng = np.random.default_rng(2)
    n = 300
    ips = _ipv4(rng, n)
    private = [f"10.0.{rng.integers(0, 4)}.{rng.integers(1, 255)}" for _ in range(n)]
    with_v6 = ips[:200] + ["2001:db8::" + format(int(x), "x") for x in rng.integers(1, 9999, 100)]
    blanks = [v if i % 3 else "-" for i, v in enumerate(ips)]
    r = scan(
        pd.DataFrame(
            {"col_1": ips, "col_2": private, "col_3": with_v6, "col_4": blanks, "client_ip": ips}
        )
    )
    for c in ("col_1", "col_2", "col_3", "col_4", "client_ip"):
        assert (r[c].role.value, r[c].kind) == ("identifier", "ip_address"), (c, r[c].reason)
    # a header naming both an IP address and a build does not hide the addresses, nor do a few
    # malformed (3-part) entries in a column whose header names IP addresses
    assert scan(pd.DataFrame({"build_server_ip": ips}))["build_server_ip"].kind == "ip_address"
    assert not detect_phone(np.array(ips + private, dtype=object)).any()  # 10-12 digits, dots
    damaged = [v.rsplit(".", 1)[0] if i % 5 == 0 else v for i, v in enumerate(ips)]
    r = scan(pd.DataFrame({"client_ip": damaged, "col_1": damaged}))
    assert r["client_ip"].kind == "ip_address", r["client_ip"].reason
    # nor under a neutral header: the 3-part entries are truncations of the column's own
    # addresses, whose parts spread over 0-255 (taking them for versions released the column)
    assert r["col_1"].kind == "ip_address", r["col_1"].reason
    # 4-part versions alone under a neutral header cannot be told from addresses: the scan errs
    # on the safe side (documented in docs/deid.md)
    assert scan(pd.DataFrame({"col_1": _versions(rng, n)}))["col_1"].kind == "ip_address"


def _isbn13(rng: np.random.Generator) -> str:
    body = "978" + "".join(str(d) for d in rng.integers(0, 10, 9))
    check = (10 - sum((3 if i % 2 else 1) * int(c) for i, c in enumerate(body)) % 10) % 10
    d = body + str(check)
    return f"{d[:3]}-{d[3]}-{d[4:6]}-{d[6:12]}-{d[12]}"


def _isbn10(rng: np.random.Generator, hyphens: bool) -> str:
    while True:
        body = "0" + "".join(str(d) for d in rng.integers(0, 10, 8))
        check = (11 - sum((10 - i) * int(c) for i, c in enumerate(body)) % 11) % 11
        if check < 10:  # an 'X' check digit is never phone-shaped anyway
            d = body + str(check)
            return f"{d[0]}-{d[1:4]}-{d[4:9]}-{d[9]}" if hyphens else d


def test_isbn_columns_are_not_phones() -> None:
    rng = np.random.default_rng(3)
    n = 200
    isbn13 = [_isbn13(rng) for _ in range(n)]
    isbn10 = [_isbn10(rng, hyphens=True) for _ in range(n)]
    bare10 = [_isbn10(rng, hyphens=False) for _ in range(n)]  # leading 0: phone-shaped
    assert not detect_phone(np.array(isbn13 + isbn10, dtype=object)).any()
    assert _isbn13(np.random.default_rng(9)).count("-") == 4
    r = scan(pd.DataFrame({"col_1": isbn13, "col_2": isbn10, "col_3": bare10}))
    for c in ("col_1", "col_2", "col_3"):
        assert r[c].kind != "phone", (c, r[c].reason)
    assert "978-3-16-148410-0" not in set(isbn13)  # generated, not copied from the issue
    assert not detect_phone(np.array(["978-3-16-148410-0", "0-306-40615-2"], dtype=object)).any()


def test_a_column_of_bare_isbns_is_not_free_text_with_phones() -> None:
    # bare ISBN-10s with a leading 0 are phone-shaped; as whole values of a column where they
    # nearly all pass the check digit they are book numbers for the free-text rule too (it
    # used to flag the column as notes containing phone numbers: one value was enough)
    rng = np.random.default_rng(11)
    pool = [_isbn10(rng, hyphens=False) for _ in range(60)]
    values = [pool[i] for i in rng.integers(0, 60, 400)]  # repeated, as in a loans table
    assert not detect_embedded(np.array(values, dtype=object))["phone"].any()
    r = scan(pd.DataFrame({"col_1": values}))
    assert (r["col_1"].role, r["col_1"].kind) == ("insensitive", "other"), r["col_1"].reason
    # whole-value mobiles (1 in 11 passes the ISBN-10 check by chance) and an ISBN-shaped
    # phone inside prose are still phones
    mobiles = np.array([f"07{rng.integers(0, 10**8):08d}" for _ in range(400)], dtype=object)
    assert detect_embedded(mobiles)["phone"].mean() > 0.99
    notes = np.array([f"call {pool[0]} after 5pm", *pool[1:30]], dtype=object)
    assert detect_embedded(notes)["phone"].tolist() == [True] + [False] * 29


@pytest.mark.parametrize("seed", [4, 5])
def test_phone_columns_survive_the_isbn_rule(seed: int) -> None:
    # 10-digit phones with a leading 0 (Kenyan mobiles) pass the ISBN-10 check 1 time in 11:
    # only the column-level rule (>= 90% passing, >= 10 distinct) may drop the phone reading,
    # so a phone column keeps its kind; hyphenated groups of 3 separators are still phones
    rng = np.random.default_rng(seed)
    n = 300
    mobiles = [f"07{rng.integers(0, 10**8):08d}" for _ in range(n)]
    spaced = [
        f"0 7{rng.integers(0, 100):02d} {rng.integers(0, 1000):03d} {rng.integers(0, 1000):03d}"
        for _ in range(n)
    ]
    r = scan(pd.DataFrame({"col_1": mobiles, "col_2": spaced}))
    assert (r["col_1"].kind, r["col_2"].kind) == ("phone", "phone"), (
        r["col_1"].reason,
        r["col_2"].reason,
    )


def test_build_numbers_are_not_phones_in_a_column_or_in_prose() -> None:
    # 10.0.19041.1 has 9-10 digits with separators, the shape of a phone: the one-digit part
    # after the first says it is a dotted version (phones written with dots group 2+ digits)
    from veil.deid._detectors import detect_embedded

    rng = np.random.default_rng(6)
    builds = [f"10.0.{rng.integers(10240, 22631)}.{rng.integers(1, 10)}" for _ in range(200)]
    r = scan(pd.DataFrame({"col_1": builds}))
    assert r["col_1"].kind not in ("phone", "ip_address", "free_text"), r["col_1"].reason
    notes = [f"updated to {b} yesterday" for b in builds]
    assert not detect_embedded(np.array(notes, dtype=object))["phone"].any()
    dotted = ["555.123.4567", "1.800.555.1234", "+44.20.7946.0958"]
    assert detect_phone(np.array(dotted, dtype=object)).all()


@pytest.mark.parametrize("share", [0.1, 0.2, 0.4])
@pytest.mark.parametrize("damage", ["truncated", "placeholder"])
def test_ip_columns_with_damaged_entries_are_not_versions(share: float, damage: str) -> None:
    """An access log's addresses (50 clients, repeated) with a share of damaged entries:
    3-part truncations (``81.12.200``) or a ``0.0`` placeholder.  Those are dotted numbers that
    cannot be IPv4 addresses, which the version rule took as evidence of a version column, and
    the column -- 60% to 90% real addresses -- was released as insensitive.  Addresses have
    parts all over 0-255 (a random address has all four below 100 with probability
    (100/256)**4 = 2.3%), versions have small parts, and truncations are prefixes of the
    column's own addresses."""
    rng = np.random.default_rng(4)
    pool = _ipv4(rng, 50)
    v = [pool[i] for i in rng.integers(0, 50, 300)]
    for i in range(int(300 * share)):
        v[i] = ".".join(v[i].split(".")[:3]) if damage == "truncated" else "0.0"
    for header in ("col_1", "client"):
        f = scan(pd.DataFrame({header: v}))[header]
        assert (f.role.value, f.kind) == ("identifier", "ip_address"), (header, f.reason)


@pytest.mark.parametrize("header", ["build_host", "release_server", "firmware_source"])
def test_a_version_word_in_the_header_does_not_hide_addresses(header: str) -> None:
    """A version word (build, release, firmware) next to a host or server: the column holds
    addresses (parts all over 0-255), which the header alone turned into versions."""
    rng = np.random.default_rng(6)
    pool = _ipv4(rng, 40)
    v = [pool[i] for i in rng.integers(0, 40, 300)]
    f = scan(pd.DataFrame({header: v}))[header]
    assert (f.role.value, f.kind) == ("identifier", "ip_address"), f.reason
