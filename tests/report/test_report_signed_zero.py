"""The report shows the release as written: no ``-0.0`` where the CSV has ``0``.

A negative value rounded (or noised, coded) to zero is ``-0.0`` in memory; the writer prints
it as ``0`` (``veil.io._signed_zero``), so the release does not tell which zeros came from
negative values.  The report travels with the release and must not tell it either.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from veil.cli.main import main
from veil.deid import Policy
from veil.report import build_report


def _neg_zero_labels(report: dict) -> list[str]:
    return [
        str(lab)
        for d in report["distributions"].values()
        for part in (d["original"], d["release"])
        if part is not None
        for lab in part.get("labels", [])
        if re.fullmatch(r"-0(\.0+)?", str(lab))
    ] + [
        "edge"
        for d in report["distributions"].values()
        if d["release"] is not None
        for e in d["release"].get("edges", [])
        if e == 0 and np.signbit(e)
    ]


def test_build_report_has_no_negative_zero_from_the_release() -> None:
    df = pd.DataFrame({"income": [-400.0, 300.0, 2600.0, 3100.0], "g": list("aabb")})
    release = df.assign(income=np.rint(df["income"] / 1000) * 1000)  # -400 -> -0.0
    assert np.signbit(release["income"].iloc[0])  # the attack's premise
    pol = Policy.from_dict({"columns": {"income": "sensitive", "g": "quasi"}})
    report = build_report(df, release, pol, pol.roles_for(df), suppression={})
    assert _neg_zero_labels(report) == []
    # the release itself is not changed by the report
    assert np.signbit(release["income"].iloc[0])


def test_anonymize_report_does_not_tell_which_zero_was_negative(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VEIL_KEY", raising=False)
    src = tmp_path / "in.csv"
    # the one negative income rounds to -0.0; every other zero of the release is +0.0
    src.write_text(
        "g,income\n"
        + "".join(f"{'ab'[i % 2]},{v}\n" for i, v in enumerate([-5.5, 200.5, 300.25, 2400.75]))
    )
    pol = tmp_path / "p.yaml"
    pol.write_text(
        yaml.safe_dump(
            {
                "columns": {
                    "g": {"role": "quasi"},
                    "income": {"role": "sensitive", "operator": {"name": "round", "base": 1000}},
                }
            }
        )
    )
    out = tmp_path / "out"
    assert main(["anonymize", str(src), "--policy", str(pol), "--out", str(out)]) == 0
    written = (out / "in.csv").read_text()
    assert "-0" not in written  # the writer hides the sign
    report_json = (out / "report.json").read_text()
    html = (out / "report.html").read_text()
    assert not re.search(r"-0(\.0+)?(?![\d.])", report_json)
    assert not re.search(r"-0(\.0+)?(?![\d.])", re.sub(r"data:[^\"']+", "", html))
