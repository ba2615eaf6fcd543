"""Shamir t-of-n secret sharing of numpy arrays over a prime field.

Shamir, "How to share a secret", Communications of the ACM 22(11), 1979.  Each element of the
secret gets its own random polynomial of degree ``t - 1`` whose constant term is the (encoded)
element; party ``i`` receives the evaluations at ``x = i``.  All arithmetic is vectorized on
``uint64`` arrays (see :mod:`veil.crypto._field`), so sharing and reconstructing a
1,000,000-element vector takes a fraction of a second.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from veil.errors import ConfigError

from ._encoding import decode, encode
from ._errors import CryptoError
from ._field import MERSENNE61, PrimeField
from ._random import random_below
from ._shares import Share, check_mac_key, exact_values

__all__ = ["shamir_share", "shamir_reconstruct", "lagrange_at"]


def _check_tn(threshold: int, n: int, p: int) -> None:
    if int(threshold) != threshold or int(n) != n or not 1 <= threshold <= n:
        raise ConfigError(f"need integers 1 <= threshold <= n, got threshold={threshold}, n={n}")
    if n >= p:
        raise ConfigError(f"n={n} parties need a field larger than n (p={p})")


def lagrange_at(xs: Sequence[int], at: int, p: int) -> list[int]:
    """Lagrange coefficients ``l_j(at)`` for the points ``xs`` modulo ``p``.

    Examples
    --------
    >>> lagrange_at([1, 2], 0, 7)  # f(0) = 2 f(1) - f(2)
    [2, 6]
    """
    coeffs = []
    for j, xj in enumerate(xs):
        num, den = 1, 1
        for m, xm in enumerate(xs):
            if m != j:
                num = num * (at - xm) % p
                den = den * (xj - xm) % p
        coeffs.append(num * pow(den, -1, p) % p)
    return coeffs


def shamir_share(
    secret: object,
    threshold: int,
    n: int,
    *,
    prime: int = MERSENNE61,
    frac_bits: int | None = None,
    max_abs: float | None = None,
    mac_key: bytes | None = None,
) -> list[Share]:
    """Split an integer or float array into ``n`` Shamir shares, any ``threshold`` of which
    reconstruct it.

    Parameters
    ----------
    secret : array_like
        Integers (``frac_bits=None``) or floats (encoded in fixed point with ``frac_bits``
        fractional bits).  Negative values are supported.
    threshold, n : int
        Reconstruction threshold ``t`` and number of shares ``n`` (``1 <= t <= n``).
    prime : int, default 2**61 - 1
        Field modulus: ``2**61 - 1`` or a prime below ``2**32``.
    frac_bits : int, optional
        Fixed-point fractional bits for floats (public; e.g. 24 gives a resolution of 6e-8).
    max_abs : float, optional
        Public bound on ``|secret|``; inputs beyond it raise :class:`CryptoOverflowError`.
        Defaults to the field capacity divided by ``2**16`` (room for 65,536
        homomorphic additions); with a prime below ``2**32`` to the whole capacity
        ``(p - 1) / 2`` (no headroom: a sum raises :class:`CryptoOverflowError`).
    mac_key : bytes, optional
        When given, each share carries an HMAC-SHA256 tag; :func:`shamir_reconstruct` called
        with the same key detects corrupted or substituted shares.  At least 16 bytes
        (:class:`ConfigError` otherwise), e.g. ``secrets.token_bytes(32)``.

    Returns
    -------
    list of Share
        Share ``i`` (index ``i + 1``) goes to party ``i + 1``.

    Examples
    --------
    >>> import numpy as np
    >>> shares = shamir_share(np.array([3, -4, 5]), threshold=3, n=5)
    >>> shamir_reconstruct([shares[4], shares[0], shares[2]]).tolist()
    [3, -4, 5]
    """
    field = PrimeField(prime)
    _check_tn(threshold, n, field.p)
    if mac_key is not None:
        mac_key = check_mac_key(mac_key)
    residues, shape, bound = encode(secret, field.p, frac_bits, max_abs)
    size = residues.size
    coeffs = [random_below(field.p, size) for _ in range(threshold - 1)]
    sid = os.urandom(16)
    shares = []
    for x in range(1, n + 1):
        # Horner: ((c_{t-1} x + c_{t-2}) x + ...) x + s
        acc = coeffs[-1].copy() if coeffs else residues.copy()
        for c in [*reversed(coeffs[:-1]), residues] if coeffs else []:
            acc = field.muladd(acc, x, c)
        share = Share(
            "shamir", x, int(threshold), int(n), field.p, acc, shape, frac_bits, bound, sid
        )
        if mac_key is not None:
            share = Share(**{**share.__dict__, "tag": share.compute_tag(mac_key)})
        shares.append(share)
    return shares


def _validate(shares: Sequence[Share], mac_key: bytes | None) -> list[Share]:
    shares = list(shares)
    if not shares:
        raise CryptoError("no shares given")
    for s in shares:
        if not isinstance(s, Share) or s.scheme != "shamir":
            raise CryptoError("shamir_reconstruct needs Shamir shares")
    shares = [exact_values(s) for s in shares]
    first = shares[0]
    for s in shares[1:]:
        if s.sharing_id != first.sharing_id:
            raise CryptoError(
                f"share {s.index} belongs to a different sharing than share {first.index}"
            )
        for attr in ("threshold", "n", "modulus", "shape", "frac_bits", "bound"):
            if getattr(s, attr) != getattr(first, attr):
                raise CryptoError(
                    f"share {s.index} has a different {attr} than share {first.index}"
                )
        if s.values.shape != first.values.shape:
            raise CryptoError(f"share {s.index} has the wrong length")
    seen: set[int] = set()
    for s in shares:
        if s.index in seen:
            raise CryptoError(f"share index {s.index} given twice")
        if not 1 <= s.index < s.modulus:
            raise CryptoError(f"invalid share index {s.index}")
        seen.add(s.index)
    if mac_key is not None:
        mac_key = check_mac_key(mac_key)
        for s in shares:
            if s.tag is None:
                raise CryptoError(f"share {s.index} carries no authentication tag")
            if not s.verify(mac_key):
                raise CryptoError(
                    f"share {s.index} failed authentication (corrupted or substituted)"
                )
    if len(shares) < first.threshold:
        raise CryptoError(
            f"need at least {first.threshold} shares to reconstruct, got {len(shares)} "
            f"(indices {sorted(seen)})"
        )
    return shares


def _interpolate(field: PrimeField, shares: Sequence[Share], at: int) -> np.ndarray:
    xs = [s.index for s in shares]
    out = np.zeros(shares[0].values.size, dtype=np.uint64)
    for lam, s in zip(lagrange_at(xs, at, field.p), shares):
        out = field.add(out, field.mul(s.values, lam))
    return out


def _consistent(field: PrimeField, basis: Sequence[Share], others: Sequence[Share]) -> list[int]:
    """Indices of ``others`` that do not lie on the polynomial through ``basis``."""
    return [
        s.index for s in others if not np.array_equal(_interpolate(field, basis, s.index), s.values)
    ]


def shamir_reconstruct(shares: Sequence[Share], *, mac_key: bytes | None = None) -> np.ndarray:
    """Reconstruct the secret from any ``threshold`` (or more) Shamir shares.

    With more than ``threshold`` shares the extra ones are checked for consistency (a
    corrupted share makes the points leave the degree ``t - 1`` polynomial); with at least
    ``threshold + 2`` shares a single bad share is located and named.  With ``mac_key`` every
    share's HMAC tag is verified first.

    Parameters
    ----------
    shares : sequence of Share
        Distinct shares of one sharing (any order).
    mac_key : bytes, optional
        The dealer's authentication key.

    Returns
    -------
    numpy.ndarray
        ``int64`` (integer secrets) or ``float64`` (fixed-point secrets) in the original shape.

    Raises
    ------
    CryptoError
        Fewer than ``threshold`` shares, mixed sharings, a failed tag, or inconsistent shares
        (the message names the bad share index when it can be located).

    Examples
    --------
    >>> import numpy as np
    >>> shares = shamir_share(np.array([1.5, -2.25]), 2, 3, frac_bits=8)
    >>> shamir_reconstruct(shares[:2]).tolist()
    [1.5, -2.25]
    """
    shares = _validate(shares, mac_key)
    first = shares[0]
    field = PrimeField(first.modulus)
    t = first.threshold
    basis, extra = shares[:t], shares[t:]
    if extra:
        bad = _consistent(field, basis, extra)
        if bad:
            if len(shares) >= t + 2:
                for j, cand in enumerate(shares):
                    rest = shares[:j] + shares[j + 1 :]
                    if not _consistent(field, rest[:t], rest[t:]):
                        raise CryptoError(f"share {cand.index} is corrupted (inconsistent)")
            raise CryptoError(
                "shares are inconsistent: at least one is corrupted (give threshold + 2 "
                "shares to locate it, or use mac_key)"
            )
    secret = _interpolate(field, basis, 0)
    return decode(secret, first.modulus, first.frac_bits, first.shape)
