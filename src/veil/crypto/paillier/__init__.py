"""Paillier additively homomorphic encryption with packing and secure aggregation.

Paillier, "Public-key cryptosystems based on composite degree residuosity classes",
EUROCRYPT 1999; fast randomness from Damgard, Jurik and Nielsen (IJIS 2010).

Examples
--------
>>> from veil.crypto.paillier import generate_paillier_keypair
>>> public_key, private_key = generate_paillier_keypair(n_length=512, insecure=True)
>>> private_key.decrypt(public_key.encrypt(5) + public_key.encrypt(3))
8
"""

from __future__ import annotations

from .._errors import CryptoError, CryptoOverflowError, InsecureKeyWarning
from ._aggregate import aggregate, decrypt_aggregate, encrypt_contribution
from ._keys import (
    DEFAULT_KEY_BITS,
    RECOMMENDED_KEY_BITS,
    PaillierPrivateKey,
    PaillierPublicKey,
    generate_paillier_keypair,
)
from ._number import FLOAT_FRAC_BITS, EncryptedNumber
from ._serialize import dumps, loads
from ._vector import EncryptedVector, PackingSpec

__all__ = [
    "CryptoError",
    "CryptoOverflowError",
    "DEFAULT_KEY_BITS",
    "EncryptedNumber",
    "EncryptedVector",
    "FLOAT_FRAC_BITS",
    "InsecureKeyWarning",
    "PackingSpec",
    "PaillierPrivateKey",
    "PaillierPublicKey",
    "RECOMMENDED_KEY_BITS",
    "aggregate",
    "decrypt_aggregate",
    "dumps",
    "encrypt_contribution",
    "generate_paillier_keypair",
    "loads",
]
