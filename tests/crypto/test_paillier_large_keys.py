"""Serialization of ciphertexts under large keys (beyond CPython's 4,300-digit int limit)."""

from __future__ import annotations

import json
import random

import pytest

from veil.crypto.paillier import CryptoError, PaillierPrivateKey, PaillierPublicKey, dumps, loads

gmpy2 = pytest.importorskip("gmpy2")


def _prime(bits: int, rng: random.Random) -> object:
    return gmpy2.next_prime(gmpy2.mpz(rng.getrandbits(bits)) | (gmpy2.mpz(3) << (bits - 2)))


def test_ciphertexts_of_a_7400_bit_key_load_back() -> None:
    # c < n^2 has ~4,450 decimal digits: int(text) refuses it (sys.int_info digit limit), so a
    # number this package wrote could not be read back by loads
    rng = random.Random(7400)
    p, q = _prime(3700, rng), _prime(3700, rng)
    pk = PaillierPublicKey(p * q)
    sk = PaillierPrivateKey(pk, p, q)
    assert len(str(pk.nsquare)) > 4300
    pk2 = loads(dumps(pk))
    assert pk2 == pk and pk2.fingerprint == pk.fingerprint
    assert loads(dumps(sk)) == sk
    x = pk.encrypt(-12345) * 3 + pk.encrypt(0.5)
    text = dumps(x)
    assert sk.decrypt(loads(text, pk)) == -37034.5
    # the decimal encoding is still checked
    doc = json.loads(text)
    for bad in ("0x12", "", "1 2", "12a", "١٢"):
        with pytest.raises(CryptoError, match="decimal"):
            loads(json.dumps({**doc, "c": bad}), pk)
