"""Audit findings on Paillier keys and ciphertexts: key validation, foreign ciphertexts,
pickling, replay detection."""

from __future__ import annotations

import json
import warnings

import gmpy2
import pytest

from veil.crypto.paillier import (
    CryptoError,
    InsecureKeyWarning,
    PaillierPublicKey,
    dumps,
    generate_paillier_keypair,
    loads,
)


def _pk_doc(n: int) -> str:
    return json.dumps({"scheme": "veil-paillier", "version": 1, "kind": "public_key", "n": str(n)})


def test_loaded_public_keys_follow_the_key_size_policy(keys) -> None:  # type: ignore[no-untyped-def]
    pk, sk = keys
    with pytest.raises(CryptoError, match="512-bit"):  # refused as by generate_paillier_keypair
        loads(dumps(pk))
    with pytest.raises(CryptoError, match="512-bit"):
        loads(dumps(sk))
    with pytest.raises(CryptoError, match="512-bit"):
        PaillierPublicKey(pk.n)
    assert loads(dumps(pk), insecure=True) == pk
    assert PaillierPublicKey(pk.n, insecure=True) == pk
    pk1024, _ = generate_paillier_keypair(n_length=1024, insecure=True)
    with pytest.warns(InsecureKeyWarning, match="1024-bit") as rec:
        assert loads(dumps(pk1024)) == pk1024
    assert rec[0].filename == __file__  # the warning points at the caller's line
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loads(dumps(pk1024), insecure=True)
    with pytest.raises(CryptoError, match="at least 64 bits"):
        loads(_pk_doc(2**61 - 1), insecure=True)  # the audit's 61-bit prime modulus


def test_prime_or_square_modulus_refused() -> None:
    p = gmpy2.next_prime(gmpy2.mpz(2) ** 600 + 12345)
    q = gmpy2.next_prime(p)
    for bad in (p, p * p, gmpy2.mpz(2) ** 521 - 1):  # primes and a perfect square
        with pytest.raises(CryptoError, match="prime or a perfect square"):
            loads(_pk_doc(int(bad)), insecure=True)
        with pytest.raises(CryptoError, match="prime or a perfect square"):
            PaillierPublicKey(int(bad), insecure=True)
    assert PaillierPublicKey(int(p * q), insecure=True).n == p * q


def test_foreign_ciphertexts_must_be_units_mod_n(keys) -> None:  # type: ignore[no-untyped-def]
    pk, sk = keys
    import numpy as np

    from veil.crypto.paillier import EncryptedNumber, EncryptedVector, PackingSpec

    good = pk.encrypt(7).ciphertext()
    for bad in (int(sk.p) * 12345, int(sk.q), 0, int(pk.nsquare), -int(good), int(pk.n)):
        with pytest.raises(CryptoError, match="ciphertext"):
            EncryptedNumber(pk, bad)
        with pytest.raises(CryptoError, match="ciphertext"):
            sk.raw_decrypt(bad)
        with pytest.raises(CryptoError, match="ciphertext"):
            EncryptedVector(pk, [bad], (1,), PackingSpec())
    for bad in (1.5, "12", True, None):
        with pytest.raises(CryptoError):
            EncryptedNumber(pk, bad)  # type: ignore[arg-type]
    assert sk.decrypt(EncryptedNumber(pk, int(good))) == 7  # foreign but valid: accepted
    assert sk.decrypt(-EncryptedNumber(pk, good, 0, 7)) == -7
    vec = pk.encrypt_vector(np.array([1.0, -2.0]))
    again = EncryptedVector(pk, [int(c) for c in vec.ciphertexts], vec.shape, vec.spec)
    assert sk.decrypt_vector(again).tolist() == [1.0, -2.0]


def test_public_objects_pickle_after_use_private_key_refuses(keys) -> None:  # type: ignore[no-untyped-def]
    import copy
    import pickle

    import numpy as np

    pk, sk = generate_paillier_keypair(n_length=512, insecure=True)
    num = pk.encrypt(-3.5) * 2
    pk.precompute()
    vec = pk.encrypt_vector(np.arange(40.0))
    assert pk._randomness is not None and pk._randomness.precomputed
    for proto in range(pickle.HIGHEST_PROTOCOL + 1):
        pk2 = pickle.loads(pickle.dumps(pk, protocol=proto))
        assert pk2 == pk and sk.decrypt(pk2.encrypt(11)) == 11
        assert sk.decrypt(pickle.loads(pickle.dumps(num, protocol=proto))) == -7.0
        vec2 = pickle.loads(pickle.dumps(vec, protocol=proto))
        assert sk.decrypt_vector(vec2).tolist() == list(range(40))
    assert len(pickle.dumps(pk)) < 2000  # the 16 MiB-class table and the base are not pickled
    assert sk.decrypt(copy.deepcopy(num) + copy.copy(num)) == -14.0
    assert sk.decrypt_vector(copy.deepcopy(vec)).tolist() == list(range(40))
    assert copy.deepcopy(pk) == pk
    for proto in range(pickle.HIGHEST_PROTOCOL + 1):
        with pytest.raises(CryptoError, match="dumps"):
            pickle.dumps(sk, protocol=proto)
    with pytest.raises(CryptoError, match="dumps"):
        pickle.dumps({"key": sk})
    sk2 = copy.deepcopy(sk)  # in-memory copies write nothing anywhere: allowed
    assert sk2 == sk and sk2.decrypt(num) == -7.0 and copy.copy(sk) == sk


def test_replay_check_covers_every_ciphertext(keys) -> None:  # type: ignore[no-untyped-def]
    import numpy as np

    from veil.crypto.paillier import EncryptedVector, aggregate, decrypt_aggregate

    pk, sk = keys  # 8 slots per 512-bit ciphertext: 20 values -> 3 ciphertexts
    a, b = np.arange(20.0), -np.arange(20.0) / 4
    va, vb = pk.encrypt_vector(a), pk.encrypt_vector(b)
    with pytest.raises(CryptoError, match="replay"):  # byte-identical resubmission
        aggregate([dumps(va), dumps(vb), dumps(va)], pk)
    with pytest.raises(CryptoError, match="replay"):
        aggregate([va, vb, va], pk)
    # a partial copy: the first ciphertext replaced, the last one copied byte for byte
    fresh = pk.encrypt_vector(np.zeros(20)).ciphertexts[0]
    copied = EncryptedVector(pk, [fresh, *va.ciphertexts[1:]], va.shape, va.spec)
    with pytest.raises(CryptoError, match="contribution 2 repeats a ciphertext of contribution 0"):
        aggregate([va, vb, copied], pk)
    # documented limit: a re-randomised copy cannot be told apart from a fresh contribution
    rerandomised = EncryptedVector(pk, list(va.ciphertexts), va.shape, va.spec)
    rerandomised.obfuscate()
    total = aggregate([va, vb, rerandomised], pk)
    assert decrypt_aggregate(sk, total).tolist() == (2 * a + b).tolist()


def test_pickled_derived_ciphertexts_are_rerandomized(keys) -> None:  # type: ignore[no-untyped-def]
    # dumps re-randomizes c^k before writing it; a pickle (multiprocessing, a cache, a socket)
    # carried c^k as computed, so whoever holds c finds a small weight k by trying c^1, c^2, ...
    import pickle

    import numpy as np

    pk, sk = keys
    nsq = int(pk.nsquare)
    x = pk.encrypt(5)
    c = int(x.ciphertext())
    v = pk.encrypt_vector(np.array([1.0, -2.0]))
    cv = [int(ct) for ct in v.ciphertexts]
    for proto in range(pickle.HIGHEST_PROTOCOL + 1):
        y = pickle.loads(pickle.dumps(x * 7, protocol=proto))
        assert all(pow(c, k, nsq) != int(y._c) for k in range(1, 100))
        assert sk.decrypt(y) == 35
        w = pickle.loads(pickle.dumps(v * 3, protocol=proto))
        assert all(pow(cv[0], k, nsq) != int(w.ciphertexts[0]) for k in range(1, 100))
        assert sk.decrypt_vector(w).tolist() == [3.0, -6.0]
