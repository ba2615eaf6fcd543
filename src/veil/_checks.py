"""Parameter checks shared across the packages.

Example
-------
>>> positive_int(3, "k")
3
"""

from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np

from veil.errors import ConfigError

__all__ = ["positive_int", "user_stacklevel"]


def positive_int(value: Any, name: str) -> int:
    """``value`` as an ``int`` when it is an integer >= 1 (``bool`` and floats refused), else
    :class:`~veil.errors.ConfigError` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ConfigError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def user_stacklevel() -> int:
    """``stacklevel`` for :func:`warnings.warn` that points at the first caller outside Veil.

    Call it from the function that warns: the warning is then attributed to the user's line
    however deep inside Veil (wrappers, helpers) the warning was raised.
    """
    frame = sys._getframe(1)  # the function that warns: stacklevel 1
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    return level
