"""The leave-one-out attack example runs and shows what each release scheme leaks."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load():
    spec = importlib.util.spec_from_file_location("loo_attack", ROOT / "examples" / "loo_attack.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_exact_loo_means_reconstruct_every_height() -> None:
    la = _load()
    x = la.load_heights()
    assert x.size == 58 and not np.isnan(x).any()  # 60 participants, 2 'n/a'
    mean, loo = la.loo_release(x)
    recon = la.reconstruct(np.array(mean), loo, x.size)
    np.testing.assert_allclose(recon, x, rtol=0, atol=1e-9)
    assert np.array_equal(np.round(recon, 2), x)  # heights are recorded to 0.01


@pytest.mark.filterwarnings("ignore::veil.errors.InsecureRandomWarning")
def test_monte_carlo_attack_errors(tmp_path: Path, capsys) -> None:
    la = _load()
    figures, res = la.run(["--out", str(tmp_path), "--runs", "1000", "--seed", "3"])
    assert set(figures) == {"rmse", "reconstruction"}
    assert (tmp_path / "loo_attack_rmse.png").stat().st_size > 10_000
    assert (tmp_path / "loo_attack_reconstruction.png").is_file()
    sd = res["sd"]
    exact, adhoc, dp = res["exact"][0], res["ad hoc"][0], res["DP"][0]
    assert exact.max() < 1e-9  # (a) exact reconstruction
    assert adhoc[-1] < 0.15 * sd  # (b) averaging 1,000 releases defeats the ad hoc noise
    assert adhoc[0] > 0.5 * sd  # ... although one release looked safe
    assert 0.9 * sd < dp.min() and dp.max() < 1.1 * sd  # (c) no better than guessing the mean
    assert res["DP epsilon spent"] == pytest.approx(1.0, rel=1e-6)
    assert "figures in" in capsys.readouterr().out
