"""Cryptographically secure randomness for secret sharing and Paillier.

Every random value in :mod:`veil.crypto` comes from the operating system's CSPRNG
(:func:`os.urandom` / :mod:`secrets`); numpy's seeded generators are never used for secrets.
"""

from __future__ import annotations

import os
import secrets

import numpy as np

__all__ = ["random_uint64", "random_below", "random_int_below", "random_bits"]


def random_uint64(size: int) -> np.ndarray:
    """Return ``size`` uniform 64-bit words from :func:`os.urandom` as a ``uint64`` array.

    Examples
    --------
    >>> random_uint64(3).dtype
    dtype('uint64')
    """
    if size <= 0:
        return np.zeros(0, dtype=np.uint64)
    return np.frombuffer(os.urandom(8 * size), dtype="<u8").astype(np.uint64, copy=True)


def random_below(modulus: int, size: int) -> np.ndarray:
    """Return ``size`` values uniform on ``[0, modulus)`` as ``uint64`` (rejection sampling).

    ``modulus`` must be at most ``2**64``.  Values are drawn from the smallest power-of-two
    range covering ``modulus`` and out-of-range draws are redrawn, so there is no modulo bias.

    Examples
    --------
    >>> int(random_below(7, 1000).max()) < 7
    True
    """
    if not 1 <= modulus <= 1 << 64:
        raise ValueError("modulus must be in [1, 2**64]")
    if modulus == 1 << 64:
        return random_uint64(size)
    bits = (modulus - 1).bit_length()
    mask = np.uint64((1 << bits) - 1) if bits < 64 else np.uint64(0xFFFFFFFFFFFFFFFF)
    out = random_uint64(size) & mask
    bad = np.flatnonzero(out >= np.uint64(modulus))
    while bad.size:
        fresh = random_uint64(bad.size) & mask
        out[bad] = fresh
        bad = bad[fresh >= np.uint64(modulus)]
    return out


def random_int_below(modulus: int) -> int:
    """Return one Python ``int`` uniform on ``[0, modulus)`` (any size).

    Examples
    --------
    >>> 0 <= random_int_below(2**127 - 1) < 2**127 - 1
    True
    """
    return secrets.randbelow(modulus)


def random_bits(bits: int) -> int:
    """Return a uniform non-negative Python ``int`` of at most ``bits`` bits.

    Examples
    --------
    >>> random_bits(8) < 256
    True
    """
    return secrets.randbits(bits)
