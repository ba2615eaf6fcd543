"""Quantiles over public candidates from SQL: ``plan_sql(candidates=)``, ``PrivateFrame.sql``
and ``veil query --candidates``.

The SQL front end must give exactly the frame's ``Agg(..., candidates=...)`` release (same
seed, same draws: the law itself is tested in ``test_quantile_listed_frame.py``), refuse
candidates it would not use and malformed lists before any budget is spent.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import veil.dp as dp
from veil.cli.main import main
from veil.dp.frame import PrivateFrame
from veil.dp.frame._spec import Agg
from veil.dp.sql import plan_sql
from veil.errors import ConfigError

pytestmark = pytest.mark.filterwarnings("ignore::veil.errors.InsecureRandomWarning")

CANDS = [0.0, 10.0, 20.0, 30.0, 40.0, 50.0]


def _df(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"g": rng.choice(["a", "b"], 300), "x": rng.uniform(0, 50, 300)})


def _frame(seed: int, acc: object = False) -> PrivateFrame:
    return PrivateFrame(_df(), accountant=acc, bounds={"x": (0.0, 50.0)}, random_state=seed)


@pytest.mark.parametrize("seed", range(5))
def test_sql_release_is_the_frames_listed_release(seed: int) -> None:
    sql = "SELECT g, MEDIAN(x) AS m, QUANTILE(x, 0.9) AS p90 FROM data GROUP BY g"
    ours = plan_sql(
        _frame(seed), sql, epsilon=1.0, keys={"g": ["a", "b"]}, candidates={"x": CANDS}
    ).execute()
    ref = (
        _frame(seed)
        .groupby("g", keys=["a", "b"])
        .plan(
            epsilon=1.0,
            m=Agg("median", "x", candidates=CANDS),
            p90=Agg("quantile", "x", q=0.9, candidates=CANDS),
        )
        .execute()
    )
    assert ours["m"].tolist() == ref["m"].tolist()
    assert ours["p90"].tolist() == ref["p90"].tolist()
    assert set(ours["m"]) | set(ours["p90"]) <= set(CANDS)


def test_frame_sql_passes_candidates_and_releases_listed_values() -> None:
    out = [
        _frame(s).sql("SELECT MEDIAN(x) AS m FROM data", epsilon=0.02, candidates={"x": CANDS})
        for s in range(30)
    ]
    values = {float(o["m"].iloc[0]) for o in out}
    assert values <= set(CANDS)
    assert len(values) >= 2  # a random choice among the candidates, not one fixed value


def test_unused_or_bad_candidates_are_refused_before_the_charge() -> None:
    acc = dp.BudgetAccountant(epsilon=1.0)
    pf = _frame(1, acc)
    with pytest.raises(ConfigError, match="no MEDIAN or QUANTILE"):
        pf.sql("SELECT AVG(x) FROM data", epsilon=0.5, candidates={"x": CANDS})
    with pytest.raises(ConfigError):  # outside the bounds (0, 50)
        pf.sql("SELECT MEDIAN(x) FROM data", epsilon=0.5, candidates={"x": [10.0, 80.0]})
    assert acc.spent_budget == []


def _csv(tmp_path: Path) -> Path:
    path = tmp_path / "d.csv"
    _df().to_csv(path, index=False)
    return path


def test_cli_candidates_grid(tmp_path: Path) -> None:
    path, out = _csv(tmp_path), tmp_path / "o.csv"
    rc = main(
        ["query", str(path), "SELECT g, MEDIAN(x) AS m FROM data GROUP BY g", "--epsilon", "1",
         "--bounds", "x=0:50", "--candidates", "x=0:50:0.5", "--keys", "g=a,b", "--seed", "2",
         "--out", str(out)]
    )  # fmt: skip
    assert rc == 0
    released = pd.read_csv(out)["m"].tolist()
    grid = {round(0.5 * i, 1) for i in range(101)}
    assert len(released) == 2 and all(v in grid for v in released)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("x=0:50", "expected LOW:HIGH:STEP or v1,v2,..."),
        ("x=50:0:1", "LOW <= HIGH and STEP > 0"),
        ("x=0:1e300:1e-300", "more than 1048576 candidates"),
        ("x=1,a", "'a' is not a number"),
        ("x=", "expected COLUMN=LOW:HIGH:STEP"),
    ],
)
def test_cli_bad_candidates_one_line_exit_2(
    tmp_path: Path, capsys, spec: str, message: str
) -> None:
    path = _csv(tmp_path)
    rc = main(
        ["query", str(path), "SELECT MEDIAN(x) FROM data", "--epsilon", "1", "--bounds", "x=0:50",
         "--candidates", spec]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert rc == 2 and message in err and len(err.strip().splitlines()) == 1
