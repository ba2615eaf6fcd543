"""A choice setting means what the schema accepted it as.

The schema accepts a choice in any case, with spaces around it and ``-`` for ``_``
(``row_order: Random``), but the CLI compared ``privacy.row_order`` with ``"random"`` as
written: ``Random`` validated and the rows were written in the input's order, which the
setting exists to hide (Sweeney's unsorted matching attack), without any error.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from veil.cli.main import main
from veil.deid import Policy

N = 60


@pytest.mark.parametrize("written", ["Random", " random ", "RANDOM"])
def test_row_order_random_in_any_case_shuffles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, written: str
) -> None:
    monkeypatch.setattr("secrets.randbits", lambda bits: 20261122)  # no failure by chance
    df = pd.DataFrame(
        {
            "age": [20 + (7 * i) % 50 for i in range(N)],
            "s": [f"s{i:03d}" for i in range(N)],  # one sensitive value per person
        }
    )
    src, pol, out = tmp_path / "t.csv", tmp_path / "p.yaml", tmp_path / "o"
    df.to_csv(src, index=False)
    pol.write_text(
        "version: 1\ncolumns:\n"
        "  age: {role: quasi, operator: {name: generalize, bins: [0, 40, 100]}}\n"
        "  s: {role: sensitive}\n"
        f"privacy:\n  k: 5\n  row_order: '{written}'\n"
    )
    assert main(["anonymize", str(src), "--policy", str(pol), "--out", str(out)]) == 0
    release = pd.read_csv(out / "t.csv", dtype=str)
    assert sorted(release["s"]) == sorted(df["s"])
    # in input order all 60 positions match; in a random order about one (P(>= 6) = 6e-4)
    assert int((release["s"].to_numpy() == df["s"].to_numpy()).sum()) < 6


def test_choice_settings_are_read_as_validated() -> None:
    p = Policy.from_dict(
        {
            "columns": {"a": "quasi", "s": "sensitive"},
            "privacy": {
                "k": 2,
                "algorithm": " Mondrian",
                "suppressed": "MASK ",
                "row_order": "Random",
                "l": {"column": "s", "l": 2, "variant": "Entropy"},
                "t": {"column": "s", "t": 0.5, "distance": " Ordered"},
            },
        }
    )
    assert p.privacy is not None
    assert p.privacy.algorithm == "mondrian"
    raw = p.privacy.raw
    assert (raw["suppressed"], raw["row_order"]) == ("mask", "random")
    assert p.privacy.l is not None and p.privacy.l["variant"] == "entropy"
    assert p.privacy.t is not None and p.privacy.t["distance"] == "ordered"
