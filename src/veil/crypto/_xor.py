"""XOR n-of-n secret sharing of byte strings.

The secret ``s`` is split as ``s = r_1 xor ... xor r_n`` with ``r_1 .. r_{n-1}`` uniform random
byte strings of the same length: any ``n - 1`` shares are uniform and reveal nothing but the
length.  It is the simplest perfectly secure scheme (a one-time pad per share).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from veil.errors import ConfigError

from ._errors import CryptoError

__all__ = ["xor_share", "xor_reconstruct"]


def xor_share(secret: bytes, n: int) -> list[bytes]:
    """Split ``secret`` into ``n`` byte strings whose XOR is ``secret``.

    Examples
    --------
    >>> shares = xor_share(b"attack at dawn", 3)
    >>> xor_reconstruct(shares)
    b'attack at dawn'
    """
    if not isinstance(secret, (bytes, bytearray, memoryview)):
        raise ConfigError("xor_share needs bytes (encode text first, e.g. s.encode('utf-8'))")
    if int(n) != n or n < 1:
        raise ConfigError(f"n must be a positive integer, got {n}")
    data = np.frombuffer(bytes(secret), dtype=np.uint8)
    shares = [os.urandom(data.size) for _ in range(n - 1)]
    last = data.copy()
    for s in shares:
        last ^= np.frombuffer(s, dtype=np.uint8)
    return [*shares, last.tobytes()]


def xor_reconstruct(shares: Sequence[bytes]) -> bytes:
    """XOR all shares together (every one of the ``n`` shares is needed).

    Examples
    --------
    >>> xor_reconstruct([b"\\x01", b"\\x03"])
    b'\\x02'
    """
    shares = list(shares)
    if not shares:
        raise CryptoError("no shares given")
    if not all(isinstance(s, (bytes, bytearray, memoryview)) for s in shares):
        raise CryptoError("XOR shares must be bytes")
    lengths = {len(s) for s in shares}
    if len(lengths) != 1:
        raise CryptoError(f"XOR shares have different lengths {sorted(lengths)}")
    out = np.zeros(lengths.pop(), dtype=np.uint8)
    for s in shares:
        out ^= np.frombuffer(bytes(s), dtype=np.uint8)
    return out.tobytes()
