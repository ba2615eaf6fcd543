"""``COLUMN:VALUE`` parameters of ``check`` / ``veil check`` written in any number notation."""

from __future__ import annotations

import pandas as pd
import pytest

from veil.anonymity import check
from veil.cli.main import main
from veil.errors import ConfigError


def _emd_equal(df: pd.DataFrame) -> float:
    """Largest equal-distance EMD (total variation) between a class and the whole table."""
    glob = df["y"].value_counts(normalize=True)
    worst = 0.0
    for _, part in df.groupby("q"):
        local = part["y"].value_counts(normalize=True).reindex(glob.index, fill_value=0)
        worst = max(worst, float((local - glob).abs().sum() / 2))
    return worst


def test_t_in_scientific_notation(tmp_path, capsys) -> None:
    df = pd.DataFrame({"q": [1, 1, 1, 2, 2, 2], "y": list("aabbba")})
    worst = _emd_equal(df)  # 1/6
    for text, holds in (("2e-1", worst <= 0.2), ("1E-1", worst <= 0.1), ("0.2", True)):
        assert check(df, ["q"], t=f"y:{text}").holds is holds
        p = tmp_path / "t.csv"
        df.to_csv(p, index=False)
        assert main(["check", str(p), "--qi", "q", "--t", f"y:{text}"]) == (0 if holds else 1)
    capsys.readouterr()
    for bad in ("y:nan", "y:inf", "y:x"):
        with pytest.raises(ConfigError):
            check(df, ["q"], t=bad)
