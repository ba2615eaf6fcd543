"""Parameter checks shared across the packages.

Example
-------
>>> positive_int(3, "k")
3
"""

from __future__ import annotations

from typing import Any

import numpy as np

from veil.errors import ConfigError

__all__ = ["positive_int"]


def positive_int(value: Any, name: str) -> int:
    """``value`` as an ``int`` when it is an integer >= 1 (``bool`` and floats refused), else
    :class:`~veil.errors.ConfigError` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ConfigError(f"{name} must be a positive integer, got {value!r}")
    return int(value)
