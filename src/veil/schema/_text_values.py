"""Cell values written in YAML and CSV files, read as the text written.

A hierarchy (or a policy) names cells of the data, and the data read from a CSV file is text.
YAML 1.1 rewrites many unquoted scalars: ZIP code ``01301`` is the octal number 705, ``No`` /
``yes`` / ``on`` are booleans, ``1.50`` is 1.5, ``12:30`` is 750 (base 60), ``0x1F`` is 31,
``~`` / ``null`` are None and ``2024-01-01`` is a date.  :func:`load_text_yaml` reads every
scalar as its text; :func:`number_text` says which number or boolean cell a text stands for,
so that a column read as numbers still matches a hierarchy written ``1.50`` or ``1e3``.
"""

from __future__ import annotations

import functools
import re
from decimal import Decimal, InvalidOperation
from typing import Any

__all__ = ["load_text_yaml", "number_text"]

#: A decimal number as :func:`veil.io.read` reads a cell into a number column: no leading zero
#: (``01301`` stays text there, an identifier), no hexadecimal, no ``_``, no base 60.
_DECIMAL = re.compile(r"[+-]?(?:(?:0|[1-9][0-9]*)(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def number_text(text: str) -> str | None:
    """The text of the number or boolean cell that ``text`` stands for, else None.

    The text is the one hierarchies match a number cell by (``17.0`` -> ``"17"``, ``1.5`` ->
    ``"1.5"``, ``True`` -> ``"True"``).  None for a text that no number or boolean cell is
    read from: ``01301`` (a leading zero: read as text), ``0x1F``, ``No``, ``12:30``.

    Examples
    --------
    >>> [number_text(t) for t in ["1.50", "1e3", "17.0", "-0", "true", "01301", "No", "0x1F"]]
    ['1.5', '1000', '17', '0', 'True', None, None, None]
    """
    t = text.strip()
    low = t.lower()
    if low in ("true", "false"):  # the booleans pandas reads from a CSV file
        return "True" if low == "true" else "False"
    if not _DECIMAL.fullmatch(t):
        return None
    try:
        d = Decimal(t)
    except InvalidOperation:  # pragma: no cover - the pattern admits decimal numbers only
        return None
    if abs(d.adjusted()) > 300:  # 1e999999: no cell (and no int() of a million digits)
        return None
    if d == d.to_integral_value():
        return str(int(d))
    return repr(float(d))


def load_text_yaml(text: str) -> Any:
    """``yaml.safe_load`` with every plain scalar read as the text written.

    Quoted scalars, mappings and lists are read as usual; explicit tags (``!!int 5``) are
    still YAML's.

    Examples
    --------
    >>> load_text_yaml("01301: [013**, '*']\\nNo: [N*, '*']\\n1.50: [~, 12:30]\\n")
    {'01301': ['013**', '*'], 'No': ['N*', '*'], '1.50': ['~', '12:30']}
    """
    import yaml

    return yaml.load(text, Loader=_text_loader())  # noqa: S506 - a SafeLoader subclass


@functools.cache
def _text_loader() -> type:
    import yaml

    class TextLoader(yaml.SafeLoader):
        """A safe loader without implicit types: every plain scalar is ``!!str``."""

    TextLoader.yaml_implicit_resolvers = {}
    return TextLoader
