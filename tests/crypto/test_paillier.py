"""Paillier scalars: key generation, homomorphic laws, encoding, overflow, wrong keys."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.crypto.paillier import (
    FLOAT_FRAC_BITS,
    CryptoError,
    CryptoOverflowError,
    EncryptedNumber,
    InsecureKeyWarning,
    PaillierPrivateKey,
    generate_paillier_keypair,
)
from veil.errors import ConfigError, InputError


def test_seed_example_1024_bits_warns_and_works() -> None:
    with pytest.warns(InsecureKeyWarning, match="1024-bit"):
        public_key, private_key = generate_paillier_keypair(n_length=1024)
    assert public_key.n_length == 1024
    assert private_key.decrypt(public_key.encrypt(5) + public_key.encrypt(3)) == 8


def test_key_length_policy() -> None:
    with pytest.raises(ConfigError, match="insecure"):
        generate_paillier_keypair(n_length=512)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pk, _ = generate_paillier_keypair(n_length=1024, insecure=True)  # no warning
    assert pk.n_length == 1024
    with pytest.raises(ConfigError):
        generate_paillier_keypair(n_length=32, insecure=True)
    with pytest.raises(ConfigError):
        generate_paillier_keypair(n_length="2048")  # type: ignore[arg-type]


def test_default_2048_bit_round_trip() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pk, sk = generate_paillier_keypair()
    assert pk.n_length == 2048 and sk.p.bit_length() == 1024 and sk.q.bit_length() == 1024
    assert sk.decrypt(pk.encrypt(-123456789) * 3 + pk.encrypt(2.5)) == -370370364.5


def test_ciphertexts_are_randomized(keys) -> None:  # type: ignore[no-untyped-def]
    pk, sk = keys
    a, b = pk.encrypt(7), pk.encrypt(7)
    assert a.ciphertext() != b.ciphertext()
    c = a + 0
    before = c.ciphertext(be_secure=False)
    assert c.ciphertext() != before and sk.decrypt(c) == 7


ints = st.integers(-(2**200), 2**200)


@settings(max_examples=30, deadline=None)
@given(a=ints, b=ints, k=st.integers(-(2**40), 2**40))
def test_integer_homomorphic_laws(keys, a: int, b: int, k: int) -> None:  # type: ignore[no-untyped-def]
    pk, sk = keys
    ea, eb = pk.encrypt(a), pk.encrypt(b)
    assert sk.decrypt(ea + eb) == a + b
    assert sk.decrypt(ea + b) == a + b
    assert sk.decrypt(b + ea) == a + b
    assert sk.decrypt(ea - eb) == a - b
    assert sk.decrypt(b - ea) == b - a
    assert sk.decrypt(-ea) == -a
    assert sk.decrypt(ea * k) == a * k
    assert sk.decrypt(k * (ea + eb)) == sk.decrypt(k * ea + k * eb)


floats = st.floats(-1e6, 1e6, allow_nan=False, width=64)


@settings(max_examples=30, deadline=None)
@given(a=floats, b=floats, k=st.floats(-100, 100))
def test_float_homomorphic_laws(keys, a: float, b: float, k: float) -> None:  # type: ignore[no-untyped-def]
    pk, sk = keys
    ea = pk.encrypt(a)
    assert sk.decrypt(ea) == pytest.approx(a, abs=2.0**-53)  # fixed point, 52 fractional bits
    assert sk.decrypt(ea + pk.encrypt(b)) == pytest.approx(a + b, abs=2.0**-50)
    assert sk.decrypt(ea + b) == pytest.approx(a + b, abs=2.0**-50)
    if k == 0 or abs(k) >= 2.0**-29:  # every multiplier the 52-bit public scale holds well
        assert sk.decrypt(ea * k) == pytest.approx(a * k, rel=1e-12, abs=1e-9)
    else:  # a tiny one: refused, or (a power of two, say) still exact -- never silently 0
        try:
            got = sk.decrypt(ea * k)
        except CryptoError:
            pass
        else:
            assert got == pytest.approx(a * k, rel=2.0**-24, abs=1e-9)
    assert sk.decrypt(pk.encrypt(3) + ea) == pytest.approx(3 + a, abs=2.0**-50)


def test_scale_is_public_and_value_independent(keys) -> None:  # type: ignore[no-untyped-def]
    pk, sk = keys
    tiny, huge = pk.encrypt(1e-9), pk.encrypt(1e9)
    assert tiny.scale == huge.scale == FLOAT_FRAC_BITS  # no per-value exponent (phe #110)
    assert pk.encrypt(12).scale == 0
    coarse = pk.encrypt(0.3, frac_bits=8)
    assert coarse.scale == 8 and sk.decrypt(coarse) == round(0.3 * 256) / 256
    assert (coarse + pk.encrypt(1)).scale == 8
    assert sk.decrypt(pk.encrypt(10) / 4) == 2.5
    assert sk.decrypt(np.float64(0.5) * pk.encrypt(3)) == 1.5  # numpy scalar on the left
    assert sk.decrypt(np.int64(2) + pk.encrypt(3)) == 5


def test_overflow_is_detected_never_wrapped(keys) -> None:  # type: ignore[no-untyped-def]
    pk, sk = keys
    top = pk.encrypt(pk.max_int)
    assert sk.decrypt(top) == pk.max_int and sk.decrypt(-top) == -pk.max_int
    with pytest.raises(CryptoOverflowError):
        pk.encrypt(pk.max_int + 1)
    with pytest.raises(OverflowError):  # also a built-in OverflowError (phe #116)
        top + pk.encrypt(1)
    with pytest.raises(CryptoOverflowError):
        top + 1
    half = pk.encrypt(pk.max_int // 2)
    assert sk.decrypt(half + half) == 2 * (pk.max_int // 2)
    with pytest.raises(CryptoOverflowError):
        half * 3
    with pytest.raises(CryptoOverflowError):
        pk.encrypt(2.0**500)  # 500 + 52 bits > 510


def test_bad_plaintexts(keys) -> None:  # type: ignore[no-untyped-def]
    pk, _ = keys
    for bad in (float("nan"), float("inf")):
        with pytest.raises(InputError):
            pk.encrypt(bad)
    with pytest.raises(InputError):
        pk.encrypt("5")  # type: ignore[arg-type]
    with pytest.raises(CryptoError, match="multiply two ciphertexts"):
        pk.encrypt(2) * pk.encrypt(3)  # type: ignore[operator]


def test_wrong_key(keys, other_keys) -> None:  # type: ignore[no-untyped-def]
    pk, sk = keys
    opk, osk = other_keys
    with pytest.raises(CryptoError, match="different public key"):
        osk.decrypt(pk.encrypt(1))
    with pytest.raises(CryptoError, match="different public keys"):
        pk.encrypt(1) + opk.encrypt(1)
    with pytest.raises(CryptoError, match="does not match"):
        PaillierPrivateKey(pk, osk.p, osk.q)
    with pytest.raises(CryptoError):
        sk.decrypt(5)  # type: ignore[arg-type]


def test_tampered_ciphertext_detected_by_bound(keys) -> None:  # type: ignore[no-untyped-def]
    pk, sk = keys
    enc = pk.encrypt(42)
    c = enc.ciphertext() * pk.encrypt(2**300).ciphertext() % pk.nsquare
    forged = EncryptedNumber(pk, c, 0, enc.bound)
    with pytest.raises(CryptoError, match="tampered"):
        sk.decrypt(forged)
    with pytest.raises(CryptoError, match="out of range"):
        sk.raw_decrypt(pk.nsquare)


def test_keys_never_leak_in_repr(keys) -> None:  # type: ignore[no-untyped-def]
    pk, sk = keys
    for text in (repr(sk), str(sk), repr(pk.encrypt(3))):
        assert str(sk.p) not in text and str(sk.q) not in text


def test_tiny_float_multipliers_are_refused_not_rounded_to_zero(keys) -> None:  # type: ignore[no-untyped-def]
    # the multiplier is encoded at the fixed public scale 2**-52 (a scale chosen from its value
    # would leak its magnitude): 1e-20 became 0, so encrypt(1e25) / 1e20 decrypted to 0.0
    pk, sk = keys
    big = pk.encrypt(1e25)
    for op in (lambda: big / 1e20, lambda: pk.encrypt(3.0) * 1e-17, lambda: 5e-324 * big):
        with pytest.raises(CryptoError, match="multiplier"):
            op()
    assert sk.decrypt(pk.encrypt(2**40) * 2.0**-45) == 2.0**-5  # exact at the scale: kept
    got = sk.decrypt(big / 1e7)  # relative encoding error 5.8e-10 < 2**-24: accepted
    assert got == pytest.approx(1e18, rel=2.0**-24)
