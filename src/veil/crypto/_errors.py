"""Exceptions and warnings specific to :mod:`veil.crypto`."""

from __future__ import annotations

from veil.errors import CryptoError

__all__ = ["CryptoError", "CryptoOverflowError", "InsecureKeyWarning"]


class CryptoOverflowError(CryptoError, OverflowError):
    """A value, or a sum of values, does not fit the plaintext space or share field.

    Raised instead of silently wrapping modulo ``n`` or ``p`` (the bug reported as phe #116).
    It is both a :class:`veil.errors.CryptoError` and a built-in :class:`OverflowError`.
    """


class InsecureKeyWarning(UserWarning):
    """A key shorter than the recommended minimum (2048-bit Paillier modulus) was generated."""
