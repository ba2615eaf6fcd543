"""Secure aggregation of vectors under one Paillier public key.

Protocol (honest-but-curious aggregator): the key holder publishes a public key; each of the
``n`` parties encrypts its vector (:func:`encrypt_contribution`) and sends the JSON to the
aggregator; the aggregator adds the ciphertexts (:func:`aggregate`) without being able to
decrypt anything; only the key holder decrypts the sum.  The packing ``max_parties`` headroom
is checked when adding.

Replays: a contribution that repeats, byte for byte, any ciphertext of an earlier contribution
(a resubmission of the same message, or a partial copy) is refused.  Honest encryptions
never collide, so this refuses no honest party.  A *re-randomised* copy (``c * r^n mod n^2``
for a fresh ``r``, e.g. ``vector.obfuscate()``) encrypts the same values with different bytes
and cannot be told apart from a fresh contribution without sender authentication (signed
messages, one submission per authenticated party) or zero-knowledge proofs, which this
honest-but-curious protocol does not have: it is accepted and counted twice.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

import numpy as np

from .._errors import CryptoError
from .._gmp import require_gmpy2
from ._keys import PaillierPrivateKey, PaillierPublicKey
from ._serialize import dumps, loads
from ._vector import EncryptedVector, PackingSpec

__all__ = ["encrypt_contribution", "aggregate", "decrypt_aggregate"]


def encrypt_contribution(
    public_key: PaillierPublicKey, values: object, spec: PackingSpec | None = None
) -> str:
    """Party side: encrypt ``values`` and return the JSON message for the aggregator.

    Examples
    --------
    >>> import numpy as np
    >>> from veil.crypto.paillier import generate_paillier_keypair
    >>> pk, sk = generate_paillier_keypair(n_length=512, insecure=True)
    >>> msgs = [encrypt_contribution(pk, np.array([1.0, 2.0])) for _ in range(3)]
    >>> decrypt_aggregate(sk, aggregate(msgs, pk)).tolist()
    [3.0, 6.0]
    """
    return dumps(EncryptedVector.encrypt(public_key, values, spec))


def aggregate(
    contributions: Iterable[EncryptedVector | str], public_key: PaillierPublicKey
) -> EncryptedVector:
    """Aggregator side: add encrypted contributions (objects or JSON messages).

    Raises
    ------
    CryptoError
        No contributions, a malformed message, mismatched keys, shapes or packing specs,
        a contribution that repeats a ciphertext of an earlier one byte for byte (replay:
        every ciphertext is compared, a re-randomised copy is not detected, see the module
        docstring), or more parties than the packing headroom allows.

    References
    ----------
    P. Paillier, "Public-key cryptosystems based on composite degree residuosity classes",
    EUROCRYPT, 1999.

    Examples
    --------
    >>> import numpy as np
    >>> from veil.crypto.paillier import generate_paillier_keypair
    >>> pk, sk = generate_paillier_keypair(n_length=512, insecure=True)
    >>> alice = encrypt_contribution(pk, np.array([1.5, -2.0]))
    >>> bob = encrypt_contribution(pk, np.array([0.5, 4.0]))
    >>> total = aggregate([alice, bob], pk)  # no private key needed
    >>> total.shape
    (2,)
    >>> aggregate([alice, alice], pk)
    Traceback (most recent call last):
    ...
    veil.errors.CryptoError: contribution 1 repeats a ciphertext of contribution 0 ... (replay)
    """
    gmp = require_gmpy2()
    total: EncryptedVector | None = None
    seen: dict[bytes, int] = {}  # 16-byte digest of each ciphertext -> contribution index
    for i, item in enumerate(contributions):
        vec = loads(item, public_key) if isinstance(item, (str, bytes)) else item
        if not isinstance(vec, EncryptedVector):
            raise CryptoError(f"contribution {i} is not an encrypted vector")
        if vec.public_key != public_key:
            raise CryptoError(f"contribution {i} was encrypted under a different public key")
        digests = {
            hashlib.blake2b(gmp.to_binary(gmp.mpz(c)), digest_size=16).digest()
            for c in vec.ciphertexts
        }
        for d in digests:
            if d in seen:
                raise CryptoError(
                    f"contribution {i} repeats a ciphertext of contribution {seen[d]} byte for "
                    "byte (replay)"
                )
        seen.update(dict.fromkeys(digests, i))
        total = vec if total is None else total + vec
    if total is None:
        raise CryptoError("no contributions to aggregate")
    return total


def decrypt_aggregate(private_key: PaillierPrivateKey, total: EncryptedVector | str) -> np.ndarray:
    """Key-holder side: decrypt the aggregated vector (object or JSON message).

    References
    ----------
    P. Paillier, "Public-key cryptosystems based on composite degree residuosity classes",
    EUROCRYPT, 1999.

    Examples
    --------
    >>> import numpy as np
    >>> from veil.crypto.paillier import dumps, generate_paillier_keypair
    >>> pk, sk = generate_paillier_keypair(n_length=512, insecure=True)
    >>> msgs = [encrypt_contribution(pk, np.array([[1, 2], [3, 4]])) for _ in range(2)]
    >>> message = dumps(aggregate(msgs, pk))  # the aggregator sends the sum back as JSON
    >>> decrypt_aggregate(sk, message).tolist()
    [[2.0, 4.0], [6.0, 8.0]]
    """
    vec = loads(total, private_key.public_key) if isinstance(total, (str, bytes)) else total
    if not isinstance(vec, EncryptedVector):
        raise CryptoError("expected an encrypted vector")
    return vec.decrypt(private_key)
