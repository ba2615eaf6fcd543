"""A suppression marker that a reader of the written release takes for a published label.

pandas' default CSV reader reads a column of ``"0"`` and ``"0.0"`` as one number and
``"True"`` / ``"true"`` as one boolean.  Masked suppressed records show the marker in every
quasi-identifier; when a published class prints, in every quasi-identifier, a label such a
reader reads as the marker, the reader sees one group holding the class *and* the suppressed
records (which broke a model).  The oracle here reads the release with pandas' default reader
and groups the quasi-identifiers by the values it reads; it shares no code with the engine.
"""

from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd
import pytest

from veil.anonymity import AnonymizationConfig, EntropyLDiversity, anonymize
from veil.errors import ConfigError
from veil.schema import Hierarchy


def _table(a_values: list[str], b_values: list[str]) -> tuple[pd.DataFrame, dict[str, Hierarchy]]:
    """Three classes of two records at level 0; the last one (y = u, u) breaks entropy l=1.9."""
    df = pd.DataFrame(
        {
            "a": [a_values[i // 2] for i in range(6)],
            "b": [b_values[i // 2] for i in range(6)],
            "y": ["u", "v", "u", "w", "u", "u"],
        }
    )
    hier = {
        c: Hierarchy.from_mapping({v: ["*"] for v in vals})
        for c, vals in (("a", a_values), ("b", b_values))
    }
    return df, hier


def _reader_min_entropy_l(release: pd.DataFrame, marker: str, max_suppressed: int) -> float:
    """Smallest entropy l over the classes that pandas' default reader forms, the rows
    reading as the marker in both QIs set apart as suppressed when there are few enough."""
    buf = io.StringIO()
    release.to_csv(buf, index=False)
    buf.seek(0)
    r = pd.read_csv(buf)
    mark_a = pd.read_csv(io.StringIO(f"a\n{marker}\n"))["a"].iloc[0]  # the marker as read
    supp = (r["a"] == mark_a) & (r["b"] == mark_a)
    if supp.sum() > max_suppressed:
        supp[:] = False
    kept = r.loc[~supp]
    worst = math.inf
    for _, g in kept.groupby(["a", "b"], dropna=False):
        p = g["y"].value_counts(normalize=True).to_numpy()
        worst = min(worst, math.exp(-float(np.sum(p * np.log(p)))))
    return worst


CASES = [
    (["0.0", "1.0", "2.0"], ["0", "1", "2"], "0"),  # floats written 0.0, marker 0
    (["00", "1", "2"], ["0", "1", "2"], "0"),  # a leading zero
    (["1", "0", "2"], ["1e0", "2", "3"], "1"),  # scientific notation
    (["-0", "1", "2"], ["0", "1", "2"], "0"),  # negative zero
    (["True", "False", "false"], ["true", "FALSE", "False"], "TRUE"),  # boolean case
]


@pytest.mark.parametrize(("a_values", "b_values", "marker"), CASES)
@pytest.mark.parametrize("algorithm", ["optimal", "heuristic"])
def test_masked_records_never_read_as_a_published_class(a_values, b_values, marker, algorithm):
    df, hier = _table(a_values, b_values)
    cfg = AnonymizationConfig(
        hier,
        models=[EntropyLDiversity("y", 1.9)],
        k=2,
        suppression_limit=1 / 3,
        suppressed_value=marker,
        algorithm=algorithm,
    )
    try:
        res = anonymize(df, cfg)
    except ConfigError:
        return  # refused: no claim
    assert _reader_min_entropy_l(res.data, marker, int(res.suppressed.sum())) >= 1.9


def test_a_marker_reading_like_a_label_is_refused_only_in_mask_mode():
    df, hier = _table(["0.0", "1.0", "2.0"], ["0", "1", "2"])
    cfg = dict(models=[EntropyLDiversity("y", 1.9)], k=2, suppression_limit=1 / 3)
    with pytest.raises(ConfigError, match="reads like one"):
        anonymize(df, AnonymizationConfig(hier, suppressed_value="0", **cfg))
    # dropped records, or a marker no label reads like, cannot be confused with a class
    res = anonymize(
        df, AnonymizationConfig(hier, suppressed_value="0", drop_suppressed=True, **cfg)
    )
    assert res.suppressed.sum() == 2
    res = anonymize(df, AnonymizationConfig(hier, suppressed_value="-1", **cfg))
    assert _reader_min_entropy_l(res.data, "-1", int(res.suppressed.sum())) >= 1.9
