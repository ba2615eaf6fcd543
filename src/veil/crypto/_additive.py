"""Additive n-of-n secret sharing of integer and fixed-point arrays.

The secret ``s`` is split as ``s = r_1 + ... + r_n`` with ``r_1 .. r_{n-1}`` uniform, either in
the ring ``Z_{2**64}`` (``modulus=2**64``: numpy ``uint64`` wrap-around, negative values in
two's complement) or in the prime field ``Z_p``.  Any ``n - 1`` shares are uniformly
distributed and independent of the secret.  This is the sharing used by SPDZ-style MPC
(Damgard, Pastro, Smart, Zakarias, CRYPTO 2012) and by secure-aggregation protocols.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from veil.errors import ConfigError

from ._encoding import RING64, decode, encode
from ._errors import CryptoError
from ._field import PrimeField
from ._random import random_below, random_uint64
from ._shares import Share, check_mac_key, exact_values

__all__ = ["additive_share", "additive_reconstruct"]


def additive_share(
    secret: object,
    n: int,
    *,
    modulus: int = RING64,
    frac_bits: int | None = None,
    max_abs: float | None = None,
    mac_key: bytes | None = None,
) -> list[Share]:
    """Split an integer or float array into ``n`` additive shares (all ``n`` are needed).

    Parameters
    ----------
    secret : array_like
        Integers, or floats encoded in fixed point with ``frac_bits`` fractional bits.
    n : int
        Number of shares (``n >= 1``).
    modulus : int, default 2**64
        ``2**64`` for the ring ``Z_{2**64}``, or a prime (``2**61 - 1`` or a prime below
        ``2**32``) for a prime field.
    frac_bits : int, optional
        Public fixed-point scale for float secrets.
    max_abs : float, optional
        Public bound on ``|secret|``; see :func:`veil.crypto.shamir_share`.
    mac_key : bytes, optional
        Attach HMAC-SHA256 tags verified by :func:`additive_reconstruct`.

    Examples
    --------
    >>> import numpy as np
    >>> shares = additive_share(np.array([-1.25, 2.5]), 3, frac_bits=16)
    >>> additive_reconstruct(shares).tolist()
    [-1.25, 2.5]
    """
    if int(n) != n or n < 1:
        raise ConfigError(f"n must be a positive integer, got {n}")
    if mac_key is not None:
        mac_key = check_mac_key(mac_key)
    modulus = int(modulus)
    field = None if modulus == RING64 else PrimeField(modulus)
    residues, shape, bound = encode(secret, modulus, frac_bits, max_abs)
    size = residues.size
    randoms = [
        random_uint64(size) if field is None else random_below(field.p, size) for _ in range(n - 1)
    ]
    last = residues.copy()
    for r in randoms:
        last = last - r if field is None else field.sub(last, r)
    sid = os.urandom(16)
    out = []
    for i, vals in enumerate([*randoms, last], start=1):
        share = Share("additive", i, int(n), int(n), modulus, vals, shape, frac_bits, bound, sid)
        if mac_key is not None:
            share = Share(**{**share.__dict__, "tag": share.compute_tag(mac_key)})
        out.append(share)
    return out


def additive_reconstruct(shares: Sequence[Share], *, mac_key: bytes | None = None) -> np.ndarray:
    """Sum all ``n`` additive shares back into the secret.

    Raises
    ------
    CryptoError
        A missing, duplicated, foreign or (with ``mac_key``) tampered share; the message names
        the share index.

    Examples
    --------
    >>> import numpy as np
    >>> additive_reconstruct(additive_share(np.arange(3), 2, modulus=2**61 - 1)).tolist()
    [0, 1, 2]
    """
    shares = list(shares)
    if not shares or not all(isinstance(s, Share) and s.scheme == "additive" for s in shares):
        raise CryptoError("additive_reconstruct needs additive shares")
    shares = [exact_values(s) for s in shares]
    first = shares[0]
    for s in shares[1:]:
        if s.sharing_id != first.sharing_id:
            raise CryptoError(f"share {s.index} belongs to a different sharing")
        for attr in ("n", "modulus", "shape", "frac_bits", "bound"):
            if getattr(s, attr) != getattr(first, attr):
                raise CryptoError(
                    f"share {s.index} has a different {attr} than share {first.index}"
                )
        if s.values.shape != first.values.shape:
            raise CryptoError(f"share {s.index} has the wrong length")
    indices = [s.index for s in shares]
    if len(set(indices)) != len(indices):
        raise CryptoError("a share index is given twice")
    missing = sorted(set(range(1, first.n + 1)) - set(indices))
    if missing or len(shares) != first.n:
        raise CryptoError(f"additive sharing needs all {first.n} shares; missing indices {missing}")
    if mac_key is not None:
        mac_key = check_mac_key(mac_key)
        for s in shares:
            if not s.verify(mac_key):
                raise CryptoError(
                    f"share {s.index} failed authentication (corrupted or substituted)"
                )
    total = np.zeros(first.values.size, dtype=np.uint64)
    field = None if first.modulus == RING64 else PrimeField(first.modulus)
    for s in shares:
        total = total + s.values if field is None else field.add(total, s.values)
    return decode(total, first.modulus, first.frac_bits, first.shape)
