"""JSON serialization of Paillier keys, encrypted numbers and encrypted vectors.

Every document carries ``"scheme": "veil-paillier"``, a ``"kind"`` and, for ciphertexts, the
public-key fingerprint.  Loading validates everything a malicious or corrupted document could
get wrong: types, ranges (``0 < c < n^2``), ``gcd(c, n) = 1``, key fingerprints, that ``p * q =
n`` with ``p`` and ``q`` prime, and packing metadata.  Any problem raises :class:`CryptoError`.
Ciphertexts derived by homomorphic operations are re-randomized before being written.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .._errors import CryptoError
from .._gmp import require_gmpy2
from ._keys import PaillierPrivateKey, PaillierPublicKey
from ._number import EncryptedNumber
from ._vector import EncryptedVector, PackingSpec

__all__ = ["dumps", "loads"]

_SCHEME = "veil-paillier"
_VERSION = 1


_DECIMAL = re.compile(r"[+-]?[0-9]+")


def _int(doc: dict[str, Any], key: str) -> int:
    # gmpy2 parses the digits: int(text) refuses more than 4,300 digits (CPython's limit
    # against quadratic conversions), which a ciphertext modulo n^2 exceeds from ~7,150-bit keys
    value = doc.get(key)
    if not isinstance(value, str):
        raise CryptoError(f"field {key!r} must be a decimal string")
    if _DECIMAL.fullmatch(value.strip()) is None:
        raise CryptoError(f"field {key!r} is not a decimal integer")
    return int(require_gmpy2().mpz(value.strip(), 10))


def _small_int(doc: dict[str, Any], key: str) -> int:
    value = doc.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise CryptoError(f"field {key!r} must be an integer")
    return value


def dumps(obj: object) -> str:
    """Serialize a key, :class:`EncryptedNumber` or :class:`EncryptedVector` to JSON.

    Examples
    --------
    >>> from veil.crypto.paillier import generate_paillier_keypair
    >>> pk, sk = generate_paillier_keypair(n_length=256, insecure=True)
    >>> loads(dumps(pk), insecure=True) == pk
    True
    """
    doc: dict[str, Any] = {"scheme": _SCHEME, "version": _VERSION}
    if isinstance(obj, PaillierPrivateKey):
        doc.update(kind="private_key", n=str(obj.public_key.n), p=str(obj.p), q=str(obj.q))
    elif isinstance(obj, PaillierPublicKey):
        doc.update(kind="public_key", n=str(obj.n))
    elif isinstance(obj, EncryptedNumber):
        doc.update(
            kind="encrypted_number",
            key=obj.public_key.fingerprint,
            c=str(obj.ciphertext(be_secure=True)),
            scale=obj.scale,
            bound=str(obj.bound),
        )
    elif isinstance(obj, EncryptedVector):
        if not obj._obfuscated:
            obj.obfuscate()
        doc.update(
            kind="encrypted_vector",
            key=obj.public_key.fingerprint,
            shape=list(obj.shape),
            spec={
                "frac_bits": obj.spec.frac_bits,
                "int_bits": obj.spec.int_bits,
                "max_parties": obj.spec.max_parties,
            },
            n_terms=obj.n_terms,
            c=[str(c) for c in obj.ciphertexts],
        )
    else:
        raise CryptoError(f"cannot serialize a {type(obj).__name__}")
    return json.dumps(doc)


def loads(
    text: str | bytes, public_key: PaillierPublicKey | None = None, *, insecure: bool = False
) -> Any:
    """Load a document written by :func:`dumps`, validating it.

    Parameters
    ----------
    text : str or bytes
        The JSON document.
    public_key : PaillierPublicKey, optional
        Required for ciphertexts: the key they must have been encrypted under.
    insecure : bool, default False
        Accept keys shorter than 1024 bits and do not warn below 2048 bits (the key-size
        policy of :func:`generate_paillier_keypair`, applied to loaded keys).

    Raises
    ------
    CryptoError
        Malformed JSON, wrong types, out-of-range values, a ciphertext for another key, or a
        key that is too short, prime or a perfect square.

    Examples
    --------
    >>> from veil.crypto.paillier import generate_paillier_keypair
    >>> pk, sk = generate_paillier_keypair(n_length=512, insecure=True)
    >>> message = dumps(pk.encrypt(7))
    >>> received_key = loads(dumps(pk), insecure=True)
    >>> sk.decrypt(loads(message, received_key))
    7
    >>> other_pk, _ = generate_paillier_keypair(n_length=512, insecure=True)
    >>> loads(message, other_pk)
    Traceback (most recent call last):
    ...
    veil.errors.CryptoError: the ciphertext was encrypted under a different public key
    """
    try:
        doc = json.loads(text)
    except (ValueError, TypeError) as exc:
        raise CryptoError(f"not a valid JSON document: {exc}") from None
    if not isinstance(doc, dict) or doc.get("scheme") != _SCHEME:
        raise CryptoError("not a veil-paillier document")
    if doc.get("version") != _VERSION:
        raise CryptoError(f"unsupported document version {doc.get('version')!r}")
    kind = doc.get("kind")
    if kind == "public_key":
        return PaillierPublicKey(_int(doc, "n"), insecure=insecure)
    if kind == "private_key":
        gmp = require_gmpy2()
        n, p, q = _int(doc, "n"), _int(doc, "p"), _int(doc, "q")
        if not (gmp.is_prime(p, 40) and gmp.is_prime(q, 40)):
            raise CryptoError("invalid private key (factors are not prime)")
        return PaillierPrivateKey(PaillierPublicKey(n, insecure=insecure), p, q)
    if kind not in ("encrypted_number", "encrypted_vector"):
        raise CryptoError(f"unknown document kind {kind!r}")
    if public_key is None:
        raise CryptoError("loading a ciphertext needs the public_key it was encrypted under")
    if doc.get("key") != public_key.fingerprint:
        raise CryptoError("the ciphertext was encrypted under a different public key")
    if kind == "encrypted_number":
        c = public_key.check_ciphertext(_int(doc, "c"))
        scale, bound = _small_int(doc, "scale"), _int(doc, "bound")
        if scale < 0 or not 0 <= bound <= public_key.max_int:
            raise CryptoError("invalid scale or bound")
        return EncryptedNumber(public_key, c, scale, bound)
    spec_doc, shape, cts = doc.get("spec"), doc.get("shape"), doc.get("c")
    if not isinstance(spec_doc, dict) or set(spec_doc) != {"frac_bits", "int_bits", "max_parties"}:
        raise CryptoError("invalid packing spec")
    if not isinstance(shape, list) or not all(
        isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape
    ):
        raise CryptoError("invalid shape")
    if not isinstance(cts, list) or not all(isinstance(c, str) for c in cts):
        raise CryptoError("field 'c' must be a list of decimal strings")
    try:
        spec = PackingSpec(**{k: _small_int(spec_doc, k) for k in spec_doc})
    except ValueError as exc:
        raise CryptoError(f"invalid packing spec: {exc}") from None
    cipher = [_int({"c": c}, "c") for c in cts]  # validated by the constructor
    return EncryptedVector(public_key, cipher, tuple(shape), spec, _small_int(doc, "n_terms"))
