"""A released Categorical column carries no category that no released record holds.

Parquet stores a pandas Categorical as a dictionary of *all* its categories.  A record removed
by a ``suppress`` condition (or by the privacy engine), or a quasi-identifier masked to ``*``,
left its value in that dictionary: the written release still named the removed patient's
diagnosis, which no released cell shows.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import yaml

from veil.cli.main import main
from veil.deid import apply

SECRET = "HIV-secret-dx"


def _frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "name": ["Ann", "Bob", "Cy", "Dee"],
            "diag": pd.Categorical(["flu", "flu", SECRET, "flu"]),
            "town": pd.Categorical(["Lamu", "Lamu", "Isiolo", "Lamu"]),
        }
    )


POLICY = {
    "columns": {
        "name": {"role": "identifier", "operator": "drop"},
        "diag": {"role": "sensitive"},
        "town": {"role": "insensitive"},
    },
    "suppress": [f"diag == '{SECRET}'"],
}


def test_apply_release_has_no_category_of_a_removed_record() -> None:
    release, _ = apply(_frame(), POLICY)
    assert len(release) == 3
    assert SECRET not in list(release["diag"].cat.categories)
    assert "Isiolo" not in list(release["town"].cat.categories)
    assert release["diag"].tolist() == ["flu"] * 3  # released values unchanged


def test_written_parquet_does_not_hold_a_removed_records_value(tmp_path: Path) -> None:
    src = tmp_path / "in.parquet"
    _frame().to_parquet(src)
    pol = tmp_path / "p.yaml"
    pol.write_text(yaml.safe_dump(POLICY))  # the policy apply() is given above, as YAML
    out = tmp_path / "out"
    assert main(["anonymize", str(src), "--policy", str(pol), "--out", str(out)]) == 0
    written = out / "in.parquet"
    assert SECRET.encode() not in written.read_bytes()
    assert b"Isiolo" not in written.read_bytes()
    back = pq.read_table(written).to_pandas()
    assert back["diag"].astype(str).tolist() == ["flu"] * 3


def test_masked_quasi_identifier_leaves_no_category() -> None:
    """``suppressed: mask`` writes ``*`` over the lone record's town: the town must not stay
    among the categories (the Parquet dictionary) either."""
    df = pd.DataFrame({"town": pd.Categorical(["Lamu"] * 6 + ["Isiolo"]), "s": list(range(7))})
    policy = {
        "columns": {
            "town": {"role": "quasi", "hierarchy": {"Lamu": "Coast", "Isiolo": "North"}},
            "s": "sensitive",
        },
        "privacy": {"k": 2, "algorithm": "optimal", "suppression_limit": 0.2, "suppressed": "mask"},
    }
    release, _ = apply(df, policy)
    assert release["town"].tolist() == ["Lamu"] * 6 + ["*"]  # the premise: one record masked
    assert "Isiolo" not in list(release["town"].cat.categories)
