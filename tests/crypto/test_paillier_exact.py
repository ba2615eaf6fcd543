"""Exact packing: integer and fixed-point values round-trip without float64 rounding."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from veil.crypto.paillier import CryptoOverflowError, PackingSpec


def test_audit_cases_round_trip_exactly(keys) -> None:  # type: ignore[no-untyped-def]
    pk, sk = keys
    spec = PackingSpec(frac_bits=0, int_bits=62)
    x = np.array([1, 2**61 + 1, -3], dtype=np.int64)
    out = sk.decrypt_vector(pk.encrypt_vector(x, spec))
    assert out.dtype.kind == "i" and out.tolist() == [1, 2**61 + 1, -3]
    out = sk.decrypt_vector(pk.encrypt_vector(np.array([2**55 + 1]), PackingSpec(0, 60, 2)))
    assert out.dtype.kind == "i" and out.tolist() == [2**55 + 1]
    spec = PackingSpec(frac_bits=40, int_bits=22)
    out = sk.decrypt_vector(pk.encrypt_vector(np.array([-2.5e-9, 1e-12, 4e6 + 0.1]), spec))
    for got, want in zip(out.tolist(), [-2.5e-9, 1e-12, 4e6 + 0.1]):
        assert abs(Fraction(got) - Fraction(want)) <= Fraction(1, 2**41)


@pytest.mark.parametrize(("frac", "int_bits"), [(0, 62), (62, 0), (40, 22), (9, 53), (31, 31)])
def test_random_round_trips_at_the_spec_extremes(keys, frac: int, int_bits: int) -> None:  # type: ignore[no-untyped-def]
    pk, sk = keys
    spec = PackingSpec(frac_bits=frac, int_bits=int_bits, max_parties=3)
    rng = np.random.default_rng(frac * 100 + int_bits)
    top = 2 ** (frac + int_bits) - 1  # largest encodable |v|
    v = [int(a) for a in rng.integers(-top, top, size=40, endpoint=True)] + [top, -top, 0, 1, -1]
    if frac == 0:  # integers: exact, in and out
        x = np.array(v, dtype=np.int64)
        out = sk.decrypt_vector(pk.encrypt_vector(x, spec) * 2 + x)
        assert out.dtype.kind in "iO" and [int(a) for a in out.tolist()] == [3 * a for a in v]
        out = sk.decrypt_vector(pk.encrypt_vector(x, spec))
        assert out.dtype.kind == "i" and out.tolist() == v
        xu = np.abs(x).astype(np.uint64)
        assert sk.decrypt_vector(pk.encrypt_vector(xu, spec)).tolist() == [abs(a) for a in v]
        return
    # floats: exact fixed-point inputs come back exactly when float64 holds them, and any
    # float64 input comes back within half a fixed-point step
    xs = np.array([float(Fraction(a, 2**frac)) for a in v])
    xs = xs[np.abs(xs) < 2.0**int_bits]  # float64 rounding may reach the bound itself
    out = sk.decrypt_vector(pk.encrypt_vector(xs, spec))
    step = Fraction(1, 2**frac)
    for got, want in zip(out.tolist(), xs.tolist()):
        assert abs(Fraction(got) - Fraction(want)) <= step / 2 + Fraction(abs(want)) * 2**-53
    exact = [a for a in v if abs(a) < 2**53]
    xe = np.array([float(Fraction(a, 2**frac)) for a in exact])
    assert sk.decrypt_vector(pk.encrypt_vector(xe, spec)).tolist() == xe.tolist()


def test_integer_sum_beyond_int64_stays_exact(keys) -> None:  # type: ignore[no-untyped-def]
    pk, sk = keys
    spec = PackingSpec(frac_bits=0, int_bits=62, max_parties=4)
    x = np.array([2**62 - 1, -(2**62) + 1, 5], dtype=np.int64)
    out = sk.decrypt_vector(pk.encrypt_vector(x, spec) * 4)
    assert [int(a) for a in out.tolist()] == [4 * (2**62 - 1), -4 * (2**62 - 1), 20]


def test_bounds_checked_exactly_for_integers(keys) -> None:  # type: ignore[no-untyped-def]
    pk, _ = keys
    spec = PackingSpec(frac_bits=0, int_bits=62)
    for bad in ([2**62], [-(2**62)], np.array([2**63 + 5], dtype=np.uint64)):
        with pytest.raises(CryptoOverflowError):
            pk.encrypt_vector(np.asarray(bad), spec)
    with pytest.raises(CryptoOverflowError):  # 2**53 + 1 must not be rounded down to 2**53
        pk.encrypt_vector(np.array([2**53 + 1]), PackingSpec(frac_bits=0, int_bits=53))
