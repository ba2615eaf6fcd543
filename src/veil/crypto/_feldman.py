"""Feldman verifiable secret sharing of integers (scalars or small vectors).

Feldman, "A practical scheme for non-interactive verifiable secret sharing", FOCS 1987.
Shamir shares are taken in ``Z_q`` where ``q`` is the prime order of the quadratic-residue
subgroup of a safe-prime group ``Z_p^*`` (``p = 2q + 1``, generator ``g = 4``).  The dealer
publishes commitments ``C_j = g^{a_j} mod p`` to the polynomial coefficients; anyone can check
a share ``(i, s_i)`` with ``g^{s_i} = prod_j C_j^{i^j}``.  A corrupted or substituted share is
therefore detected and named at reconstruction, even after homomorphic additions (shares add,
commitments multiply).  The default group is the 2048-bit MODP group 14 of RFC 3526.

Security notes: the commitments reveal ``g^s``, so the secret is hidden only computationally
(discrete logarithm) and must come from a large space; use Pedersen commitments when the
secret has low entropy.  Cost: one modular exponentiation per coefficient and element, so this
is meant for scalars and vectors of up to a few hundred elements (use HMAC-authenticated
Shamir shares for large vectors).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from veil.errors import ConfigError

from ._errors import CryptoError
from ._gmp import require_gmpy2
from ._random import random_bits, random_int_below
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
    "FeldmanGroup",
    "FeldmanShare",
    "FeldmanCommitments",
    "feldman_share",
    "feldman_verify",
    "feldman_reconstruct",
]

_RFC3526_2048 = int(
    "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22"
    "514A08798E3404DDEF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6"
    "F44C42E9A637ED6B0BFF5CB6F406B7EDEE386BFB5A899FA5AE9F24117C4B1FE649286651ECE45B3D"
    "C2007CB8A163BF0598DA48361C55D39A69163FA8FD24CF5F83655D23DCA3AD961C62F356208552BB"
    "9ED529077096966D670C354E4ABC9804F1746C08CA18217C32905E462E36CE3BE39E772C180E8603"
    "9B2783A2EC07A28FB5C55DF06F4C52C9DE2BCBF6955817183995497CEA956AE515D2261898FA0510"
    "15728E5A8AACAA68FFFFFFFFFFFFFFFF",
    16,
)


@dataclass(frozen=True)
class FeldmanGroup:
    """A safe-prime group: modulus ``p = 2q + 1``, subgroup order ``q``, generator ``g``.

    Examples
    --------
    >>> grp = FeldmanGroup.default()
    >>> grp.p.bit_length(), grp.g
    (2048, 4)
    """

    p: int
    q: int
    g: int = 4

    def __post_init__(self) -> None:
        """Refuse anything but a safe-prime group with ``g`` generating the order-``q`` subgroup.

        Binding and hiding rest on discrete logarithms in a group of prime order ``q``; with a
        composite ``p`` or ``q``, or a ``g`` outside the quadratic residues (``g^s`` then leaks
        ``s mod 2``), verification no longer means what it says.
        """
        p, q, g = self.p, self.q, self.g
        if (p, q, g) == (_RFC3526_2048, (_RFC3526_2048 - 1) // 2, 4):
            return  # RFC 3526 group 14: checked by the test suite, skip 50 ms of primality tests
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (p, q, g)):
            raise ConfigError("FeldmanGroup parameters must be integers")
        if p != 2 * q + 1 or q < 3:
            raise ConfigError("a Feldman group needs a safe prime p = 2q + 1")
        gmp = require_gmpy2()
        if not (gmp.is_prime(q, 25) and gmp.is_prime(p, 25)):
            raise ConfigError("a Feldman group needs p = 2q + 1 with p and q prime")
        if not 1 < g < p - 1 or gmp.legendre(g, p) != 1:
            raise ConfigError("g must be a quadratic residue other than 1 (order q) modulo p")

    @classmethod
    def default(cls) -> FeldmanGroup:
        """The 2048-bit MODP group 14 of RFC 3526 (a safe prime)."""
        return cls(_RFC3526_2048, (_RFC3526_2048 - 1) // 2, 4)

    @classmethod
    def generate(cls, bits: int, *, insecure: bool = False) -> FeldmanGroup:
        """Generate a fresh safe-prime group of ``bits`` bits (below 2048 needs ``insecure``)."""
        if bits < 2048 and not insecure:
            raise ConfigError("Feldman groups below 2048 bits need insecure=True")
        if bits < 16:
            raise ConfigError("bits must be at least 16")
        gmp = require_gmpy2()
        while True:
            q = gmp.mpz(random_bits(bits - 1)) | (gmp.mpz(1) << (bits - 2)) | 1
            if gmp.is_prime(q, 30) and gmp.is_prime(2 * q + 1, 30):
                return cls(int(2 * q + 1), int(q), 4)


@dataclass(frozen=True)
class FeldmanShare:
    """Share ``index`` of a Feldman sharing: one ``Z_q`` value per secret element.

    Shares of two sharings with the same ``threshold`` and ``n`` add index by index into shares
    of the sum of the secrets; add the commitments too to verify them.

    References
    ----------
    P. Feldman, "A practical scheme for non-interactive verifiable secret sharing", FOCS, 1987.

    Examples
    --------
    >>> a, comm_a = feldman_share(1000, 2, 3)
    >>> b, comm_b = feldman_share(-1, 2, 3)
    >>> total = [x + y for x, y in zip(a, b)]
    >>> total[0]
    FeldmanShare(index=1, threshold=2, n=3)
    >>> feldman_reconstruct(total[1:], comm_a + comm_b)
    999
    """

    index: int
    values: tuple[int, ...]
    threshold: int
    n: int

    def __repr__(self) -> str:
        return f"FeldmanShare(index={self.index}, threshold={self.threshold}, n={self.n})"

    def __add__(self, other: object) -> FeldmanShare:
        if not isinstance(other, FeldmanShare):
            return NotImplemented
        check_same_layout(self, other, "Feldman")
        return FeldmanShare(
            self.index,
            tuple(a + b for a, b in zip(self.values, other.values)),
            self.threshold,
            self.n,
        )


@dataclass(frozen=True)
class FeldmanCommitments:
    """Public commitments ``C[k][j] = g^{a_{k,j}} mod p`` (element ``k``, coefficient ``j``).

    Published by the dealer next to the shares; ``+`` multiplies them element-wise into the
    commitments of the sum of two sharings.

    References
    ----------
    P. Feldman, "A practical scheme for non-interactive verifiable secret sharing", FOCS, 1987.

    Examples
    --------
    >>> shares, comm = feldman_share([3, 4], 2, 3)
    >>> len(comm.commitments), len(comm.commitments[0])  # 2 elements, threshold coefficients
    (2, 2)
    >>> comm.commitments[0][0] == pow(comm.group.g, 3, comm.group.p)  # C_0 = g^s
    True
    """

    group: FeldmanGroup
    commitments: tuple[tuple[int, ...], ...]
    scalar: bool = False

    def __add__(self, other: object) -> FeldmanCommitments:
        """Commitments of the sum of two sharings (element-wise products)."""
        if not isinstance(other, FeldmanCommitments):
            return NotImplemented
        if other.group != self.group or len(other.commitments) != len(self.commitments):
            raise CryptoError("cannot combine commitments of different groups or layouts")
        return FeldmanCommitments(
            self.group,
            multiply_commitments(self.commitments, other.commitments, self.group.p),
            self.scalar,
        )


def feldman_share(
    secret: int | Sequence[int], threshold: int, n: int, *, group: FeldmanGroup | None = None
) -> tuple[list[FeldmanShare], FeldmanCommitments]:
    """Shamir-share integers in ``Z_q`` with Feldman commitments.

    Parameters
    ----------
    secret : int or sequence of int
        Signed integers with ``|s| < q / 2``.
    threshold, n : int
        Any ``threshold`` of the ``n`` shares reconstruct.
    group : FeldmanGroup, optional
        Defaults to RFC 3526 group 14 (2048 bits).

    Examples
    --------
    >>> shares, comm = feldman_share([42, -7], 2, 3)
    >>> all(feldman_verify(s, comm) for s in shares)
    True
    >>> feldman_reconstruct(shares[1:], comm)
    [42, -7]
    """
    grp = group or FeldmanGroup.default()
    check_share_params(threshold, n, grp.q)
    items, scalar = secret_items(secret, "Feldman")
    gmp = require_gmpy2()
    values: list[list[int]] = [[] for _ in range(n)]
    comms = []
    for s in items:
        check_secret(s, grp.q, "Feldman")
        coeffs = [s % grp.q] + [random_int_below(grp.q) for _ in range(threshold - 1)]
        comms.append(tuple(int(gmp.powmod(grp.g, a, grp.p)) for a in coeffs))
        for i in range(1, n + 1):
            values[i - 1].append(poly_eval(coeffs, i, grp.q))
    shares = [FeldmanShare(i, tuple(v), int(threshold), int(n)) for i, v in enumerate(values, 1)]
    return shares, FeldmanCommitments(grp, tuple(comms), scalar)


def feldman_verify(share: FeldmanShare, commitments: FeldmanCommitments) -> bool:
    """Check a share against the public commitments (``g^{s_i} == prod_j C_j^{i^j}``).

    References
    ----------
    P. Feldman, "A practical scheme for non-interactive verifiable secret sharing", FOCS, 1987.

    Examples
    --------
    >>> import dataclasses
    >>> shares, comm = feldman_share(42, 2, 3)
    >>> feldman_verify(shares[0], comm)
    True
    >>> forged = dataclasses.replace(shares[0], values=(shares[0].values[0] + 1,))
    >>> feldman_verify(forged, comm)
    False
    """
    grp = commitments.group
    gmp = require_gmpy2()

    def lhs(k: int) -> Any:
        return gmp.powmod(grp.g, share.values[k] % grp.q, grp.p)

    return matches_commitments(share, commitments.commitments, grp.p, grp.q, gmp, lhs)


def feldman_reconstruct(
    shares: Sequence[FeldmanShare], commitments: FeldmanCommitments
) -> int | list[int]:
    """Verify every share, then reconstruct by Lagrange interpolation in ``Z_q``.

    Raises
    ------
    CryptoError
        A share fails verification (the message names every bad index), indices repeat, or
        fewer than ``threshold`` shares are given.

    References
    ----------
    P. Feldman, "A practical scheme for non-interactive verifiable secret sharing", FOCS, 1987.

    Examples
    --------
    >>> import dataclasses
    >>> shares, comm = feldman_share([42, -7], 2, 3)
    >>> feldman_reconstruct([shares[2], shares[0]], comm)
    [42, -7]
    >>> forged = dataclasses.replace(shares[1], values=(1, 2))
    >>> feldman_reconstruct([shares[0], forged], comm)
    Traceback (most recent call last):
    ...
    veil.errors.CryptoError: share(s) [2] failed Feldman verification (corrupted or substituted)
    """
    return verified_reconstruct(shares, commitments, feldman_verify, "Feldman", commitments.group.q)
