"""``veil query`` on a table of nobody (a header line, no data rows) answers as on one person.

The reader refused a header-only file ("the table is empty (no data rows)") while the same
file with one person's row released a noisy table: the exit status told whether anybody is in
the table.  ``veil query`` reads with ``empty_ok=True``; other commands still refuse it.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from veil.cli.main import main
from veil.errors import InputError
from veil.io import read

pytestmark = pytest.mark.filterwarnings("ignore::veil.errors.InsecureRandomWarning")

QUERIES = [
    ["SELECT g, COUNT(*) AS n, AVG(v) FROM data GROUP BY g", "--keys", "g=a,b"],
    ["SELECT g, COUNT(*) AS n FROM data GROUP BY g", "--delta", "1e-6"],
    ["SELECT COUNT(*), SUM(v), MEDIAN(v) FROM data WHERE v > 1", "--privacy-unit", "pid"],
]


@pytest.mark.parametrize("query", QUERIES)
def test_nobody_and_one_person_release_the_same_columns(tmp_path: Path, query, capsys) -> None:
    nobody, one = tmp_path / "nobody.csv", tmp_path / "one.csv"
    nobody.write_text("pid,g,v\n")
    one.write_text("pid,g,v\n7,a,3\n")
    results = []
    for path in (nobody, one):
        out = tmp_path / f"{path.stem}.out.csv"
        args = ["query", str(path), query[0], "--epsilon", "1", "--bounds", "v=0:10", *query[1:]]
        rc = main([*args, "--seed", "1", "--out", str(out)])
        capsys.readouterr()
        results.append((rc, list(pd.read_csv(out).columns)))
    assert results[0] == results[1] and results[0][0] == 0


def test_other_readers_still_refuse_a_header_only_table(tmp_path: Path) -> None:
    path = tmp_path / "nobody.csv"
    path.write_text("pid,g,v\n")
    with pytest.raises(InputError, match="no data rows"):
        read(path)
    assert list(read(path, empty_ok=True).columns) == ["pid", "g", "v"]
