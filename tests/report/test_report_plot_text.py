"""Column names and categories reach the report's plots as plain text, never as mathtext."""

from __future__ import annotations

import matplotlib
import pandas as pd
import pytest

from veil.deid import apply
from veil.report import render_html

# a cell (or column name) that matplotlib's mathtext cannot parse; "$x^2$" would be drawn as a
# formula, not as the text the data holds
ODD = [r"$\frac{x$", "$a^{b$", r"$\sqrt{$"]


@pytest.mark.parametrize("cell", ODD)
def test_a_category_with_dollars_renders(cell: str) -> None:
    df = pd.DataFrame({"age": [30, 31, 30, 32] * 3, "diag": [cell, "flu", "flu", "cold"] * 3})
    _, report = apply(df, {"columns": {"age": "quasi", "diag": "sensitive"}})
    # raised ValueError quoting the cell before (one person's value stopped the run)
    assert render_html(report).startswith("<!DOCTYPE html>")


@pytest.mark.parametrize("name", ODD)
def test_a_column_name_with_dollars_renders(name: str) -> None:
    df = pd.DataFrame({"age": [30, 31, 30, 32] * 3, name: ["a", "b", "a", "b"] * 3})
    _, report = apply(df, {"columns": {"age": "quasi", name: "sensitive"}})
    assert render_html(report).startswith("<!DOCTYPE html>")


def test_usetex_setting_is_not_followed() -> None:
    """A user's ``text.usetex: True`` would hand the cells to LaTeX (not installed here: the
    report failed; installed: the cells' TeX would run)."""
    df = pd.DataFrame({"age": [30, 31, 30, 32] * 3, "diag": ["\\input{x}", "flu", "a_b", "c"] * 3})
    _, report = apply(df, {"columns": {"age": "quasi", "diag": "sensitive"}})
    with matplotlib.rc_context({"text.usetex": True}):
        assert render_html(report).startswith("<!DOCTYPE html>")


def test_a_parseable_formula_is_drawn_as_its_text() -> None:
    """``$x^2$`` parses as mathtext (it would render, as a formula, not as the cell): the title
    and the category labels are drawn with math parsing off."""
    from matplotlib.figure import Figure

    from veil.report._plots import _draw

    ax = Figure().subplots()
    dist = {"kind": "categorical", "labels": ["$x^2$", "flu"], "counts": [5, 7]}
    _draw(ax, dist, "$y_1$: original", "#000000")
    assert ax.title.get_text() == "$y_1$: original" and not ax.title.get_parse_math()
    labels = ax.get_xticklabels()
    assert [t.get_text() for t in labels] == ["$x^2$", "flu"]
    assert not any(t.get_parse_math() for t in labels)
