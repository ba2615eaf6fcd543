"""The private-ML example runs end to end on the bundled insurance table."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "private_ml.py"


def test_private_ml_example(capsys):
    spec = importlib.util.spec_from_file_location("private_ml", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = mod.main(["--seed", "7"])
    assert out["budget_spent"] == pytest.approx(2.0)  # 0.5 (NB) + 0.5 (KMeans) + 1.0 (pipeline)
    assert 0.0 <= out["nb_accuracy"] <= 1.0 and 0.0 <= out["rf_accuracy"] <= 1.0
    assert out["kmeans_inertia_raw"] >= 0 and out["kmeans_inertia_scaled_pca"] >= 0
    assert out["onehot_columns"] > 80
    assert out["rf_data_bounds_warned"] == 1.0
    assert "tree 10/10 built" in capsys.readouterr().err
