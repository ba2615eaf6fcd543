"""Distribution plots (original vs release) as base64 PNG, drawn with matplotlib's Agg canvas.

No pyplot: figures are created with :class:`matplotlib.figure.Figure` so the caller's
matplotlib backend and state are never touched.
"""

from __future__ import annotations

import base64
import io
import math
from typing import Any

__all__ = ["distribution_png"]


def _draw(
    ax: Any,
    d: dict[str, Any] | None,
    title: str,
    color: str,
    empty: str = "column not in the release",
) -> None:
    # plain text, whatever matplotlib's settings: a column name or a category holding "$...$"
    # (a cell of the input) was parsed as mathtext (or LaTeX under text.usetex), and one that
    # does not parse (r"$\frac{x$") failed the report with a ValueError quoting that cell
    ax.set_title(title, fontsize=9, parse_math=False)
    if d is None:
        ax.text(0.5, 0.5, empty, ha="center", va="center", fontsize=9)
        ax.set_axis_off()
        return
    if d["kind"] == "numeric":
        edges = d["edges"]
        if not math.isfinite(edges[-1] - edges[0]):  # -1e308 .. 1e308: the axis would overflow
            scale = max(abs(edges[0]), abs(edges[-1]))
            edges = [e / scale for e in edges]
            ax.set_xlabel(f"x {scale:.3g}", fontsize=7)
        widths = [b - a for a, b in zip(edges[:-1], edges[1:])]
        ax.bar(edges[:-1], d["counts"], width=widths, align="edge", color=color, edgecolor="white")
    else:
        labels = [lab if len(lab) <= 18 else lab[:17] + "…" for lab in d["labels"]]
        ax.bar(range(len(labels)), d["counts"], color=color)
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, rotation=45, ha="right", fontsize=7, parse_math=False)
    ax.tick_params(axis="y", labelsize=7)
    if d.get("missing"):
        ax.text(
            0.99,
            0.97,
            f"missing: {d['missing']}",
            transform=ax.transAxes,
            ha="right",
            va="top",
            fontsize=7,
        )


def distribution_png(column: str, dist: dict[str, Any]) -> str:
    """Base64-encoded PNG with the original (left) and release (right) distributions."""
    from matplotlib import rc_context

    # a caller's text.usetex would hand the column names and categories to LaTeX
    with rc_context({"text.usetex": False}):
        return _png(column, dist)


def _png(column: str, dist: dict[str, Any]) -> str:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8.5, 2.9), dpi=80)
    FigureCanvasAgg(fig)
    left, right = fig.subplots(1, 2)
    _draw(
        left,
        dist.get("original"),
        f"{column}: original",
        "#7a8fa6",
        # a replaced column: input counts beside the release's would pair values with pseudonyms
        "withheld (values replaced)" if dist.get("original_withheld") else "not shown",
    )
    _draw(right, dist.get("release"), f"{column}: release", "#2f7d5b")
    fig.subplots_adjust(left=0.07, right=0.98, top=0.88, bottom=0.32, wspace=0.22)
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return base64.b64encode(buf.getvalue()).decode("ascii")
