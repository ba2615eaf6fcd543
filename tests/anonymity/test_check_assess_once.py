"""check() computes a t-closeness distance (and an entropy) once per model.

It asked ``violating`` and then ``achieved``, each computing every class's EMD (entropy) from
the counts.  The report must be the one the two methods give separately, and a subclass that
changes either method must still be asked it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import veil.anonymity._models as models_mod
import veil.anonymity._tcloseness as tclose_mod
from veil.anonymity import EntropyLDiversity, TCloseness, check


def _table(seed: int, n: int = 400) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"q": rng.integers(0, 12, n), "y": rng.integers(0, 6, n)})


@pytest.mark.parametrize("distance", ["equal", "ordered"])
def test_check_computes_the_distances_once(monkeypatch, distance: str) -> None:
    calls = []
    real = tclose_mod.emd

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(tclose_mod, "emd", counting)
    check(_table(0), ["q"], models=[TCloseness("y", 0.2, distance=distance)])
    assert len(calls) == 1


def test_check_computes_the_entropies_once(monkeypatch) -> None:
    calls = []
    real = models_mod._entropy

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(models_mod, "_entropy", counting)
    check(_table(1), ["q"], models=[EntropyLDiversity("y", 4.5)])
    assert len(calls) == 1


@pytest.mark.parametrize("seed", range(6))
def test_the_report_is_what_violating_and_achieved_give(seed: int) -> None:
    from veil.anonymity._stats import ClassStats, encode_sensitive

    df = _table(seed)
    codes, _ = pd.factorize(df["q"])
    stats = ClassStats.from_codes(codes, sensitive={"y": encode_sensitive(df["y"], "y")})
    for model in (
        TCloseness("y", 0.15),
        TCloseness("y", 0.1, distance="ordered"),
        EntropyLDiversity("y", 4.8),
    ):
        v, achieved = model.assess(stats)
        assert v.tolist() == model.violating(stats).tolist()
        assert achieved == model.achieved(stats)  # the same figure, exactly
        rep = check(df, ["q"], models=[model]).models[0]  # its classes in its own order
        assert rep["achieved"] == pytest.approx(achieved, rel=1e-12)
        assert rep["violating_classes"] == int(v.sum())
        assert rep["violating_records"] == int(stats.sizes[v].sum())


def test_a_subclass_that_changes_violating_is_still_asked() -> None:
    class NoClassBeyondHalf(TCloseness):
        def violating(self, stats):  # a made-up stricter rule: every class violates
            return np.ones(stats.n_classes, dtype=bool)

    class ReportsZero(EntropyLDiversity):
        def achieved(self, stats):
            return 0.0

    df = _table(2)
    assert check(df, ["q"], models=[TCloseness("y", 1.0)]).holds
    r = check(df, ["q"], models=[NoClassBeyondHalf("y", 1.0)])
    assert not r.holds and r.models[0]["violating_classes"] == df["q"].nunique()
    assert check(df, ["q"], models=[ReportsZero("y", 1.0)]).models[0]["achieved"] == 0.0
