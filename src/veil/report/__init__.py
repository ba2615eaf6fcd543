"""Reports of a de-identification run: a JSON document and a self-contained HTML page.

:func:`render_html` turns the report dict returned by :func:`veil.apply` into one HTML file with
embedded plots (base64 PNG, matplotlib's Agg backend) that opens offline.
"""

from veil.report._build import build_report
from veil.report._html import render_html
from veil.report._metrics import distribution, information_loss
from veil.report._risk import class_codes, risk_indicators

__all__ = [
    "build_report",
    "render_html",
    "risk_indicators",
    "class_codes",
    "information_loss",
    "distribution",
]
