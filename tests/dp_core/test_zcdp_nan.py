"""``zcdp_to_dp`` never converts an unknown ``rho`` into a zero epsilon.

``rho < 0`` is false for NaN, and ``max(0.0, nan)`` is ``0.0``: a NaN ``rho`` (say from a
``gaussian_rho`` computed on a NaN sigma) came back as ``epsilon = 0``, the strongest
guarantee there is.  It is a ConfigError, as a negative ``rho`` is.
"""

from __future__ import annotations

import math

import pytest

from veil.dp._zcdp import zcdp_to_dp
from veil.errors import ConfigError


@pytest.mark.parametrize("rho", [math.nan, -1e-9])
def test_invalid_rho_is_refused(rho: float) -> None:
    with pytest.raises(ConfigError):
        zcdp_to_dp(rho, 1e-6)


def test_valid_rho_still_converts() -> None:
    assert zcdp_to_dp(0.0, 1e-6) == 0.0
    assert 0 < zcdp_to_dp(0.5, 1e-6) < math.inf
