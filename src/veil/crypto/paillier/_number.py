"""Encrypted scalars with a phe-like API, a public fixed-point scale and overflow tracking.

An :class:`EncryptedNumber` holds a Paillier ciphertext of the integer ``m`` together with
public metadata: the fixed-point ``scale`` (the value is ``m / 2**scale``) and a ``bound`` on
``|m|``.  The scale is chosen by configuration (0 for ints, ``frac_bits`` for floats), never
from the value, so it does not leak magnitudes (phe #110); the bound grows with every
homomorphic operation and an operation whose result could exceed ``n / 2`` raises
:class:`CryptoOverflowError` instead of wrapping silently (phe #116).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from veil.errors import InputError

from .._errors import CryptoError, CryptoOverflowError
from .._gmp import require_gmpy2

if TYPE_CHECKING:
    from ._keys import PaillierPublicKey

__all__ = ["EncryptedNumber", "encode_scalar", "FLOAT_FRAC_BITS"]


#: Default fixed-point fractional bits for floats (the resolution of float64 near 1.0).
FLOAT_FRAC_BITS = 52
#: Largest relative error of a float multiplier's fixed-point encoding (float32 precision):
#: with ``FLOAT_FRAC_BITS`` it admits ``|k| >= ~2**-29``; smaller multipliers are refused.
_MAX_MULTIPLIER_ERROR = Fraction(1, 1 << 24)


def encode_scalar(value: object, frac_bits: int | None = None) -> tuple[int, int]:
    """Encode an int or float as ``(m, scale)`` with ``value ~= m / 2**scale``.

    Examples
    --------
    >>> encode_scalar(-3)
    (-3, 0)
    >>> encode_scalar(0.75, frac_bits=4)
    (12, 4)
    """
    if frac_bits is not None and (
        isinstance(frac_bits, bool) or not isinstance(frac_bits, int) or frac_bits < 0
    ):
        raise InputError("frac_bits must be a non-negative integer")
    if isinstance(value, (bool, np.bool_)) or type(value).__name__ == "mpz":
        value = int(value)  # type: ignore[call-overload]
    if isinstance(value, (int, np.integer)):
        scale = frac_bits or 0
        return int(value) << scale, scale
    if isinstance(value, (float, np.floating)):
        x = float(value)
        if not math.isfinite(x):
            raise InputError("cannot encrypt NaN or infinite values")
        scale = FLOAT_FRAC_BITS if frac_bits is None else frac_bits
        return round(Fraction(x) * (1 << scale)), scale
    raise InputError(f"cannot encrypt a {type(value).__name__}; expected an int or a float")


class EncryptedNumber:
    """A Paillier ciphertext with its public scale and magnitude bound.

    Supports ``+`` and ``-`` with other encrypted numbers or plaintext numbers, ``*`` and
    ``/`` by plaintext numbers, and unary ``-``.  A ciphertext given to the constructor is
    validated (``0 < c < n^2``, ``gcd(c, n) = 1``, else :class:`CryptoError`); those produced
    by encryption and homomorphic operations are not re-checked.

    Examples
    --------
    >>> from veil.crypto.paillier import generate_paillier_keypair
    >>> pk, sk = generate_paillier_keypair(n_length=512, insecure=True)
    >>> sk.decrypt(pk.encrypt(1.5) * 2 - 4)
    -1.0
    """

    __slots__ = ("public_key", "_c", "scale", "bound", "_obfuscated")
    __array_ufunc__ = None  # numpy scalars defer to our reflected operators

    def __init__(
        self,
        public_key: PaillierPublicKey,
        ciphertext: Any,
        scale: int = 0,
        bound: int | None = None,
        *,
        obfuscated: bool = True,
    ) -> None:
        self.public_key = public_key
        self._c = public_key.check_ciphertext(ciphertext)
        self.scale = int(scale)
        self.bound = int(public_key.max_int if bound is None else bound)
        self._obfuscated = obfuscated

    @classmethod
    def _trusted(
        cls, public_key: PaillierPublicKey, c: Any, scale: int, bound: int, obfuscated: bool
    ) -> EncryptedNumber:
        """Wrap a ciphertext produced by this package (a unit mod ``n^2``): no validation."""
        obj = cls.__new__(cls)
        obj.public_key, obj._c, obj.scale, obj.bound = public_key, c, scale, bound
        obj._obfuscated = obfuscated
        return obj

    def __getstate__(self) -> tuple[Any, ...]:
        # like dumps: a derived ciphertext is re-randomized before it leaves the process
        # (a pickled c^k next to c would give away a small plaintext multiplier k)
        if not self._obfuscated:
            self.obfuscate()
        return (self.public_key, self._c, self.scale, self.bound, self._obfuscated)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self.public_key, self._c, self.scale, self.bound, self._obfuscated = state

    def __repr__(self) -> str:
        return f"<EncryptedNumber scale=2**-{self.scale} key={self.public_key.fingerprint}>"

    @property
    def exponent(self) -> int:
        """phe-style exponent: the value is ``m * 2**exponent`` (``exponent = -scale``)."""
        return -self.scale

    def ciphertext(self, be_secure: bool = True) -> Any:
        """The ciphertext integer; re-randomized first unless ``be_secure=False``."""
        if be_secure and not self._obfuscated:
            self.obfuscate()
        return self._c

    def obfuscate(self) -> None:
        """Re-randomize the ciphertext (multiply by a fresh encryption of zero)."""
        pk = self.public_key
        self._c = self._c * pk.random_factor() % pk.nsquare
        self._obfuscated = True

    # -- helpers ------------------------------------------------------------------------------
    def _new(self, c: Any, scale: int, bound: int) -> EncryptedNumber:
        if bound > self.public_key.max_int:
            raise CryptoOverflowError(
                "the result could exceed the plaintext space (|m| > n/2) and would wrap "
                "around; use a larger key or smaller values"
            )
        return EncryptedNumber._trusted(self.public_key, c, scale, bound, False)

    def rescale(self, scale: int) -> EncryptedNumber:
        """Return the same value at a larger public scale (multiplies ``m`` by a power of 2)."""
        if scale < self.scale:
            raise CryptoError("cannot lower the scale of an encrypted number exactly")
        if scale == self.scale:
            return self
        d = scale - self.scale
        c = require_gmpy2().powmod(self._c, 1 << d, self.public_key.nsquare)
        return self._new(c, scale, self.bound << d)

    def _check_key(self, other: EncryptedNumber) -> None:
        if other.public_key != self.public_key:
            raise CryptoError("cannot combine numbers encrypted under different public keys")

    # -- arithmetic ---------------------------------------------------------------------------
    def __add__(self, other: object) -> EncryptedNumber:
        pk = self.public_key
        if isinstance(other, EncryptedNumber):
            if other.public_key is not pk:
                self._check_key(other)
            if other.scale == self.scale:
                return self._new(
                    self._c * other._c % pk.nsquare, self.scale, self.bound + other.bound
                )
            scale = max(self.scale, other.scale)
            a, b = self.rescale(scale), other.rescale(scale)
            return self._new(a._c * b._c % pk.nsquare, scale, a.bound + b.bound)
        if not isinstance(other, (int, float, np.integer, np.floating, np.bool_)):
            return NotImplemented
        m, s = encode_scalar(other, None)
        scale = max(self.scale, s)
        m <<= scale - s
        if abs(m) > pk.max_int:
            raise CryptoOverflowError("plaintext operand does not fit the plaintext space")
        a = self.rescale(scale)
        c = a._c * ((1 + (m % pk.n) * pk.n) % pk.nsquare) % pk.nsquare
        return self._new(c, scale, a.bound + abs(m))

    __radd__ = __add__

    def __neg__(self) -> EncryptedNumber:
        pk = self.public_key
        return self._new(require_gmpy2().invert(self._c, pk.nsquare), self.scale, self.bound)

    def __sub__(self, other: object) -> EncryptedNumber:
        if isinstance(other, EncryptedNumber):
            return self + (-other)
        if not isinstance(other, (int, float, np.integer, np.floating)):
            return NotImplemented
        return self + (-other)

    def __rsub__(self, other: object) -> EncryptedNumber:
        return (-self) + other

    def __mul__(self, other: object) -> EncryptedNumber:
        if isinstance(other, EncryptedNumber):
            raise CryptoError("Paillier cannot multiply two ciphertexts; multiply by a plaintext")
        if not isinstance(other, (int, float, np.integer, np.floating, np.bool_)):
            return NotImplemented
        k, s = encode_scalar(other, None)
        if (
            s
            and other != 0
            and abs(Fraction(k, 1 << s) - Fraction(float(other)))
            > abs(Fraction(float(other))) * _MAX_MULTIPLIER_ERROR
        ):
            # the fixed public scale (never chosen from the value, which would leak its
            # magnitude) cannot hold a tiny multiplier: x * 1e-17 would decrypt to 0 and
            # encrypt(1e25) / 1e20 to 0.0 instead of 1e5, without any error
            raise CryptoError(
                f"a float multiplier this small loses its precision in fixed point with {s} "
                "fractional bits (relative error above 2**-24); multiply by an "
                "integer, or scale the decrypted result instead"
            )
        gmp = require_gmpy2()
        pk = self.public_key
        base = self._c if k >= 0 else gmp.invert(self._c, pk.nsquare)
        return self._new(gmp.powmod(base, abs(k), pk.nsquare), self.scale + s, self.bound * abs(k))

    __rmul__ = __mul__

    def __truediv__(self, other: object) -> EncryptedNumber:
        if not isinstance(other, (int, float, np.integer, np.floating)) or other == 0:
            return NotImplemented
        return self * (1.0 / float(other))

    # -- decoding (used by the private key) ---------------------------------------------------
    def decode(self, residue: Any) -> int | float:
        """Turn a decrypted residue into the signed value, checking the tracked bound."""
        pk = self.public_key
        m = int(residue) if residue <= pk.max_int else int(residue) - int(pk.n)
        if abs(m) > self.bound:
            raise CryptoError(
                "decrypted value exceeds the ciphertext's tracked bound: the ciphertext was "
                "tampered with or its metadata forged"
            )
        if self.scale == 0:
            return m
        try:
            return m / (1 << self.scale)
        except OverflowError as exc:
            raise CryptoOverflowError("decrypted value does not fit a float") from exc
