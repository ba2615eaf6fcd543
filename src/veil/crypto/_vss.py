"""Code shared by the Feldman and Pedersen verifiable secret-sharing schemes.

Feldman, "A practical scheme for non-interactive verifiable secret sharing", FOCS 1987;
Pedersen, "Non-interactive and information-theoretic secure verifiable secret sharing",
CRYPTO 1991.  Both deal Shamir shares in ``Z_q`` and check a share ``i`` against per-coefficient
commitments ``C_j`` through ``prod_j C_j^{i^j} mod p``; they differ only in what is committed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol, TypeVar

import numpy as np

from veil.errors import ConfigError

from ._errors import CryptoError
from ._shamir import lagrange_at


class _Share(Protocol):
    index: int
    values: tuple[int, ...]
    threshold: int
    n: int


class _Commitments(Protocol):
    scalar: bool


_S = TypeVar("_S", bound=_Share)
_C = TypeVar("_C", bound=_Commitments)


def check_share_params(threshold: int, n: int, q: int) -> None:
    """Refuse a ``threshold``-of-``n`` sharing that is not ``1 <= threshold <= n < q``.

    Parameters
    ----------
    threshold, n : int
        Requested threshold and number of shares (integral values).
    q : int
        Order of the group the shares live in.

    Raises
    ------
    ConfigError
        When the parameters are not integers with ``1 <= threshold <= n < q``.
    """
    if int(threshold) != threshold or int(n) != n or not 1 <= threshold <= n or n >= q:
        raise ConfigError(f"need integers 1 <= threshold <= n, got {threshold}, {n}")


def secret_items(secret: object, scheme: str) -> tuple[list[int], bool]:
    """The secret as a list of Python ints, and whether it was a single integer.

    Parameters
    ----------
    secret : int or sequence of int
        A (numpy or Python) integer, or an iterable (list, tuple, array) of them.
    scheme : str
        ``"Feldman"``, ``"Pedersen"`` or ``"Blakley"``, for the error message.

    Returns
    -------
    items : list of int
        The elements (numpy integers converted to ``int``; other types are left for
        :func:`check_secret` to refuse).
    scalar : bool
        True when ``secret`` was one integer.

    Raises
    ------
    CryptoError
        A float, text, bytes (which would otherwise be dealt as a list of byte values), or any
        other object that is neither an integer nor a sequence.

    Examples
    --------
    >>> secret_items(7, "Feldman"), secret_items([1, -2], "Feldman")
    (([7], True), ([1, -2], False))
    """
    if isinstance(secret, np.integer):
        return [int(secret)], True
    if isinstance(secret, int) and not isinstance(secret, bool):
        return [secret], True
    if isinstance(secret, (str, bytes, bytearray, memoryview)) or not isinstance(secret, Iterable):
        raise CryptoError(
            f"{scheme} secrets must be an integer or a sequence of integers, "
            f"got {type(secret).__name__}"
        )
    values = np.asarray(secret, dtype=object).ravel() if isinstance(secret, np.ndarray) else secret
    return [int(v) if isinstance(v, np.integer) else v for v in values], False


def check_secret(s: object, q: int, scheme: str) -> None:
    """Refuse a secret element that is not an integer with ``|s| <= q // 2``.

    Parameters
    ----------
    s : object
        One element of the secret.
    q : int
        Group order.
    scheme : str
        ``"Feldman"`` or ``"Pedersen"``, for the error message.

    Raises
    ------
    CryptoError
        When ``s`` is a bool, not an int, or too large in magnitude.
    """
    if isinstance(s, bool) or not isinstance(s, int) or abs(s) > q // 2:
        raise CryptoError(f"{scheme} secrets must be integers with |s| < q/2")


def well_formed(share: _Share, q: int) -> bool:
    """Whether a share has an index in ``[1, q)`` and integer values.

    Exponents are reduced modulo ``q``, so index ``i + q`` would pass the commitment check of
    index ``i`` and then make two interpolation points coincide; index ``0`` is the secret
    itself, never a share.

    Parameters
    ----------
    share : share
        A Feldman or Pedersen share (possibly received from another party).
    q : int
        Group order.

    Returns
    -------
    bool
        ``False`` for a share no honest dealer produces.
    """
    index = share.index
    if isinstance(index, bool) or not isinstance(index, int) or not 1 <= index < q:
        return False
    values = list(share.values) + list(getattr(share, "blindings", ()))
    return all(isinstance(v, int) and not isinstance(v, bool) for v in values)


def poly_eval(coeffs: Sequence[int], x: int, q: int) -> int:
    """Evaluate ``sum_j coeffs[j] x^j mod q`` by Horner's rule.

    Parameters
    ----------
    coeffs : sequence of int
        Polynomial coefficients, constant term first.
    x, q : int
        Evaluation point and modulus.

    Returns
    -------
    int
        The value in ``[0, q)``.

    Examples
    --------
    >>> poly_eval([1, 2, 3], 2, 101)  # 1 + 2*2 + 3*4
    17
    """
    acc = 0
    for a in reversed(coeffs):
        acc = (acc * x + a) % q
    return acc


def commitment_product(comm: Sequence[int], index: int, p: int, q: int, gmp: Any) -> Any:
    """``prod_j comm[j]^{index^j} mod p``: what a valid share ``index`` must match.

    Parameters
    ----------
    comm : sequence of int
        Commitments to the coefficients of one element's polynomial.
    index : int
        The share's index ``i``.
    p, q : int
        Group modulus and subgroup order (exponents are reduced mod ``q``).
    gmp : module
        The ``gmpy2`` module.

    Returns
    -------
    gmpy2.mpz
        The product.
    """
    rhs: Any = gmp.mpz(1)
    for j, c in enumerate(comm):
        rhs = rhs * gmp.powmod(c, pow(index, j, q), p) % p
    return rhs


def matches_commitments(
    share: _Share,
    table: Sequence[Sequence[int]],
    p: int,
    q: int,
    gmp: Any,
    lhs: Callable[[int], Any],
) -> bool:
    """Whether a share is well formed and every element ``k`` has ``lhs(k) == prod_j C_kj^{i^j}``.

    Parameters
    ----------
    share : share
        A Feldman or Pedersen share; a Pedersen share's ``blindings`` must have one entry per
        value.
    table : sequence of sequence of int
        The commitments, one row of ``threshold`` coefficients per element.
    p, q : int
        Group modulus and subgroup order.
    gmp : module
        The ``gmpy2`` module.
    lhs : callable
        ``lhs(k)``: the scheme's commitment to element ``k`` of the share (``g^{s_k}`` for
        Feldman, ``g^{s_k} h^{t_k}`` for Pedersen), mod ``p``.

    Returns
    -------
    bool
        ``False`` at the first malformed part or mismatching element.
    """
    if not well_formed(share, q):
        return False
    blindings = getattr(share, "blindings", share.values)  # Feldman: no blindings
    if len(share.values) != len(table) or len(blindings) != len(share.values):
        return False
    for k, comm in enumerate(table):
        if len(comm) != share.threshold:
            return False
        if lhs(k) != commitment_product(comm, share.index, p, q, gmp):
            return False
    return True


def multiply_commitments(
    a: tuple[tuple[int, ...], ...], b: tuple[tuple[int, ...], ...], p: int
) -> tuple[tuple[int, ...], ...]:
    """Element-wise product mod ``p`` of two commitment tables (commitments of a sum).

    Parameters
    ----------
    a, b : tuple of tuple of int
        Commitment tables of the same layout.
    p : int
        Group modulus.

    Returns
    -------
    tuple of tuple of int
        ``a[k][j] * b[k][j] mod p``.
    """
    return tuple(tuple(x * y % p for x, y in zip(ca, cb)) for ca, cb in zip(a, b))


def check_same_layout(a: _Share, b: _Share, scheme: str) -> None:
    """Refuse to add two shares of different parties, thresholds or lengths.

    Parameters
    ----------
    a, b : share
        Feldman or Pedersen shares.
    scheme : str
        ``"Feldman"`` or ``"Pedersen"``, for the error message.

    Raises
    ------
    CryptoError
        When index, threshold, ``n`` or the number of values differ.
    """
    if (b.index, b.threshold, b.n, len(b.values)) != (a.index, a.threshold, a.n, len(a.values)):
        raise CryptoError(f"cannot add {scheme} shares of different parties or layouts")


def verified_reconstruct(
    shares: Sequence[_S], commitments: _C, verify: Callable[[_S, _C], bool], scheme: str, q: int
) -> int | list[int]:
    """Verify every share, then reconstruct signed integers by Lagrange interpolation mod ``q``.

    Parameters
    ----------
    shares : sequence of share
        At least ``threshold`` shares with distinct indices.
    commitments : commitments
        The dealer's public commitments (``commitments.scalar`` selects the return type).
    verify : callable
        The scheme's share check.
    scheme : str
        ``"Feldman"`` or ``"Pedersen"``, for the error message.
    q : int
        Group order.

    Returns
    -------
    int or list of int
        The secret, mapped back to ``(-q/2, q/2]``.

    Raises
    ------
    CryptoError
        A share fails verification (the message names every bad index), indices repeat, or
        fewer than ``threshold`` shares are given.
    """
    shares = list(shares)
    if not shares:
        raise CryptoError("no shares given")
    bad = [s.index for s in shares if not verify(s, commitments)]
    if bad:
        raise CryptoError(f"share(s) {bad} failed {scheme} verification (corrupted or substituted)")
    if len({s.index for s in shares}) != len(shares):
        raise CryptoError("a share index is given twice")
    t = shares[0].threshold
    if len(shares) < t:
        raise CryptoError(f"need at least {t} shares to reconstruct, got {len(shares)}")
    basis = shares[:t]
    lam = lagrange_at([s.index for s in basis], 0, q)
    out = []
    for k in range(len(basis[0].values)):
        v = sum(lj * s.values[k] for lj, s in zip(lam, basis)) % q
        out.append(v - q if v > q // 2 else v)
    return out[0] if commitments.scalar else out
