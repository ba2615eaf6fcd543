"""The input table is always called ``data``: any other table name is refused, before any noise."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from veil.cli.main import main
from veil.dp.sql import parse
from veil.errors import ConfigError


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT COUNT(*) FROM other",
        "SELECT COUNT(*) FROM people WHERE age > 3",
        'SELECT COUNT(*) FROM "Data"',  # quoted names are exact
        "SELECT COUNT(*) FROM data_2",
    ],
)
def test_other_table_names_are_not_supported(sql: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse(sql)
    msg = str(err.value)
    assert "not supported" in msg and "always called data" in msg, msg
    table = sql.split("FROM ")[1].split()[0].strip('"')
    assert repr(table) in msg
    assert f"at position {sql.index('FROM ') + 5}" in msg


@pytest.mark.parametrize("name", ["data", "DATA", "Data", '"data"'])
def test_data_in_any_case_or_quoted(name: str) -> None:
    assert parse(f"SELECT COUNT(*) FROM {name}").table.lower() == "data"


def test_cli_refuses_other_table(tmp_path: Path, capsys) -> None:
    path = tmp_path / "in.csv"
    pd.DataFrame({"age": [20, 30, 40]}).to_csv(path, index=False)
    out = tmp_path / "res.csv"
    rc = main(
        ["query", str(path), "SELECT COUNT(*) FROM other", "--epsilon", "1", "--out", str(out)]
    )
    err = capsys.readouterr()
    assert rc == 2
    assert "not supported: table 'other'" in err.err and "Traceback" not in err.err
    assert err.out == "" and not out.exists()
