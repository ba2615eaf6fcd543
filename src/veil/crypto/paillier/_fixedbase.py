"""Fast Paillier randomness: fixed-base exponentiation of ``h^n`` with short exponents.

Damgard, Jurik and Nielsen ("A generalization of Paillier's public-key system with
applications to electronic voting", Int. J. Inf. Security 9, 2010, section 4.2) replace the
encryption randomness ``r^n mod n^2`` (a full-length exponentiation) by ``(h^n)^x mod n^2`` where
``h = -y^2 mod n`` is a fixed random element of ``Z_n^*`` and ``x`` is a uniform exponent of about
``|n| / 2`` bits.  Ciphertexts stay semantically secure under the decisional composite
residuosity assumption plus the assumption that ``h^x`` with a short random ``x`` is
indistinguishable from a random element of the subgroup ``<h>`` (the "short exponent"
assumption used by DJN).  Because the base is fixed, ``(h^n)^x`` is computed with a
precomputed windowed table (Brickell-Gordon-McCurley-Wilson style fixed-base comb): about
``|x| / w`` modular multiplications instead of a full exponentiation.
"""

from __future__ import annotations

from typing import Any

from .._gmp import require_gmpy2
from .._random import random_bits, random_int_below

__all__ = ["FixedBaseRandomness"]


class FixedBaseRandomness:
    """Generator of Paillier obfuscators ``(h^n)^x mod n^2`` for one public modulus.

    Parameters
    ----------
    n : int
        The Paillier modulus.
    exponent_bits : int, optional
        Bit length of the random exponent ``x`` (default ``max(|n| // 2, 128)``).
    window : int, default 8
        Window width of the precomputed table (``ceil(exponent_bits / window)`` rows of
        ``2**window - 1`` powers each; 16 MiB for a 2048-bit modulus).

    Examples
    --------
    >>> fb = FixedBaseRandomness(3 * 5 * 2**0 * 7 * 11 * 13 * 1009 * 2003)
    >>> fb.sample() > 0
    True
    """

    def __init__(self, n: int, exponent_bits: int | None = None, window: int = 8) -> None:
        gmp = require_gmpy2()  # the module is never stored: keys stay picklable
        self.n = gmp.mpz(n)
        self.nsquare = self.n * self.n
        self.exponent_bits = int(exponent_bits or max(int(n).bit_length() // 2, 128))
        self.window = int(window)
        while True:
            y = gmp.mpz(random_int_below(int(n)))
            if y > 1 and gmp.gcd(y, self.n) == 1:
                break
        h = (-(y * y)) % self.n
        self.base = gmp.powmod(h, self.n, self.nsquare)
        self._table: list[list[Any]] | None = None

    @property
    def precomputed(self) -> bool:
        """Whether the fixed-base table has been built."""
        return self._table is not None

    def precompute(self) -> None:
        """Build the fixed-base table (about 0.2 s for a 2048-bit key)."""
        if self._table is not None:
            return
        rows = -(-self.exponent_bits // self.window)
        width = (1 << self.window) - 1
        table = []
        g = self.base
        for _ in range(rows):
            row = [g]
            for _ in range(width - 1):
                row.append(row[-1] * g % self.nsquare)
            table.append(row)
            g = row[-1] * g % self.nsquare  # g^(2^window)
        self._table = table

    def sample(self) -> Any:
        """Return a fresh obfuscator ``(h^n)^x mod n^2`` with a uniform secret ``x``."""
        x = random_bits(self.exponent_bits)
        table = self._table
        gmp = require_gmpy2()
        if table is None:
            return gmp.powmod(self.base, x, self.nsquare)
        w, mask, nsq = self.window, (1 << self.window) - 1, self.nsquare
        acc = gmp.mpz(1)
        row = 0
        while x:
            d = x & mask
            if d:
                acc = acc * table[row][d - 1] % nsq
            x >>= w
            row += 1
        return acc
