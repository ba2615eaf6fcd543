"""Vectorized modular arithmetic on ``uint64`` numpy arrays.

Two kinds of modulus are supported without big integers:

* the Mersenne prime ``p = 2**61 - 1`` (the default field for secret sharing): products of two
  61-bit residues are split into 32-bit limbs so that no intermediate exceeds 64 bits, and
  reduction uses ``2**61 = 1 (mod p)``;
* any prime ``p < 2**32``: products fit in 64 bits and are reduced with ``%``.

The ring ``Z_{2**64}`` (additive sharing) needs no helper: numpy ``uint64`` arithmetic wraps.
"""

from __future__ import annotations

import numpy as np

from veil.errors import ConfigError

from ._gmp import gmpy2

__all__ = ["MERSENNE61", "PrimeField"]

#: The Mersenne prime 2**61 - 1, the default secret-sharing field.
MERSENNE61 = (1 << 61) - 1

_M61 = np.uint64(MERSENNE61)
_LO32 = np.uint64(0xFFFFFFFF)
_LO29 = np.uint64((1 << 29) - 1)
_U32 = np.uint64(32)
_U29 = np.uint64(29)
_U61 = np.uint64(61)
_U3 = np.uint64(3)


def _is_prime(p: int) -> bool:
    if gmpy2 is not None:
        return bool(gmpy2.is_prime(p, 40))
    if p < 2:  # pragma: no cover - fallback without gmpy2
        return False
    return all(p % d for d in range(2, int(p**0.5) + 1))  # pragma: no cover


def _mul61(a: np.ndarray, b: np.ndarray | np.uint64) -> np.ndarray:
    """``a * b mod (2**61 - 1)`` for residues ``a, b < 2**61`` without 128-bit integers."""
    a_hi = a >> _U32
    a_lo = a & _LO32
    b_hi = b >> _U32
    b_lo = b & _LO32
    mid = a_hi * b_lo + a_lo * b_hi  # < 2**62
    # a*b = hh*2**64 + mid*2**32 + ll  and  2**64 = 8, mid*2**32 = (mid>>29) + (mid&(2**29-1))<<32
    r = ((a_hi * b_hi) << _U3) + (mid >> _U29) + ((mid & _LO29) << _U32)  # < 2**62 + 2**33
    r = (r & _M61) + (r >> _U61)
    ll = a_lo * b_lo
    r += (ll & _M61) + (ll >> _U61)
    r = (r & _M61) + (r >> _U61)
    np.subtract(r, _M61, out=r, where=r >= _M61)
    return r


def _reduce61(r: np.ndarray) -> np.ndarray:
    """Reduce ``r < 2**64`` modulo ``2**61 - 1`` in place."""
    hi = r >> _U61
    r &= _M61
    r += hi
    np.subtract(r, _M61, out=r, where=r >= _M61)
    return r


def _mul61_small(a: np.ndarray, k: int) -> np.ndarray:
    """``a * k mod (2**61 - 1)`` for a residue array ``a`` and a Python int ``0 <= k < 2**32``."""
    if k < 8:  # a * k < 2**64
        return _reduce61(a * np.uint64(k))
    kk = np.uint64(k)
    h = (a >> _U32) * kk  # < 2**61
    r = a & _LO32
    r *= kk  # < 2**64
    r = _reduce61(r)
    r += h >> _U29
    h &= _LO29
    h <<= _U32
    r += h  # < 2**62 + 2**33
    return _reduce61(r)


def _muladd61_small(a: np.ndarray, k: int, c: np.ndarray) -> np.ndarray:
    """``(a * k + c) mod (2**61 - 1)`` for residues ``a, c`` and ``0 <= k < 8`` (fused)."""
    r = a * np.uint64(k)  # < 2**64
    hi = r >> _U61
    r &= _M61
    r += hi  # < 2**61 + 8
    r += c  # < 2**62 + 8
    return _reduce61(r)


class PrimeField:
    """Arithmetic modulo a prime ``p`` on ``uint64`` arrays.

    Parameters
    ----------
    p : int
        ``2**61 - 1`` (default) or any prime below ``2**32``.

    Examples
    --------
    >>> import numpy as np
    >>> f = PrimeField()
    >>> int(f.mul(np.array([2**60], dtype=np.uint64), 4)[0]) == (2**62) % (2**61 - 1)
    True
    """

    def __init__(self, p: int = MERSENNE61) -> None:
        p = int(p)
        if p != MERSENNE61 and not (2 < p < 1 << 32):
            raise ConfigError("the share field prime must be 2**61 - 1 or a prime below 2**32")
        if p != MERSENNE61 and not _is_prime(p):
            raise ConfigError(f"the share field modulus {p} is not prime")
        self.p = p
        self._P = np.uint64(p)
        self._mersenne = p == MERSENNE61

    def __repr__(self) -> str:
        return f"PrimeField(p={self.p})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PrimeField) and other.p == self.p

    def __hash__(self) -> int:
        return hash(("PrimeField", self.p))

    def add(self, a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
        """Return ``(a + b) mod p`` (``a`` and ``b`` reduced)."""
        r = a + np.uint64(b) if isinstance(b, int) else a + b
        np.subtract(r, self._P, out=r, where=r >= self._P)
        return r

    def neg(self, a: np.ndarray) -> np.ndarray:
        """Return ``-a mod p``."""
        r = self._P - a
        r[r == self._P] = 0
        return r

    def sub(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Return ``(a - b) mod p``."""
        return self.add(a, self.neg(b))

    def mul(self, a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
        """Return ``(a * b) mod p``; ``b`` may be an array or a Python ``int``."""
        if self._mersenne and isinstance(b, int) and 0 <= b < 1 << 32:
            return _mul61_small(np.asarray(a, dtype=np.uint64), b)
        bb: np.ndarray | np.uint64 = np.uint64(int(b) % self.p) if isinstance(b, int) else b
        if self._mersenne:
            return _mul61(np.asarray(a, dtype=np.uint64), bb)
        return (a * bb) % self._P

    def muladd(self, a: np.ndarray, k: int, c: np.ndarray) -> np.ndarray:
        """Return ``(a * k + c) mod p`` for a small non-negative Python int ``k``."""
        if self._mersenne and 0 <= k < 8:
            return _muladd61_small(a, k, c)
        return self.add(self.mul(a, k), c)

    def inv(self, x: int) -> int:
        """Return the inverse of the non-zero scalar ``x`` modulo ``p``."""
        return pow(int(x) % self.p, -1, self.p)
