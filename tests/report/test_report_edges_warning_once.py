"""The warning that an operator's edges (bin counts, percentile codes) come from the data
is given once per column and call, also when the privacy engine then suppresses records (its
"fitted on N records" note is folded into that one warning instead of repeating it)."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

from veil.cli.main import main
from veil.deid import apply

OPS = [
    {"name": "generalize", "bins": 3},
    {"name": "top_bottom_code", "top_percentile": 100},
]


def _policy(op: dict, k: int) -> dict:
    return {
        "version": 1,
        "default_role": "insensitive",
        "columns": {
            "g": {"role": "quasi", "hierarchy": {"A": ["*"], "B": ["*"], "C": ["*"]}},
            "inc": {"role": "insensitive", "operator": op},
        },
        "privacy": {"k": k, "suppression_limit": 0.2, "algorithm": "optimal"},
    }


DF = pd.DataFrame(
    {"g": ["A"] * 4 + ["B"] * 4 + ["C"], "inc": [10, 20, 30, 40, 15, 25, 35, 45, 98765]}
)


def _about_inc(messages: list[str]) -> list[str]:
    return [m for m in messages if "'inc'" in m]


@pytest.mark.parametrize("op", OPS, ids=["bin-count", "percentile"])
@pytest.mark.parametrize("k", [1, 2], ids=["kept", "suppressed"])
def test_data_derived_edges_warned_once_per_call(op, k, recwarn):
    for _ in range(2):  # each call warns once: nothing carried over between calls
        release, report = apply(DF, _policy(op, k), seed=1)
        assert len(release) == (8 if k == 2 else 9)
        notes = _about_inc(report["warnings"])
        assert len(notes) == 1, notes
        assert "from the data" in notes[0]
        if k == 2:  # the engine's suppression is named in the same warning
            assert f"'{op['name']}'" in notes[0] and "including the 1" in notes[0], notes
        else:
            assert "privacy engine then" not in notes[0]
    assert not [w for w in recwarn if "'inc'" in str(w.message)]


def test_two_data_derived_operators_on_one_column_warn_once_each():
    ops = {"operators": [OPS[1], OPS[0]]}
    policy = _policy(OPS[0], 2)
    policy["columns"]["inc"] = {"role": "insensitive", **ops}
    _, report = apply(DF, policy, seed=1)
    notes = _about_inc(report["warnings"])
    assert len(notes) == 2, notes  # one per operator, each with the engine's note
    assert sum("'generalize'" in n for n in notes) == 1
    assert sum("'top_bottom_code'" in n for n in notes) == 1
    assert all("including the 1" in n for n in notes)


def test_cli_prints_the_edges_warning_once(tmp_path, capsys):
    import yaml

    data = tmp_path / "t.csv"
    DF.to_csv(data, index=False)
    policy = tmp_path / "p.yaml"
    policy.write_text(yaml.safe_dump(_policy(OPS[0], 2)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no Python warning besides the report's lines
        rc = main(["anonymize", str(data), "--policy", str(policy), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc == 0, err
    lines = [ln for ln in err.splitlines() if ln.startswith("veil: warning:") and "'inc'" in ln]
    assert len(lines) == 1, err
