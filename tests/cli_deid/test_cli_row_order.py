"""The written release of a k-anonymous run does not keep the input's row order.

Sweeney (2002, "k-anonymity: a model for protecting privacy", section 4, *unsorted matching
attack*): tuples released in the order of the input let whoever knows that order (a file
sorted by name, id or admission date; another release of the same input) link each released
record to its person by position alone, whatever the generalization.  The remedy is to
release the rows in a random order: ``privacy.row_order: random``.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from veil.cli.main import main

N = 60


def _run(
    tmp_path: Path, name: str, seed: str | None = None, shuffle: bool = True
) -> tuple[pd.DataFrame, pd.DataFrame]:
    src = tmp_path / "t.csv"
    # sorted by the (secret) name: the attacker knows the order of the input
    df = pd.DataFrame(
        {
            "name": [f"person{i:03d}" for i in range(N)],
            "age": [20 + (7 * i) % 50 for i in range(N)],
            "s": [f"s{i:03d}" for i in range(N)],  # one sensitive value per person
        }
    )
    df.to_csv(src, index=False)
    pol = tmp_path / "p.yaml"
    pol.write_text(
        "version: 1\ncolumns:\n"
        "  name: {role: identifier, operator: drop}\n"
        "  age: {role: quasi, operator: {name: generalize, bins: [0, 40, 100]}}\n"
        "  s: {role: sensitive}\n"
        f"privacy:\n  k: 5\n{'  row_order: random' if shuffle else ''}\n"
    )
    out = tmp_path / name
    argv = ["anonymize", str(src), "--policy", str(pol), "--out", str(out)]
    assert main([*argv, *(["--seed", seed] if seed else [])]) == 0
    return df, pd.read_csv(out / "t.csv", dtype=str)


def test_k_anonymous_release_rows_are_not_in_input_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the operating system's entropy fixed, so that the test cannot fail by chance (it did with
    # probability 6e-4); test_the_order_is_not_a_function_of_the_seed draws it for real
    monkeypatch.setattr("secrets.randbits", lambda bits: 20261122)
    df, release = _run(tmp_path, "o")
    assert sorted(release["s"]) == sorted(df["s"])  # every record released, values intact
    # by position, the attacker's guess is right for about one record of a random order
    # (Poisson(1): P(>= 6) = 6e-4); in input order it is right for all 60
    hits = int((release["s"].to_numpy() == df["s"].to_numpy()).sum())
    assert hits < 6


@pytest.mark.parametrize("seed", ["1"])
def test_the_order_is_not_a_function_of_the_seed(tmp_path: Path, seed: str) -> None:
    """A seeded order could be replayed by whoever knows the seed (often in the policy)."""
    _, a = _run(tmp_path, "a", seed)
    _, b = _run(tmp_path, "b", seed)
    assert a["s"].tolist() != b["s"].tolist()  # equal with probability 1/60!
    assert sorted(a["s"]) == sorted(b["s"])


def test_default_keeps_the_input_order(tmp_path: Path) -> None:
    """Documented: without ``row_order: random`` the release keeps the input's order."""
    df, release = _run(tmp_path, "o", shuffle=False)
    assert release["s"].tolist() == df["s"].tolist()
