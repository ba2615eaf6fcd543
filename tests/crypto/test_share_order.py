"""Parties may combine their shares in any order: the result is one sharing of the sum."""

from __future__ import annotations

import numpy as np
import pytest

from veil.crypto import (
    CryptoError,
    additive_reconstruct,
    additive_share,
    shamir_reconstruct,
    shamir_share,
)


def test_shamir_sums_in_different_orders_reconstruct() -> None:
    a, b, c = (shamir_share(np.array([v, -v]), 2, 3) for v in (1, 10, 100))
    first = a[0] + b[0] + c[0]  # party 1 adds in arrival order a, b, c
    second = c[1] + (a[1] + b[1])  # party 2 received c first
    third = b[2] + (c[2] + a[2])
    for pair in ([first, second], [second, third], [third, first]):
        assert shamir_reconstruct(pair).tolist() == [111, -111]
    assert shamir_reconstruct([first, second, third]).tolist() == [111, -111]
    # ... while a different combination of the same dealings is still another sharing
    with pytest.raises(CryptoError, match="different sharing"):
        shamir_reconstruct([first, a[1] + b[1]])
    with pytest.raises(CryptoError, match="different sharing"):
        shamir_reconstruct([a[0] - b[0], b[1] - a[1]])


def test_additive_sums_in_different_orders_reconstruct() -> None:
    x, y = additive_share(np.array([1, 2]), 2), additive_share(np.array([30, 40]), 2)
    assert additive_reconstruct([x[0] + y[0], y[1] + x[1]]).tolist() == [31, 42]
    assert additive_reconstruct([3 * x[0] - y[0], -y[1] + x[1] * 3]).tolist() == [-27, -34]
