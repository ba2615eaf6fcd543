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

from ._errors import CryptoError
from ._feldman import FeldmanGroup
from ._gmp import require_gmpy2
from ._random import random_int_below
from ._vss import (
    check_same_layout,
    check_secret,
    check_share_params,
    matches_commitments,
    multiply_commitments,
    poly_eval,
    secret_items,
    verified_reconstruct,
)

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
    """Share ``index``: secret-polynomial values and blinding-polynomial values.

    Shares of two sharings with the same ``threshold`` and ``n`` add index by index into shares
    of the sum; add the commitments too.  This tallies votes without opening any ballot.

    References
    ----------
    T. P. Pedersen, "Non-interactive and information-theoretic secure verifiable secret
    sharing", CRYPTO, 1991.

    Examples
    --------
    >>> votes = [pedersen_share(v, 2, 3) for v in (1, 0, 1)]  # three yes/no ballots
    >>> tally = [a + b + c for a, b, c in zip(*(shares for shares, _ in votes))]
    >>> tally[0]
    PedersenShare(index=1, threshold=2, n=3)
    >>> comm = votes[0][1] + votes[1][1] + votes[2][1]
    >>> pedersen_reconstruct(tally[:2], comm)
    2
    """

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
        check_same_layout(self, other, "Pedersen")
        return PedersenShare(
            self.index,
            tuple(a + b for a, b in zip(self.values, other.values)),
            tuple(a + b for a, b in zip(self.blindings, other.blindings)),
            self.threshold,
            self.n,
        )


@dataclass(frozen=True)
class PedersenCommitments:
    """Public commitments ``C[k][j] = g^{a_kj} h^{b_kj} mod p``.

    Unlike Feldman commitments they do not reveal ``g^s``: equal secrets get unrelated
    commitments.

    References
    ----------
    T. P. Pedersen, "Non-interactive and information-theoretic secure verifiable secret
    sharing", CRYPTO, 1991.

    Examples
    --------
    >>> _, comm1 = pedersen_share(1, 2, 3)
    >>> _, comm2 = pedersen_share(1, 2, 3)
    >>> comm1.commitments[0][0] == comm2.commitments[0][0]  # hiding: blinded by h^b
    False
    >>> comm1.h == pedersen_generator(comm1.group)
    True
    """

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
        combined = multiply_commitments(self.commitments, other.commitments, self.group.p)
        return PedersenCommitments(self.group, self.h, combined, self.scalar)


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
    check_share_params(threshold, n, grp.q)
    gmp = require_gmpy2()
    h = pedersen_generator(grp)
    items, scalar = secret_items(secret, "Pedersen")
    vals: list[list[int]] = [[] for _ in range(n)]
    blinds: list[list[int]] = [[] for _ in range(n)]
    comms = []
    for s in items:
        check_secret(s, grp.q, "Pedersen")
        a = [s % grp.q] + [random_int_below(grp.q) for _ in range(threshold - 1)]
        b = [random_int_below(grp.q) for _ in range(threshold)]
        comms.append(
            tuple(
                int(gmp.powmod(grp.g, aj, grp.p) * gmp.powmod(h, bj, grp.p) % grp.p)
                for aj, bj in zip(a, b)
            )
        )
        for i in range(1, n + 1):
            vals[i - 1].append(poly_eval(a, i, grp.q))
            blinds[i - 1].append(poly_eval(b, i, grp.q))
    shares = [
        PedersenShare(i, tuple(vals[i - 1]), tuple(blinds[i - 1]), int(threshold), int(n))
        for i in range(1, n + 1)
    ]
    return shares, PedersenCommitments(grp, h, tuple(comms), scalar)


def pedersen_verify(share: PedersenShare, commitments: PedersenCommitments) -> bool:
    """Check ``g^{s_i} h^{t_i} == prod_j C_j^{i^j}`` for every element of the share.

    References
    ----------
    T. P. Pedersen, "Non-interactive and information-theoretic secure verifiable secret
    sharing", CRYPTO, 1991.

    Examples
    --------
    >>> import dataclasses
    >>> shares, comm = pedersen_share(0, 2, 3)
    >>> pedersen_verify(shares[2], comm)
    True
    >>> flipped = dataclasses.replace(shares[2], values=(shares[2].values[0] + 1,))
    >>> pedersen_verify(flipped, comm)
    False
    """
    grp, h = commitments.group, commitments.h
    gmp = require_gmpy2()

    def lhs(k: int) -> Any:
        s, t = share.values[k] % grp.q, share.blindings[k] % grp.q
        return gmp.powmod(grp.g, s, grp.p) * gmp.powmod(h, t, grp.p) % grp.p

    return matches_commitments(share, commitments.commitments, grp.p, grp.q, gmp, lhs)


def pedersen_reconstruct(
    shares: Sequence[PedersenShare], commitments: PedersenCommitments
) -> int | list[int]:
    """Verify every share (naming bad indices in a :class:`CryptoError`), then interpolate.

    References
    ----------
    T. P. Pedersen, "Non-interactive and information-theoretic secure verifiable secret
    sharing", CRYPTO, 1991.

    Examples
    --------
    >>> import dataclasses
    >>> shares, comm = pedersen_share([1, 0], 2, 3)
    >>> pedersen_reconstruct(shares[1:], comm)
    [1, 0]
    >>> forged = dataclasses.replace(shares[0], values=(0, 1))
    >>> pedersen_reconstruct([forged, shares[1]], comm)
    Traceback (most recent call last):
    ...
    veil.errors.CryptoError: share(s) [1] failed Pedersen verification (corrupted or substituted)
    """
    return verified_reconstruct(
        shares, commitments, pedersen_verify, "Pedersen", commitments.group.q
    )
