"""Packed encrypted vectors, JSON serialization with validation, and secure aggregation."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.crypto.paillier import (
    CryptoError,
    CryptoOverflowError,
    EncryptedVector,
    PackingSpec,
    aggregate,
    decrypt_aggregate,
    dumps,
    encrypt_contribution,
    loads,
)
from veil.errors import ConfigError, InputError


def test_spec_layout() -> None:
    spec = PackingSpec(frac_bits=32, int_bits=20, max_parties=16)
    assert spec.value_bits == 53 and spec.slot_bits == 57 and spec.slots(2048) == 35
    assert PackingSpec(max_parties=1).slot_bits == 53
    assert PackingSpec(max_parties=17).slot_bits == 58
    with pytest.raises(ConfigError):
        PackingSpec(frac_bits=40, int_bits=30)
    with pytest.raises(ConfigError):
        PackingSpec(max_parties=0)
    with pytest.raises(ConfigError):
        PackingSpec(frac_bits=60, int_bits=2).slots(64)


@pytest.mark.parametrize("size", [0, 1, 7, 8, 9, 17, 100])
def test_round_trip_sizes_around_slot_boundaries(keys, size: int) -> None:  # type: ignore[no-untyped-def]
    pk, sk = keys  # 511 // 57 = 8 slots per ciphertext
    x = np.linspace(-1000, 1000, size)
    enc = pk.encrypt_vector(x)
    assert len(enc.ciphertexts) == -(-size // 8)
    out = sk.decrypt_vector(enc)
    assert out.shape == x.shape and np.max(np.abs(out - x), initial=0) <= 2.0**-33


def test_shapes_ints_and_negative_values(keys) -> None:  # type: ignore[no-untyped-def]
    pk, sk = keys
    spec = PackingSpec(frac_bits=0, int_bits=30, max_parties=4)
    m = np.arange(-6, 6).reshape(3, 4) * 1000003
    out = sk.decrypt_vector(pk.encrypt_vector(m, spec) + pk.encrypt_vector(m, spec))
    assert out.dtype == np.int64 and np.array_equal(out, 2 * m)


def test_headroom_boundary_exact_and_then_refused(keys) -> None:  # type: ignore[no-untyped-def]
    pk, sk = keys
    spec = PackingSpec(frac_bits=8, int_bits=4, max_parties=5)
    extreme = np.array([15.99609375, -15.99609375, 0.0, 15.99609375] * 5)  # |x| < 2**4
    enc = [pk.encrypt_vector(extreme, spec) for _ in range(5)]
    total = enc[0] + enc[1] + enc[2] + enc[3] + enc[4]
    assert total.n_terms == 5
    assert np.array_equal(sk.decrypt_vector(total), 5 * extreme)  # exact at the limit
    with pytest.raises(CryptoOverflowError, match="max_parties=5"):
        total + enc[0]
    with pytest.raises(CryptoOverflowError):
        enc[0] * 6
    assert np.array_equal(sk.decrypt_vector(enc[0] * 3 + enc[1]), 4 * extreme)
    with pytest.raises(CryptoOverflowError, match="int_bits"):
        pk.encrypt_vector(np.array([16.0]), spec)
    with pytest.raises(CryptoOverflowError):
        pk.encrypt_vector(np.array([-16.0]), spec)


def test_plaintext_addition_and_bad_operands(keys, other_keys) -> None:  # type: ignore[no-untyped-def]
    pk, sk = keys
    x = np.array([1.5, -2.5, 3.0])
    enc = pk.encrypt_vector(x)
    assert sk.decrypt_vector(enc + np.array([1.0, 1.0, -1.0])).tolist() == [2.5, -1.5, 2.0]
    with pytest.raises(CryptoError, match="shapes"):
        enc + np.zeros(4)
    with pytest.raises(CryptoError, match="specs"):
        enc + pk.encrypt_vector(x, PackingSpec(frac_bits=16))
    with pytest.raises(CryptoError, match="different public keys"):
        enc + other_keys[0].encrypt_vector(x)
    with pytest.raises(CryptoError, match="different public key"):
        other_keys[1].decrypt_vector(enc)
    with pytest.raises(CryptoError, match="positive integer"):
        enc * -1
    with pytest.raises(InputError):
        pk.encrypt_vector(np.array([np.nan]))
    with pytest.raises(InputError):
        pk.encrypt_vector(np.array(["a"]))


def test_tampered_vector_detected(keys) -> None:  # type: ignore[no-untyped-def]
    pk, sk = keys
    enc = pk.encrypt_vector(np.arange(10.0))
    bad = pk.raw_encrypt(1 << 500)  # beyond the 8 * 57 = 456 packed bits
    cts = [enc.ciphertexts[0] * bad % pk.nsquare, *enc.ciphertexts[1:]]
    with pytest.raises(CryptoError, match="tampered"):
        sk.decrypt_vector(EncryptedVector(pk, cts, enc.shape, enc.spec))
    over = pk.raw_encrypt(1 << (56 + 57))  # slot 2 pushed beyond its headroom
    cts = [enc.ciphertexts[0] * over % pk.nsquare, *enc.ciphertexts[1:]]
    with pytest.raises(CryptoError, match="headroom"):
        sk.decrypt_vector(EncryptedVector(pk, cts, enc.shape, enc.spec))
    with pytest.raises(CryptoError, match="needs 2 ciphertexts"):
        EncryptedVector(pk, enc.ciphertexts[:1], enc.shape, enc.spec)


def test_json_round_trips(keys) -> None:  # type: ignore[no-untyped-def]
    pk, sk = keys
    assert loads(dumps(pk), insecure=True) == pk
    sk2 = loads(dumps(sk), insecure=True)
    assert sk2 == sk and sk2.public_key == pk
    num = pk.encrypt(-4.25) * 2
    num2 = loads(dumps(num), pk)
    assert sk.decrypt(num2) == -8.5 and num2.scale == num.scale and num2.bound == num.bound
    vec = pk.encrypt_vector(np.array([[1.0, -2.0], [3.5, 0.0]])) + np.ones((2, 2))
    vec2 = loads(dumps(vec), pk)
    assert vec2.n_terms == 2 and sk.decrypt_vector(vec2).tolist() == [[2.0, -1.0], [4.5, 1.0]]


def _doc(obj: object) -> dict:
    return json.loads(dumps(obj))


def test_malformed_documents_rejected(keys, other_keys) -> None:  # type: ignore[no-untyped-def]
    pk, sk = keys
    good = _doc(pk.encrypt(3))
    cases = {
        "not json": "{",
        "not a dict": "[1, 2]",
        "wrong scheme": json.dumps({**good, "scheme": "phe"}),
        "wrong version": json.dumps({**good, "version": 99}),
        "unknown kind": json.dumps({**good, "kind": "banana"}),
        "int not string": json.dumps({**good, "c": 5}),
        "not decimal": json.dumps({**good, "c": "0x12"}),
        "c >= n^2": json.dumps({**good, "c": str(pk.nsquare)}),
        "c = 0": json.dumps({**good, "c": "0"}),
        "gcd(c, n) != 1": json.dumps({**good, "c": str(sk.p * 12345)}),
        "bound too big": json.dumps({**good, "bound": str(pk.n)}),
        "negative scale": json.dumps({**good, "scale": -1}),
        "bool scale": json.dumps({**good, "scale": True}),
    }
    for name, text in cases.items():
        with pytest.raises(CryptoError):
            loads(text, pk)
            pytest.fail(name)
    with pytest.raises(CryptoError, match="different public key"):
        loads(json.dumps(good), other_keys[0])
    with pytest.raises(CryptoError, match="needs the public_key"):
        loads(json.dumps(good))
    skd = _doc(sk)
    with pytest.raises(CryptoError, match="does not match"):
        loads(json.dumps({**skd, "q": str(other_keys[1].q)}), insecure=True)
    with pytest.raises(CryptoError, match="not prime"):
        loads(json.dumps({**skd, "p": str(sk.p * sk.q), "q": "1"}), insecure=True)
    with pytest.raises(CryptoError):
        loads(json.dumps({**_doc(pk), "n": "16"}))
    vdoc = _doc(pk.encrypt_vector(np.arange(3.0)))
    with pytest.raises(CryptoError, match="tampered"):
        sk.decrypt_vector(loads(json.dumps({**vdoc, "shape": [4]}), pk))
    with pytest.raises(CryptoError, match="tampered"):
        sk.decrypt_vector(loads(json.dumps({**vdoc, "shape": [2]}), pk))
    for bad in (
        {**vdoc, "shape": [9]},
        {**vdoc, "shape": "3"},
        {**vdoc, "spec": {"frac_bits": 1}},
        {**vdoc, "spec": {**vdoc["spec"], "int_bits": 60}},
        {**vdoc, "n_terms": 0},
        {**vdoc, "n_terms": 17},
        {**vdoc, "c": [1]},
        {**vdoc, "c": [str(pk.nsquare + 1)]},
    ):
        with pytest.raises(CryptoError):
            loads(json.dumps(bad), pk)
    with pytest.raises(CryptoError):
        dumps(object())


def test_secure_aggregation_three_parties(keys) -> None:  # type: ignore[no-untyped-def]
    pk, sk = keys
    rng = np.random.default_rng(7)
    weights = [rng.normal(size=(4, 5)) for _ in range(3)]
    msgs = [encrypt_contribution(pk, w) for w in weights]
    total = aggregate(msgs, pk)
    assert total.n_terms == 3
    out = decrypt_aggregate(sk, dumps(total))
    assert out.shape == (4, 5)
    assert np.max(np.abs(out - sum(weights))) <= 3 * 2.0**-33 + 1e-12
    with pytest.raises(CryptoError, match="replay"):
        aggregate([msgs[0], msgs[1], msgs[0]], pk)
    with pytest.raises(CryptoError, match="no contributions"):
        aggregate([], pk)
    spec = PackingSpec(max_parties=2)
    small = [encrypt_contribution(pk, w, spec) for w in weights]
    with pytest.raises(CryptoOverflowError):
        aggregate(small, pk)


_vals = st.lists(st.floats(-1000, 1000, allow_nan=False), min_size=1, max_size=20)


@settings(max_examples=15, deadline=None)
@given(a=_vals, b=_vals, w=st.integers(1, 3))
def test_vector_homomorphic_laws(keys, a: list[float], b: list[float], w: int) -> None:  # type: ignore[no-untyped-def]
    pk, sk = keys
    m = min(len(a), len(b))
    x, y = np.array(a[:m]), np.array(b[:m])
    spec = PackingSpec(frac_bits=20, int_bits=12, max_parties=8)
    ex, ey = pk.encrypt_vector(x, spec), pk.encrypt_vector(y, spec)
    rx, ry = np.rint(x * 2**20) / 2**20, np.rint(y * 2**20) / 2**20  # fixed-point inputs
    assert np.array_equal(sk.decrypt_vector(ex + ey), rx + ry)
    assert np.array_equal(sk.decrypt_vector(ey + ex), sk.decrypt_vector(ex + ey))
    assert np.array_equal(sk.decrypt_vector(ex * w + ey), w * rx + ry)
    assert np.array_equal(sk.decrypt_vector(ex + y), rx + ry)
    assert np.array_equal(sk.decrypt_vector(y + ex), rx + ry)  # ndarray on the left


def test_wide_slots_beyond_int64(keys) -> None:  # type: ignore[no-untyped-def]
    pk, sk = keys
    spec = PackingSpec(frac_bits=30, int_bits=32, max_parties=4)  # 65-bit slots
    assert spec.slot_bits == 65 and spec.slots(512) == 7
    x = np.array([2.0**31 + 0.5, -(2.0**31) - 0.25, 1.0, -1.0] * 3)
    total = pk.encrypt_vector(x, spec) * 3 + pk.encrypt_vector(x, spec)
    assert np.array_equal(sk.decrypt_vector(total), 4 * x)
