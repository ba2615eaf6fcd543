"""`veil anonymize`: the post-run target check agrees with the engine (masked suppressed
records, the t-closeness reference distribution)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from veil.cli.main import main

pytest.importorskip("veil.anonymity._policy_bridge")

G_HIER = "{A: ['*'], B: ['*'], C: ['*']}"


def _run(tmp_path: Path, df: pd.DataFrame, privacy: str, sensitive: bool = False) -> tuple:
    src = tmp_path / "t.csv"
    df.to_csv(src, index=False)
    cols = f"columns:\n  g: {{role: quasi, hierarchy: {G_HIER}}}\n"
    if sensitive:
        cols += "  s: {role: sensitive}\n"
    pol = tmp_path / "policy.yaml"
    pol.write_text(f"version: 1\ndefault_role: insensitive\n{cols}privacy:\n{privacy}")
    out = tmp_path / "o"
    rc = main(["anonymize", str(src), "--policy", str(pol), "--out", str(out)])
    return rc, out


@pytest.mark.parametrize("mode", ["mask", "drop"])
def test_masked_suppressed_records_are_not_a_class(
    tmp_path: Path, mode: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Classes A=10, B=10, C=2 with k=5: C (2 records, under the 10% limit) is suppressed.
    With ``suppressed: mask`` its two all-'*' rows must not be checked as a class of 2."""
    df = pd.DataFrame({"g": ["A"] * 10 + ["B"] * 10 + ["C"] * 2, "v": range(22)})
    privacy = f"  k: 5\n  suppression_limit: 0.1\n  algorithm: optimal\n  suppressed: {mode}\n"
    rc, out = _run(tmp_path, df, privacy)
    assert rc == 0, capsys.readouterr().err
    release = pd.read_csv(out / "t.csv", dtype=str)
    report = json.loads((out / "report.json").read_text())
    targets = report["targets"]
    assert targets["k"]["met"] and targets["k"]["achieved"] == 10
    # masked or dropped, the two records count as suppressed against the 10% limit
    assert targets["suppression_limit"]["achieved"] == pytest.approx(2 / 22)
    if mode == "mask":
        assert len(release) == 22 and (release["g"] == "*").sum() == 2
    else:
        assert len(release) == 20 and set(release["g"]) == {"A", "B"}


def test_masked_rows_over_the_limit_still_fail() -> None:
    """The check still counts masked rows against the suppression limit: a release whose
    masked share is over the limit is reported as not met."""
    from types import SimpleNamespace as NS

    import numpy as np

    from veil.deid._targets import verify_targets

    rel = pd.DataFrame({"g": ["A"] * 10 + ["*"] * 2})
    mask = np.r_[np.zeros(10, bool), np.ones(2, bool)]
    t = NS(k=5, l=None, t=None, suppression_limit=0.1)
    r = verify_targets(rel, ["g"], t, input_records=12, suppressed=mask)
    assert r["k"]["met"] and not r["suppression_limit"]["met"] and not r["all_met"]
    assert not verify_targets(rel, ["g"], t, input_records=12)["k"]["met"]


def test_t_closeness_reference_is_the_whole_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A = 18 x + 2 y, B = 5 y, C = 4 y; k=5 suppresses C.  Against the whole input
    (x: 18/29) B's distance is 18/29 = 0.62 <= 0.65; against the release without C
    (x: 18/25) it would be 0.72.  The engine and the check must use the same reference."""
    from veil.anonymity import anonymize
    from veil.anonymity._policy_bridge import config_from_policy
    from veil.deid import Policy

    df = pd.DataFrame({"g": ["A"] * 20 + ["B"] * 5 + ["C"] * 4, "s": ["x"] * 18 + ["y"] * 11})
    privacy = "  k: 5\n  t: {column: s, t: 0.65}\n  suppression_limit: 0.15\n  algorithm: optimal\n"
    rc, out = _run(tmp_path, df, privacy, sensitive=True)
    assert rc == 0, capsys.readouterr().err
    targets = json.loads((out / "report.json").read_text())["targets"]
    # met at 0.65 only against the whole input (18/29 = 0.62; 0.72 without C); the value
    # itself is withheld because C was suppressed (it would reveal C's sensitive values)
    assert targets["t"]["met"] is True and targets["t"]["achieved"] is None
    # the engine's own measure agrees
    pol = Policy.from_yaml(tmp_path / "policy.yaml")
    res = anonymize(df, config_from_policy(df, pol))
    assert res.n_suppressed == 4 and res.node == {"g": 0}


def test_ordered_categorical_t_check_uses_the_category_order() -> None:
    """The engine orders an ordered Categorical by its categories; the post-run check must
    measure the same ordered distance (text order would put 'high' < 'low' < 'mid')."""
    import numpy as np

    from veil.deid import apply
    from veil.deid._targets import _class_value_counts

    s = pd.Categorical(
        ["low"] * 3 + ["mid"] * 3 + ["high"] * 4, categories=["low", "mid", "high"], ordered=True
    )
    counts, q = _class_value_counts(np.zeros(10, dtype=np.int64), pd.Series(s))
    np.testing.assert_array_equal(counts[0], [3, 3, 4])  # low, mid, high: category order
    assert q.tolist() == pytest.approx([0.3, 0.3, 0.4])
    # end to end: A (mostly low) and B (mostly high) break t = 0.12 and are suppressed; C and D
    # are 0.095 from the table in category order but 0.152 in text order
    counts = {"A": (45, 3, 2), "B": (2, 3, 45), "C": (16, 22, 12), "D": (16, 22, 12)}
    g, levels = [], []
    for key, (lo, mid, hi) in counts.items():
        g += [key] * 50
        levels += ["low"] * lo + ["mid"] * mid + ["high"] * hi
    df = pd.DataFrame(
        {"g": g, "s": pd.Categorical(levels, categories=["low", "mid", "high"], ordered=True)}
    )
    policy = {
        "version": 1,
        "default_role": "insensitive",
        "columns": {
            "g": {"role": "quasi", "hierarchy": {"A": ["*"], "B": ["*"], "C": ["*"], "D": ["*"]}},
            "s": {"role": "sensitive"},
        },
        "privacy": {
            "k": 2,
            "t": {"column": "s", "t": 0.12, "distance": "ordered"},
            "suppression_limit": 0.6,
            "algorithm": "optimal",
        },
    }
    release, report = apply(df, policy)
    assert sorted(set(release["g"])) == ["C", "D"]  # the engine kept C and D
    t = report["targets"]["t"]
    # met at 0.12 only in category order (0.095; text order gives 0.152); the value is
    # withheld since A and B were suppressed
    assert t["met"] is True and t["achieved"] is None


def test_suppression_share_has_the_engines_base(tmp_path: Path) -> None:
    """The suppression limit applies to the records the engine is given (ARX's convention,
    and the engine's): with records removed first by a ``suppress`` condition, the target's
    achieved share must be the engine's suppressed / engine input, not / the whole file."""
    df = pd.DataFrame(
        {"g": ["A"] * 10 + ["B"] * 10 + ["C"] * 2 + ["A"] * 18, "v": [0] * 22 + [1] * 18}
    )
    privacy = "  k: 5\n  suppression_limit: 0.1\n  algorithm: optimal\n"
    src = tmp_path / "t.csv"
    df.to_csv(src, index=False)
    pol = tmp_path / "policy.yaml"
    pol.write_text(
        "version: 1\ndefault_role: insensitive\ncolumns:\n"
        f"  g: {{role: quasi, hierarchy: {G_HIER}}}\nsuppress: ['v == 1']\nprivacy:\n{privacy}"
    )
    out = tmp_path / "o"
    assert main(["anonymize", str(src), "--policy", str(pol), "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["suppression"]["records_removed_by_conditions"] == 18
    assert report["anonymity"]["records"] == 22 and report["anonymity"]["suppressed"] == 2
    achieved = report["targets"]["suppression_limit"]["achieved"]
    assert achieved == pytest.approx(2 / 22) == report["anonymity"]["suppressed_share"]
