"""Helpers for the report's leak tests: which numbers a report's text shows."""

from __future__ import annotations

import re

# a number written on its own: not a run of digits inside a longer number (0.0022117, 1170),
# a word or a base64 run
_NUMBER = re.compile(r"(?<![\w.+/])\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?![\w+/]|\.\d)")
_DATA_URI = re.compile(r"data:[\w/+.-]+;base64,[A-Za-z0-9+/=]+")


def numbers_in(text: str) -> set[float]:
    """The numbers ``text`` shows (JSON values, table cells, labels such as ``[100, 117)``).

    A digit substring test is not a leak test: the report holds wall-clock figures
    (``elapsed_s``, ``time 0.117 s``) whose digits contain any short secret now and then, and
    base64 images whose text is arbitrary.  Embedded images are left out.

    Examples
    --------
    >>> sorted(numbers_in('{"elapsed_s": 0.0022117, "edges": [20.0, 117.0]} 100-117 1170'))
    [0.0022117, 20.0, 100.0, 117.0, 1170.0]
    >>> 117.0 in numbers_in("time 0.117 s, data:image/png;base64,iVB117ORw0=")
    False
    """
    return {float(m) for m in _NUMBER.findall(_DATA_URI.sub(" ", text))}
