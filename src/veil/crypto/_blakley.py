"""Blakley t-of-n secret sharing (hyperplanes over a prime field).

Blakley, "Safeguarding cryptographic keys", AFIPS National Computer Conference 1979.  The
secret is the first coordinate of a point ``P = (s, r_2, ..., r_t)`` of ``F_p^t`` whose other
coordinates are random; share ``i`` is a hyperplane ``a_i . X = b_i`` through ``P``.  Any ``t``
hyperplanes with independent normals meet exactly in ``P``; fewer leave a line (or more)
through points with every possible first coordinate.  Secrets may be vectors: one point per
element, the normals being shared by all elements.  Python integers are used throughout
(any prime size; the default field is ``2**127 - 1``), so this is meant for keys and short
vectors, "for completeness" next to the vectorized Shamir scheme.
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass

from veil.errors import ConfigError

from ._errors import CryptoError
from ._field import _is_prime
from ._random import random_int_below
from ._vss import secret_items

__all__ = ["BlakleyShare", "blakley_share", "blakley_reconstruct", "MERSENNE127"]

#: The Mersenne prime 2**127 - 1 (default Blakley field).
MERSENNE127 = (1 << 127) - 1
_MAX_SUBSET_CHECKS = 5000
_NEGLIGIBLE = 1 << 40  # 1 / (acceptable probability of degenerate hyperplanes)


@dataclass(frozen=True)
class BlakleyShare:
    """One hyperplane: normal ``a`` (public to its holder) and offsets ``b`` (one per element).

    ``sharing_id`` is a random identifier of the dealing: shares of two sharings with the same
    parameters would otherwise intersect in a point unrelated to either secret.

    References
    ----------
    G. R. Blakley, "Safeguarding cryptographic keys", AFIPS National Computer Conference, 1979.

    Examples
    --------
    >>> share = blakley_share([5, -6], threshold=2, n=3)[0]
    >>> share
    BlakleyShare(index=1, threshold=2, n=3)
    >>> len(share.normal), len(share.offsets)  # a hyperplane of F_p^2, one offset per element
    (2, 2)
    """

    index: int
    normal: tuple[int, ...]
    offsets: tuple[int, ...]
    threshold: int
    n: int
    prime: int
    scalar: bool
    sharing_id: bytes = b""

    def __repr__(self) -> str:
        return f"BlakleyShare(index={self.index}, threshold={self.threshold}, n={self.n})"


def _rank(rows: Sequence[Sequence[int]], p: int) -> int:
    m = [list(r) for r in rows]
    rank, cols = 0, len(m[0]) if m else 0
    for c in range(cols):
        piv = next((r for r in range(rank, len(m)) if m[r][c] % p), None)
        if piv is None:
            continue
        m[rank], m[piv] = m[piv], m[rank]
        inv = pow(m[rank][c], -1, p)
        m[rank] = [v * inv % p for v in m[rank]]
        for r in range(len(m)):
            if r != rank and m[r][c] % p:
                f = m[r][c]
                m[r] = [(v - f * w) % p for v, w in zip(m[r], m[rank])]
        rank += 1
    return rank


def _check_field_size(t: int, n: int, p: int) -> None:
    """Refuse parameters whose subsets are too many to check and too likely to be degenerate.

    A random ``k x k`` matrix over ``GF(p)`` is singular with probability below ``1 / (p - 1)``,
    so when the ``C(n, t) + C(n, t - 1)`` subsets are too many to check one by one, the union
    bound ``(C(n, t) + C(n, t - 1)) / (p - 1)`` must be negligible (below ``2**-40``); otherwise
    some ``t - 1`` shares could determine the secret, or some ``t`` fail to reconstruct it.
    """
    count = math.comb(n, t) + math.comb(n, t - 1)
    if count > _MAX_SUBSET_CHECKS and count * _NEGLIGIBLE >= p - 1:
        raise ConfigError(
            f"prime {p} is too small for a {t}-of-{n} Blakley sharing: the hyperplanes cannot be "
            f"checked subset by subset and random ones would be degenerate with probability up "
            f"to {count}/{p - 1}; use a prime above {count * _NEGLIGIBLE} (e.g. the default "
            "2**127 - 1)"
        )


def _normals_ok(normals: list[list[int]], t: int, p: int) -> bool:
    """Every t normals independent; every t-1 leave the secret coordinate free."""
    n = len(normals)
    if math.comb(n, t) + math.comb(n, t - 1) > _MAX_SUBSET_CHECKS:
        return True  # failure probability below 2**-40, see _check_field_size
    for sub in itertools.combinations(normals, t):
        if _rank(sub, p) < t:
            return False
    if t > 1:
        for sub in itertools.combinations(normals, t - 1):
            if _rank([r[1:] for r in sub], p) < t - 1:
                return False
    return True


def blakley_share(
    secret: int | Sequence[int], threshold: int, n: int, *, prime: int = MERSENNE127
) -> list[BlakleyShare]:
    """Split signed integer(s) into ``n`` hyperplane shares, any ``threshold`` of which suffice.

    Raises
    ------
    ConfigError
        Bad ``threshold``/``n``, a ``prime`` that is not a prime above ``2n``, or a prime too
        small for the hyperplanes to be in general position (every ``threshold`` independent,
        no ``threshold - 1`` fixing the secret) except with probability ``2**-40``.
    CryptoError
        A secret element that is not an integer with ``|s| < prime / 2``.

    Examples
    --------
    >>> shares = blakley_share(-123, 3, 5)
    >>> blakley_reconstruct([shares[0], shares[3], shares[4]])
    -123
    """
    if int(threshold) != threshold or int(n) != n or not 1 <= threshold <= n:
        raise ConfigError(f"need integers 1 <= threshold <= n, got {threshold}, {n}")
    if not _is_prime(int(prime)) or prime <= 2 * n:
        raise ConfigError("prime must be a prime larger than 2n")
    items, scalar = secret_items(secret, "Blakley")
    for s in items:
        if isinstance(s, bool) or not isinstance(s, int) or abs(s) > prime // 2:
            raise CryptoError("Blakley secrets must be integers with |s| < p/2")
    t = int(threshold)
    _check_field_size(t, int(n), int(prime))
    for _ in range(100):
        normals = [[random_int_below(prime) for _ in range(t)] for _ in range(n)]
        if _normals_ok(normals, t, prime):
            break
    else:  # pragma: no cover - only for tiny fields
        raise ConfigError(f"could not find hyperplanes in general position over p={prime}")
    sid = os.urandom(16)
    points = [[s % prime] + [random_int_below(prime) for _ in range(t - 1)] for s in items]
    return [
        BlakleyShare(
            i,
            tuple(a),
            tuple(sum(x * y for x, y in zip(a, pt)) % prime for pt in points),
            t,
            int(n),
            int(prime),
            scalar,
            sid,
        )
        for i, a in enumerate(normals, 1)
    ]


def _residues(share: BlakleyShare, p: int) -> bool:
    """Whether the share's normal and offsets are integers in ``[0, p)``."""
    values = (*share.normal, *share.offsets)
    return all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v < p for v in values)


def blakley_reconstruct(shares: Sequence[BlakleyShare]) -> int | list[int]:
    """Intersect ``threshold`` hyperplanes and return the first coordinate(s).

    Raises
    ------
    CryptoError
        Fewer than ``threshold`` shares, shares of different sharings, or dependent
        hyperplanes.

    References
    ----------
    G. R. Blakley, "Safeguarding cryptographic keys", AFIPS National Computer Conference, 1979.

    Examples
    --------
    >>> shares = blakley_share([10, -20, 30], threshold=2, n=4)
    >>> blakley_reconstruct([shares[3], shares[1]])
    [10, -20, 30]
    >>> blakley_reconstruct(shares[:1])
    Traceback (most recent call last):
    ...
    veil.errors.CryptoError: need at least 2 shares to reconstruct, got 1
    """
    shares = list(shares)
    if not shares or not all(isinstance(s, BlakleyShare) for s in shares):
        raise CryptoError("blakley_reconstruct needs Blakley shares")
    first = shares[0]
    t, p = first.threshold, first.prime
    for s in shares:
        if (s.threshold, s.prime, s.n, len(s.offsets), s.sharing_id) != (
            t,
            p,
            first.n,
            len(first.offsets),
            first.sharing_id,
        ):
            raise CryptoError(f"share {s.index} belongs to a different sharing")
    for s in shares:  # a malformed hyperplane would shift the columns: garbage, not an error
        if s.scalar != first.scalar or len(s.normal) != t or not _residues(s, p):
            raise CryptoError(f"share {s.index} is malformed (not a hyperplane of this sharing)")
    if len({s.index for s in shares}) != len(shares):
        raise CryptoError("a share index is given twice")
    if len(shares) < t:
        raise CryptoError(f"need at least {t} shares to reconstruct, got {len(shares)}")
    basis = shares[:t]
    # Gauss-Jordan on [A | B] where B holds one column of offsets per secret element
    m = [list(s.normal) + list(s.offsets) for s in basis]
    for c in range(t):
        piv = next((r for r in range(c, t) if m[r][c] % p), None)
        if piv is None:
            raise CryptoError("the hyperplanes are not independent")
        m[c], m[piv] = m[piv], m[c]
        inv = pow(m[c][c], -1, p)
        m[c] = [v * inv % p for v in m[c]]
        for r in range(t):
            if r != c and m[r][c]:
                f = m[r][c]
                m[r] = [(v - f * w) % p for v, w in zip(m[r], m[c])]
    for s in shares[t:]:  # extra shares must pass through the same point(s)
        for k, b in enumerate(s.offsets):
            point = [m[r][t + k] for r in range(t)]
            if sum(x * y for x, y in zip(s.normal, point)) % p != b:
                raise CryptoError(f"share {s.index} is inconsistent with the others")
    out = [v - p if v > p // 2 else v for v in m[0][t:]]
    return out[0] if first.scalar else out
