"""Secret sharing: round trips, thresholds, homomorphism, overflow and misuse."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.crypto import (
    MERSENNE61,
    RING64,
    CryptoError,
    CryptoOverflowError,
    additive_reconstruct,
    additive_share,
    shamir_reconstruct,
    shamir_share,
    xor_reconstruct,
    xor_share,
)
from veil.errors import ConfigError, InputError

INTS = np.array([0, 1, -1, 123456789, -987654321, 2**39, -(2**39)], dtype=np.int64)
FLOATS = np.array([[0.0, -1.5, 3.25], [1e-6, -123.456, 1e5]])


def test_xor_round_trip_and_errors() -> None:
    secret = b"the launch code is 0000"
    for n in (1, 2, 5):
        shares = xor_share(secret, n)
        assert len(shares) == n and all(len(s) == len(secret) for s in shares)
        assert xor_reconstruct(shares) == secret
    shares = xor_share(secret, 3)
    assert xor_reconstruct(shares[:2]) != secret
    with pytest.raises(CryptoError, match="different lengths"):
        xor_reconstruct([shares[0], shares[1][:-1]])
    with pytest.raises(ConfigError):
        xor_share("text", 2)  # type: ignore[arg-type]
    with pytest.raises(CryptoError):
        xor_reconstruct([])


@pytest.mark.parametrize("modulus", [RING64, MERSENNE61, 4294967291])
def test_additive_round_trip(modulus: int) -> None:
    small = INTS if modulus != 4294967291 else np.array([0, 1, -1, 1000, -1000])
    kwargs = {"max_abs": 10**6} if modulus == 4294967291 else {}
    out = additive_reconstruct(additive_share(small, 4, modulus=modulus, **kwargs))
    assert out.dtype == np.int64 and np.array_equal(out, small)
    if modulus != 4294967291:
        fl = additive_reconstruct(additive_share(FLOATS, 3, modulus=modulus, frac_bits=24))
        assert fl.shape == FLOATS.shape
        assert np.max(np.abs(fl - FLOATS)) <= 2.0**-25


def test_additive_needs_all_shares() -> None:
    shares = additive_share(np.arange(5), 4)
    with pytest.raises(CryptoError, match=r"missing indices \[3\]"):
        additive_reconstruct([shares[0], shares[1], shares[3]])
    with pytest.raises(CryptoError, match="twice"):
        additive_reconstruct([shares[0], shares[1], shares[2], shares[2]])
    other = additive_share(np.arange(5), 4)
    with pytest.raises(CryptoError, match="different sharing"):
        additive_reconstruct([*shares[:3], other[3]])


@pytest.mark.parametrize(("t", "n"), [(1, 1), (1, 3), (2, 3), (3, 5), (4, 6), (5, 5)])
def test_shamir_every_subset_reconstructs(t: int, n: int) -> None:
    shares = shamir_share(INTS, t, n)
    for k in range(t, n + 1):
        for subset in itertools.combinations(shares, k):
            assert np.array_equal(shamir_reconstruct(list(subset)), INTS)
    for subset in itertools.combinations(shares, t - 1):
        if not subset:
            continue
        with pytest.raises(CryptoError, match=f"need at least {t} shares"):
            shamir_reconstruct(list(subset))


def test_shamir_floats_and_small_prime() -> None:
    shares = shamir_share(FLOATS, 3, 5, frac_bits=30, max_abs=1e6)
    out = shamir_reconstruct(shares[1:4])
    assert out.shape == (2, 3) and np.max(np.abs(out - FLOATS)) <= 2.0**-31
    small = shamir_share(np.array([0, 5, -5, 100]), 2, 4, prime=65537, max_abs=1000)
    assert shamir_reconstruct(small[2:]).tolist() == [0, 5, -5, 100]


def test_bad_parameters_and_inputs() -> None:
    with pytest.raises(ConfigError):
        shamir_share(np.arange(3), 4, 3)
    with pytest.raises(ConfigError):
        shamir_share(np.arange(3), 2, 3, prime=65536)
    with pytest.raises(ConfigError, match="larger than n"):
        shamir_share(np.arange(3), 2, 7, prime=7)
    with pytest.raises(InputError, match="frac_bits"):
        shamir_share(np.array([1.5]), 2, 3)
    with pytest.raises(InputError, match="NaN"):
        additive_share(np.array([np.nan]), 2, frac_bits=8)
    with pytest.raises(CryptoOverflowError, match="max_abs"):
        shamir_share(np.array([2**62]), 2, 3)
    with pytest.raises(CryptoOverflowError):
        additive_share(np.array([5.0]), 2, frac_bits=10, max_abs=4)


def test_share_repr_hides_values() -> None:
    share = shamir_share(np.array([424242]), 2, 3)[0]
    assert "424242" not in repr(share) and str(int(share.values[0])) not in repr(share)


# -- homomorphic operations ---------------------------------------------------------------------
vec = st.lists(st.integers(-(10**9), 10**9), min_size=1, max_size=6)


@settings(max_examples=40, deadline=None)
@given(a=vec, b=vec, k=st.integers(-1000, 1000), modulus=st.sampled_from([RING64, MERSENNE61]))
def test_additive_homomorphism(a: list[int], b: list[int], k: int, modulus: int) -> None:
    m = min(len(a), len(b))
    x, y = np.array(a[:m]), np.array(b[:m])
    sa, sb = additive_share(x, 3, modulus=modulus), additive_share(y, 3, modulus=modulus)
    combo = [k * u - v for u, v in zip(sa, sb)]
    assert np.array_equal(additive_reconstruct(combo), k * x - y)


@settings(max_examples=40, deadline=None)
@given(a=vec, b=vec, k=st.integers(-1000, 1000), t=st.integers(1, 4))
def test_shamir_homomorphism(a: list[int], b: list[int], k: int, t: int) -> None:
    m = min(len(a), len(b))
    x, y = np.array(a[:m]), np.array(b[:m])
    sa, sb = shamir_share(x, t, 4), shamir_share(y, t, 4)
    combo = [u + k * v for u, v in zip(sa, sb)]
    assert np.array_equal(shamir_reconstruct(combo[-t:]), x + k * y)
    assert np.array_equal(shamir_reconstruct([-s for s in sa][:t]), -x)


def test_fixed_point_shares_add() -> None:
    a, b = np.array([1.25, -2.5]), np.array([0.125, 10.0])
    sa, sb = shamir_share(a, 2, 3, frac_bits=20), shamir_share(b, 2, 3, frac_bits=20)
    out = shamir_reconstruct([u + v for u, v in zip(sa, sb)][:2])
    assert out.tolist() == [1.375, 7.5]


def test_incompatible_shares_refuse_to_combine() -> None:
    a = shamir_share(np.arange(3), 2, 3)
    with pytest.raises(CryptoError, match="index"):
        a[0] + a[1]
    with pytest.raises(CryptoError, match="threshold"):
        a[0] + shamir_share(np.arange(3), 3, 3)[0]
    with pytest.raises(CryptoError, match="frac_bits"):
        a[0] + shamir_share(np.arange(3.0), 2, 3, frac_bits=4)[0]
    with pytest.raises(CryptoError, match="scheme"):
        a[0] + additive_share(np.arange(3), 3, modulus=MERSENNE61)[0]
    with pytest.raises(CryptoError, match="shape"):
        a[0] + shamir_share(np.arange(4), 2, 3)[0]
    with pytest.raises(TypeError):
        a[0] * 1.5  # type: ignore[operator]


def test_overflow_is_detected_not_wrapped() -> None:
    x = np.array([2**39])
    shares = shamir_share(x, 2, 3, max_abs=2**58)
    doubled = [s + s for s in shares]
    assert shamir_reconstruct(doubled[:2]).tolist() == [2**40]
    with pytest.raises(CryptoOverflowError):
        [s * 4 for s in shares]  # bound 2**60 > capacity 2**60 - 1
    ring = additive_share(np.array([1]), 2, max_abs=2**62)
    with pytest.raises(CryptoOverflowError):
        [s * 2 for s in ring]


# -- integrity -------------------------------------------------------------------------------------
def _corrupt(share, position: int = 0):  # type: ignore[no-untyped-def]
    vals = share.values.copy()
    vals[position] ^= np.uint64(1)
    return dataclasses.replace(share, values=vals)


def test_mac_detects_corrupted_and_substituted_shares() -> None:
    key = b"k" * 32
    x = np.arange(1000)
    shares = shamir_share(x, 3, 5, mac_key=key)
    assert np.array_equal(shamir_reconstruct(shares[:3], mac_key=key), x)
    bad = [shares[0], _corrupt(shares[1], 999), shares[2]]
    with pytest.raises(CryptoError, match="share 2 failed authentication"):
        shamir_reconstruct(bad, mac_key=key)
    # a share from another dealing with a forged sharing id and the same index
    other = shamir_share(x + 1, 3, 5, mac_key=key)[2]
    forged = dataclasses.replace(other, sharing_id=shares[0].sharing_id)
    with pytest.raises(CryptoError, match="share 3 failed authentication"):
        shamir_reconstruct([shares[0], shares[1], forged], mac_key=key)
    with pytest.raises(CryptoError, match="failed authentication"):
        shamir_reconstruct(shares[:3], mac_key=b"x" * 32)
    add = additive_share(x, 3, mac_key=key)
    with pytest.raises(CryptoError, match="share 3 failed"):
        additive_reconstruct([add[0], add[1], _corrupt(add[2])], mac_key=key)


def test_redundant_shares_locate_corruption() -> None:
    x = np.arange(50)
    shares = shamir_share(x, 3, 5)
    with pytest.raises(CryptoError, match="inconsistent"):
        shamir_reconstruct([shares[0], shares[1], shares[2], _corrupt(shares[3], 7)])
    for bad in range(5):
        mixed = [_corrupt(s, 3) if i == bad else s for i, s in enumerate(shares)]
        with pytest.raises(CryptoError, match=f"share {bad + 1} is corrupted"):
            shamir_reconstruct(mixed)
    assert np.array_equal(shamir_reconstruct(shares), x)
