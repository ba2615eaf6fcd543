"""Rendering the report dict as one self-contained HTML page (Jinja2 template, embedded PNGs)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from veil.report._anonymity_view import anonymity_view, engine_actions
from veil.report._plots import distribution_png

__all__ = ["render_html"]


def _pct(v: Any) -> str:
    return "–" if v is None else f"{100 * float(v):.1f}%"


def _num(v: Any, digits: int = 3) -> str:
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        return f"{v:,.{digits}g}" if abs(v) < 1e6 else f"{v:,.0f}"
    return str(v)


def render_html(report: dict[str, Any], *, title: str = "Veil de-identification report") -> str:
    """Render ``report`` (from :func:`veil.apply`) as HTML text.

    Examples
    --------
    >>> import pandas as pd
    >>> from veil.deid import apply
    >>> _, rep = apply(pd.DataFrame({"age": [30, 31, 30]}), {"columns": {"age": "quasi"}})
    >>> html = render_html(rep)
    >>> html.startswith("<!DOCTYPE html>") and "data:image/png;base64," in html
    True
    """
    from jinja2 import Environment, PackageLoader, select_autoescape

    env = Environment(
        loader=PackageLoader("veil.report", "templates"),
        autoescape=select_autoescape(["html", "j2"]),
    )
    env.filters["pct"] = _pct
    env.filters["num"] = _num
    plots = {col: distribution_png(col, d) for col, d in report.get("distributions", {}).items()}
    template = env.get_template("report.html.j2")
    return template.render(
        r=report,
        title=title,
        plots=plots,
        anon=anonymity_view(report.get("anonymity")),
        engine=_one_value_left(engine_actions(report.get("anonymity")), report),
    )


def _one_value_left(actions: dict[str, str], report: Mapping[str, Any]) -> dict[str, str]:
    """Say so when the engine left a single value in a column (``43 -> 1`` distinct): "level 2
    of its hierarchy" alone reads as if the column still told something."""
    loss = (report.get("information_loss") or {}).get("columns") or {}
    out = dict(actions)
    for col, text in actions.items():
        info = loss.get(col) or {}
        if info.get("distinct_after") == 1 and (info.get("distinct_before") or 0) > 1:
            out[col] = f"{text}: a single value left in the release"
    return out
