"""Cryptography for collaboration: secret sharing and Paillier encryption.

Secret sharing (this package):

* :func:`xor_share` / :func:`xor_reconstruct` -- n-of-n XOR sharing of bytes;
* :func:`additive_share` / :func:`additive_reconstruct` -- n-of-n additive sharing of integer or
  fixed-point arrays over ``Z_{2**64}`` or a prime field;
* :func:`shamir_share` / :func:`shamir_reconstruct` -- Shamir t-of-n, vectorized over arrays;
* :func:`blakley_share` / :func:`blakley_reconstruct` -- Blakley t-of-n (hyperplanes);
* :func:`feldman_share` / :func:`feldman_verify` / :func:`feldman_reconstruct` -- verifiable
  Shamir sharing of integers with Feldman commitments;
* :func:`pedersen_share` / :func:`pedersen_verify` / :func:`pedersen_reconstruct` -- the same
  with hiding Pedersen commitments (safe for low-entropy secrets such as votes);
* :class:`Share` -- shares support ``+``, ``-`` and multiplication by public integers.

Paillier encryption lives in :mod:`veil.crypto.paillier`.

Examples
--------
>>> import numpy as np
>>> from veil.crypto import shamir_share, shamir_reconstruct
>>> shares = shamir_share(np.array([7, -3]), threshold=2, n=3)
>>> shamir_reconstruct([shares[2], shares[0]]).tolist()
[7, -3]
"""

from __future__ import annotations

from ._additive import additive_reconstruct, additive_share
from ._blakley import BlakleyShare, blakley_reconstruct, blakley_share
from ._encoding import RING64
from ._errors import CryptoError, CryptoOverflowError, InsecureKeyWarning
from ._feldman import (
    FeldmanCommitments,
    FeldmanGroup,
    FeldmanShare,
    feldman_reconstruct,
    feldman_share,
    feldman_verify,
)
from ._field import MERSENNE61, PrimeField
from ._pedersen import (
    PedersenCommitments,
    PedersenShare,
    pedersen_generator,
    pedersen_reconstruct,
    pedersen_share,
    pedersen_verify,
)
from ._shamir import shamir_reconstruct, shamir_share
from ._shares import Share
from ._xor import xor_reconstruct, xor_share

__all__ = [
    "BlakleyShare",
    "FeldmanCommitments",
    "FeldmanGroup",
    "FeldmanShare",
    "CryptoError",
    "CryptoOverflowError",
    "InsecureKeyWarning",
    "MERSENNE61",
    "PedersenCommitments",
    "PedersenShare",
    "RING64",
    "PrimeField",
    "Share",
    "additive_reconstruct",
    "additive_share",
    "blakley_reconstruct",
    "blakley_share",
    "feldman_reconstruct",
    "feldman_share",
    "feldman_verify",
    "pedersen_generator",
    "pedersen_reconstruct",
    "pedersen_share",
    "pedersen_verify",
    "shamir_reconstruct",
    "shamir_share",
    "xor_reconstruct",
    "xor_share",
]
