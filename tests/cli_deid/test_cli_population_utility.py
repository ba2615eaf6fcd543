"""`veil anonymize` with the policy keys privacy.population (k-map, journalist risk) and
privacy.utility_target (classification utility in the report)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from veil.cli.main import main

pytest.importorskip("veil.anonymity._policy_bridge")

G_HIER = "{A: ['*'], B: ['*'], C: ['*'], D: ['*']}"


def _policy(folder: Path, privacy: str, extra_cols: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    pol = folder / "policy.yaml"
    pol.write_text(
        "version: 1\ndefault_role: insensitive\ncolumns:\n"
        f"  g: {{role: quasi, hierarchy: {G_HIER}}}\n{extra_cols}privacy:\n{privacy}"
    )
    return pol


def _run(src: Path, pol: Path, out: Path) -> int:
    return main(["anonymize", str(src), "--policy", str(pol), "--out", str(out)])


def test_population_kmap_and_journalist_risk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sample A, B, C x 10; population A x 40, B x 6, C x 100, D x 5.  k=8: k-anonymity holds
    on the original, k-map does not for B (6 people), so B's 10 records are suppressed."""
    src = tmp_path / "t.csv"
    pd.DataFrame({"g": ["A"] * 10 + ["B"] * 10 + ["C"] * 10, "v": range(30)}).to_csv(
        src, index=False
    )
    folder = tmp_path / "pol"
    (folder / "data").mkdir(parents=True)
    pop = pd.DataFrame({"g": ["A"] * 40 + ["B"] * 6 + ["C"] * 100 + ["D"] * 5})
    pop.to_csv(folder / "data" / "pop.csv", index=False)
    pol = _policy(
        folder,
        "  k: 8\n  suppression_limit: 0.4\n  algorithm: optimal\n  population: data/pop.csv\n",
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # the relative path is resolved against the policy's folder
    out = tmp_path / "o"
    assert _run(src, pol, out) == 0
    rep = json.loads((out / "report.json").read_text())
    a = rep["anonymity"]
    assert any(m["model"] == "k-map" and m["k"] == 8 for m in a["models"])
    assert a["node"] == {"g": 0} and a["suppressed"] == 10
    assert a["suppression"]["by_model"]["k-map(k=8, population_rows=151)"] == 10
    assert a["suppression"]["by_model"]["k-anonymity(k=8)"] == 0
    release = pd.read_csv(out / "t.csv")
    assert set(release["g"]) == {"A", "C"}
    # journalist risk: 1 / population size of the record's class (a class is never smaller
    # in the population than in the sample: B counts max(6, 10) people)
    counts = pop["g"].value_counts()
    assert a["risk_before"]["journalist"]["highest"] == pytest.approx(1 / max(counts["B"], 10))
    assert a["risk_before"]["journalist"]["average"] == pytest.approx(
        (10 / 40 + 10 / 10 + 10 / 100) / 30
    )
    assert a["risk_after"]["journalist"]["highest"] == pytest.approx(1 / counts["A"])
    html = (out / "report.html").read_text()
    assert "journalist risk: highest" in html


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (None, "file not found"),
        (pd.DataFrame({"h": ["A"] * 20}), "lacks quasi-identifier column(s) 'g'"),
    ],
)
def test_population_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make: pd.DataFrame | None, message: str
) -> None:
    src = tmp_path / "t.csv"
    pd.DataFrame({"g": ["A"] * 10 + ["B"] * 10}).to_csv(src, index=False)
    if make is not None:
        make.to_csv(tmp_path / "pop.csv", index=False)
    pol = _policy(tmp_path, "  k: 5\n  algorithm: optimal\n  population: pop.csv\n")
    out = tmp_path / "o"
    assert _run(src, pol, out) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def _utility_table(path: Path) -> None:
    # y is a function of g: the original predicts it exactly; k=25 forces g to '*'
    df = pd.DataFrame(
        {
            "g": ["A"] * 20 + ["B"] * 20 + ["C"] * 12,
            "y": ["yes"] * 20 + ["no"] * 32,
            "s": ["x"] * 52,
        }
    )
    df.to_csv(path, index=False)


def _anonymize_utility_table(tmp_path: Path, extra: str) -> tuple[dict, str]:
    """Run `veil anonymize` (k=25, optimal) on the utility table: report's anonymity, HTML."""
    src = tmp_path / "t.csv"
    _utility_table(src)
    pol = _policy(tmp_path, "  k: 25\n  algorithm: optimal\n" + extra)
    out = tmp_path / "o"
    assert _run(src, pol, out) == 0
    a = json.loads((out / "report.json").read_text())["anonymity"]
    return a, (out / "report.html").read_text()


def test_utility_target_in_report(tmp_path: Path) -> None:
    a, html = _anonymize_utility_table(tmp_path, "  utility_target: y\n")
    assert a["node"] == {"g": 1}
    cu = a["classification_utility"]
    assert cu["target"] == "y"
    assert cu["original_accuracy"] == 1.0  # y is determined by g
    # every g is '*' in the release: the model can only predict the majority class
    assert cu["release_accuracy"] == pytest.approx(cu["baseline_accuracy"])
    assert cu["baseline_accuracy"] < 1.0
    assert 'class="classification"' in html and "majority-class baseline" in html


def test_utility_target_off_by_default(tmp_path: Path) -> None:
    a, html = _anonymize_utility_table(tmp_path, "")
    assert "classification_utility" not in a
    assert 'class="classification"' not in html


@pytest.mark.parametrize(
    ("target", "message"), [("g", "is a quasi-identifier"), ("nope", "is not in the table")]
)
def test_utility_target_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str, message: str
) -> None:
    src = tmp_path / "t.csv"
    _utility_table(src)
    pol = _policy(tmp_path, f"  k: 25\n  algorithm: optimal\n  utility_target: {target}\n")
    out = tmp_path / "o"
    assert _run(src, pol, out) == 2
    err = capsys.readouterr().err
    assert message in err and "utility_target" in err
    assert not out.exists()
