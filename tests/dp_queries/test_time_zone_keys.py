"""Time-zone aware timestamps are grouped and released in UTC, whatever zone the first row has.

``00:00 UTC`` and ``01:00 Europe/Paris`` are one instant (Python calls them equal and hashes
them alike), so a factorization kept them in one group labelled by whichever row came first:
one person's Paris cell ahead of everybody's UTC cells relabelled the released key (and the
text the CLI prints), telling with certainty that the person is in the data.
"""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest

from veil.dp._canon import canonical, group_key
from veil.dp.frame import PrivateFrame

pytestmark = pytest.mark.filterwarnings("ignore::veil.errors.InsecureRandomWarning")

UTC = pd.Timestamp("2020-01-01 00:00", tz="UTC")
PARIS = pd.Timestamp("2020-01-01 01:00", tz="Europe/Paris")


def _release(df: pd.DataFrame) -> pd.DataFrame:
    pf = PrivateFrame(df, "pid", accountant=False, random_state=1)
    return pf.groupby("t").agg(n="count", epsilon=1.0, delta=1e-6)


@pytest.mark.parametrize(
    "cell",
    [
        PARIS,
        PARIS.to_pydatetime(),
        dt.datetime(2019, 12, 31, 19, tzinfo=dt.timezone(-dt.timedelta(hours=5))),
    ],
)
def test_one_persons_other_zone_does_not_relabel_the_group(cell) -> None:
    base = pd.DataFrame({"pid": range(300), "t": pd.Series([UTC] * 300, dtype=object)})
    first = pd.DataFrame({"pid": [999], "t": pd.Series([cell], dtype=object)})
    with_person = pd.concat([first, base], ignore_index=True)
    without, with_ = _release(base), _release(with_person)
    assert str(with_["t"].iloc[0]) == str(without["t"].iloc[0]) == "2020-01-01 00:00:00+00:00"
    assert with_["t"].dtype == without["t"].dtype


def test_canonical_forms_of_one_instant_are_one_value() -> None:
    forms = [UTC, PARIS, PARIS.to_pydatetime(), UTC.tz_convert("Asia/Tokyo")]
    assert len({str(canonical(v)) for v in forms}) == 1
    assert len({str(group_key(v)) for v in forms}) == 1
    naive = pd.Timestamp("2020-01-01 00:00")
    assert canonical(naive) == naive and canonical(naive).tzinfo is None  # naive stays naive
