"""Pedersen verifiable secret sharing: information-theoretically hiding commitments.

Pedersen, "Non-interactive and information-theoretic secure verifiable secret sharing",
CRYPTO 1991.  Like Feldman VSS (:mod:`._feldman`) but each coefficient ``a_j`` is committed as
``C_j = g^{a_j} h^{b_j} mod p`` with a random blinding polynomial ``b``; share ``i`` is the pair
``(f(i), b(i))``.  The commitments reveal nothing about the secret (even to an unbounded
adversary), so low-entropy secrets such as votes are safe; binding (a dealer or share holder
cannot open a commitment two ways) holds as long as nobody knows ``log_g h``.  ``h`` is derived
from the group by hashing into the quadratic-residue subgroup ("nothing up my sleeve").
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from veil.errors import ConfigError

from ._errors import CryptoError
from ._feldman import FeldmanGroup
from ._gmp import require_gmpy2
from ._random import random_int_below
from ._shamir import lagrange_at

__all__ = [
    "PedersenShare",
    "PedersenCommitments",
    "pedersen_generator",
    "pedersen_share",
    "pedersen_verify",
    "pedersen_reconstruct",
]


def pedersen_generator(group: FeldmanGroup) -> int:
    """Second generator ``h`` of the order-``q`` subgroup with unknown ``log_g h``.

    Examples
    --------
    >>> grp = FeldmanGroup.default()
    >>> h = pedersen_generator(grp)
    >>> pow(h, grp.q, grp.p) == 1 and h not in (1, grp.g)
    True
    """
    nbytes = (group.p.bit_length() + 7) // 8 + 16
    counter = 0
    while True:
        seed = f"veil-pedersen-h|{group.p}|{group.g}|{counter}".encode()
        x = int.from_bytes(hashlib.shake_256(seed).digest(nbytes), "big") % group.p
        h = pow(x, 2, group.p)  # squares lie in the quadratic-residue subgroup of order q
        if h not in (0, 1, group.g):
            return h
        counter += 1  # pragma: no cover


@dataclass(frozen=True)
class PedersenShare:
    """Share ``index``: secret-polynomial values and blinding-polynomial values."""

    index: int
    values: tuple[int, ...]
    blindings: tuple[int, ...]
    threshold: int
    n: int

    def __repr__(self) -> str:
        return f"PedersenShare(index={self.index}, threshold={self.threshold}, n={self.n})"

    def __add__(self, other: object) -> PedersenShare:
        if not isinstance(other, PedersenShare):
            return NotImplemented
        if (other.index, other.threshold, other.n, len(other.values)) != (
            self.index,
            self.threshold,
            self.n,
            len(self.values),
        ):
            raise CryptoError("cannot add Pedersen shares of different parties or layouts")
        return PedersenShare(
            self.index,
            tuple(a + b for a, b in zip(self.values, other.values)),
            tuple(a + b for a, b in zip(self.blindings, other.blindings)),
            self.threshold,
            self.n,
        )


@dataclass(frozen=True)
class PedersenCommitments:
    """Public commitments ``C[k][j] = g^{a_kj} h^{b_kj} mod p``."""

    group: FeldmanGroup
    h: int
    commitments: tuple[tuple[int, ...], ...]
    scalar: bool = False

    def __add__(self, other: object) -> PedersenCommitments:
        if not isinstance(other, PedersenCommitments):
            return NotImplemented
        if (other.group, other.h, len(other.commitments)) != (
            self.group,
            self.h,
            len(self.commitments),
        ):
            raise CryptoError("cannot combine commitments of different groups or layouts")
        p = self.group.p
        combined = tuple(
            tuple(a * b % p for a, b in zip(ca, cb))
            for ca, cb in zip(self.commitments, other.commitments)
        )
        return PedersenCommitments(self.group, self.h, combined, self.scalar)


def _poly(coeffs: Sequence[int], x: int, q: int) -> int:
    acc = 0
    for a in reversed(coeffs):
        acc = (acc * x + a) % q
    return acc


def pedersen_share(
    secret: int | Sequence[int], threshold: int, n: int, *, group: FeldmanGroup | None = None
) -> tuple[list[PedersenShare], PedersenCommitments]:
    """Shamir-share integers in ``Z_q`` with hiding Pedersen commitments.

    Examples
    --------
    >>> shares, comm = pedersen_share(1, 2, 3)  # a low-entropy secret (a yes vote)
    >>> all(pedersen_verify(s, comm) for s in shares)
    True
    >>> pedersen_reconstruct(shares[:2], comm)
    1
    """
    grp = group or FeldmanGroup.default()
    if int(threshold) != threshold or int(n) != n or not 1 <= threshold <= n or n >= grp.q:
        raise ConfigError(f"need integers 1 <= threshold <= n, got {threshold}, {n}")
    gmp = require_gmpy2()
    h = pedersen_generator(grp)
    items = [secret] if isinstance(secret, int) else list(secret)
    vals: list[list[int]] = [[] for _ in range(n)]
    blinds: list[list[int]] = [[] for _ in range(n)]
    comms = []
    for s in items:
        if isinstance(s, bool) or not isinstance(s, int) or abs(s) > grp.q // 2:
            raise CryptoError("Pedersen secrets must be integers with |s| < q/2")
        a = [s % grp.q] + [random_int_below(grp.q) for _ in range(threshold - 1)]
        b = [random_int_below(grp.q) for _ in range(threshold)]
        comms.append(
            tuple(
                int(gmp.powmod(grp.g, aj, grp.p) * gmp.powmod(h, bj, grp.p) % grp.p)
                for aj, bj in zip(a, b)
            )
        )
        for i in range(1, n + 1):
            vals[i - 1].append(_poly(a, i, grp.q))
            blinds[i - 1].append(_poly(b, i, grp.q))
    shares = [
        PedersenShare(i, tuple(vals[i - 1]), tuple(blinds[i - 1]), int(threshold), int(n))
        for i in range(1, n + 1)
    ]
    return shares, PedersenCommitments(grp, h, tuple(comms), isinstance(secret, int))


def pedersen_verify(share: PedersenShare, commitments: PedersenCommitments) -> bool:
    """Check ``g^{s_i} h^{t_i} == prod_j C_j^{i^j}`` for every element of the share."""
    grp, h = commitments.group, commitments.h
    gmp = require_gmpy2()
    if len(share.values) != len(commitments.commitments) or len(share.blindings) != len(
        share.values
    ):
        return False
    for s, t, comm in zip(share.values, share.blindings, commitments.commitments):
        if len(comm) != share.threshold:
            return False
        rhs: Any = gmp.mpz(1)
        for j, c in enumerate(comm):
            rhs = rhs * gmp.powmod(c, pow(share.index, j, grp.q), grp.p) % grp.p
        lhs = gmp.powmod(grp.g, s % grp.q, grp.p) * gmp.powmod(h, t % grp.q, grp.p) % grp.p
        if lhs != rhs:
            return False
    return True


def pedersen_reconstruct(
    shares: Sequence[PedersenShare], commitments: PedersenCommitments
) -> int | list[int]:
    """Verify every share (naming bad indices in a :class:`CryptoError`), then interpolate."""
    shares = list(shares)
    if not shares:
        raise CryptoError("no shares given")
    bad = [s.index for s in shares if not pedersen_verify(s, commitments)]
    if bad:
        raise CryptoError(f"share(s) {bad} failed Pedersen verification (corrupted or substituted)")
    if len({s.index for s in shares}) != len(shares):
        raise CryptoError("a share index is given twice")
    t = shares[0].threshold
    if len(shares) < t:
        raise CryptoError(f"need at least {t} shares to reconstruct, got {len(shares)}")
    q = commitments.group.q
    basis = shares[:t]
    lam = lagrange_at([s.index for s in basis], 0, q)
    out = []
    for k in range(len(basis[0].values)):
        v = sum(lj * s.values[k] for lj, s in zip(lam, basis)) % q
        out.append(v - q if v > q // 2 else v)
    return out[0] if commitments.scalar else out
