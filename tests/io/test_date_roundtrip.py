"""Dates keep their source text format: an untouched date column is byte-identical in a release."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from veil.cli.main import main
from veil.io import SourceFormat, read, read_table, write
from veil.io._dates import dates_as_text, format_dates, text_format


def _column(path: Path, name: str) -> list[str]:
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    j = rows[0].index(name)
    return [r[j] for r in rows[1:]]


def _dated_csv(path: Path, n: int = 60, seed: int = 3) -> None:
    rng = np.random.default_rng(seed)
    base = pd.Timestamp("1990-01-01")
    days = rng.integers(0, 12_000, n)
    mins = rng.integers(0, 24 * 60, n)
    when = [base + pd.Timedelta(days=int(d), minutes=int(m)) for d, m in zip(days, mins)]
    df = pd.DataFrame(
        {
            "pid": [f"P{i:04d}" for i in range(n)],
            "born": [w.strftime("%d/%m/%Y") for w in when],  # day first, zero padded
            "seen": [w.strftime("%m/%d/%Y %H:%M") for w in when],  # month first, with time
            # month first without leading zeros, as spreadsheets write it
            "visit": [f"{w.month}/{w.day}/{w.year} {w.hour}:{w.minute:02d}" for w in when],
            "score": rng.integers(0, 100, n),
        }
    )
    df.loc[5, "born"] = ""  # one missing date
    df.to_csv(path, index=False)


def test_read_records_source_formats(tmp_path: Path) -> None:
    p = tmp_path / "d.csv"
    _dated_csv(p)
    df, src = read_table(p)
    assert all(pd.api.types.is_datetime64_any_dtype(df[c]) for c in ("born", "seen", "visit"))
    assert src.date_formats == {
        "born": "%d/%m/%Y",
        "seen": "%m/%d/%Y %H:%M",
        "visit": "%-m/%-d/%Y %-H:%M",
    }
    assert df.attrs["veil_source"]["date_formats"] == src.date_formats


def test_write_keeps_untouched_dates_byte_identical(tmp_path: Path) -> None:
    p = tmp_path / "d.csv"
    _dated_csv(p)
    df = read(p)
    write(df, tmp_path / "out.csv")  # the format comes from df.attrs
    for col in ("born", "seen", "visit"):
        assert _column(tmp_path / "out.csv", col) == _column(p, col), col
    assert (tmp_path / "out.csv").read_bytes() == p.read_bytes()


def test_anonymize_leaves_untouched_dates_identical(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("VEIL_KEY", raising=False)
    p = tmp_path / "d.csv"
    _dated_csv(p)
    policy = tmp_path / "p.yaml"
    policy.write_text(
        "version: 1\n"
        "columns:\n"
        "  pid: {role: identifier, operator: drop}\n"
        "  born: {role: insensitive}\n"
        "  seen: {role: insensitive}\n"
        "  visit: {role: insensitive, operator: {name: generalize, date: month}}\n"
        "  score: {role: insensitive}\n"
    )
    out = tmp_path / "release"
    rc = main(["anonymize", str(p), "--policy", str(policy), "--out", str(out)])
    assert rc == 0, capsys.readouterr().err
    rel = out / "d.csv"
    assert _column(rel, "born") == _column(p, "born")
    assert _column(rel, "seen") == _column(p, "seen")
    # a date-truncation operator writes its documented ISO 8601 form (YYYY-MM for months)
    expected = [
        pd.to_datetime(v, format="%m/%d/%Y %H:%M").strftime("%Y-%m") for v in _column(p, "visit")
    ]
    assert _column(rel, "visit") == expected


def test_values_the_format_cannot_hold_are_written_iso(tmp_path: Path) -> None:
    s = pd.Series(pd.to_datetime(["2020-01-02 03:04:05", "2021-05-06 07:08:09"]))
    assert dates_as_text(s, "%d/%m/%Y %H:%M") is None  # seconds would be lost
    assert dates_as_text(s, "%d/%m/%Y %H:%M:%S").tolist() == [
        "02/01/2020 03:04:05",
        "06/05/2021 07:08:09",
    ]
    old = pd.Series(pd.to_datetime(["1950-03-04"]))
    assert dates_as_text(old, "%d/%m/%y") is None  # '50' would read back as 2050
    df = pd.DataFrame({"t": s})
    df.attrs["veil_source"] = SourceFormat(
        "", "csv", date_formats={"t": "%d/%m/%Y %H:%M"}
    ).to_dict()
    write(df, tmp_path / "o.csv")
    assert _column(tmp_path / "o.csv", "t") == ["2020-01-02 03:04:05", "2021-05-06 07:08:09"]


def test_format_dates_matches_strftime() -> None:
    rng = np.random.default_rng(0)
    idx = pd.DatetimeIndex(
        pd.Timestamp("1901-01-01") + pd.to_timedelta(rng.integers(0, 2 * 10**9, 500), unit="s")
    )
    for fmt in ("%Y-%m-%d %H:%M:%S", "%d %b %Y", "%B %d, %Y", "%m/%d/%y %I:%M %p", "%d.%m.%Y"):
        assert format_dates(idx, fmt).tolist() == list(idx.strftime(fmt)), fmt


def test_text_format_prefers_the_spelling_of_the_source() -> None:
    s = pd.Series(["1/2/2013", "11/12/2014", "3/30/2015"])
    parsed = pd.to_datetime(s, format="%m/%d/%Y")
    assert text_format(s, parsed, "%m/%d/%Y") == "%-m/%-d/%Y"
    padded = pd.Series(["01/02/2013", "11/12/2014"])
    assert text_format(padded, pd.to_datetime(padded, format="%m/%d/%Y"), "%m/%d/%Y") == (
        "%m/%d/%Y"
    )
