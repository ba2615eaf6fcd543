"""Order of interval labels in the report's distributions."""

from __future__ import annotations

import pandas as pd

from veil.report import distribution


def test_labels_in_exponent_form_are_ordered_by_value() -> None:
    """Mondrian prints whole floats beyond 2**53 in exponent form (``[1e+300, 1e+308]``) and
    repr prints small ones so (``5e-05``): the labels must still come out in numeric order."""
    labels = ["[1e+300, 1e+308]", "[-1e+308, -1e+300]", "[2, 3]", "5e-05"]
    s = pd.Series([v for v in labels for _ in range(3)])
    d = distribution(s)
    assert d["labels"] == ["[-1e+308, -1e+300]", "5e-05", "[2, 3]", "[1e+300, 1e+308]"]
