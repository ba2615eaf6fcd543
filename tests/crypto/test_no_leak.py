"""Statistical tests: fewer shares than the threshold are uniform (chi-square, alpha = 1e-8).

The shares come from :func:`os.urandom`, which no test can seed: each of the 8 chi-square
tests here fails a correct sharing with probability ALPHA, so 8e-8 per run of the suite
(alpha 1e-6 gave 8e-6).  Lowering alpha from 1e-6 to 1e-8 raises the 1 - alpha quantile of
chi-square(255) from 377 to 403: a leak still fails by orders of magnitude."""

from __future__ import annotations

import numpy as np
from scipy import stats

from veil.crypto import additive_share, shamir_share, xor_share

ALPHA = 1e-8  # unseedable randomness: 8 tests x 1e-8 false failures per run
N = 200_000


def _assert_uniform(samples: np.ndarray, bins: int) -> None:
    counts = np.bincount(samples.astype(np.int64), minlength=bins)
    assert counts.size == bins
    assert stats.chisquare(counts).pvalue > ALPHA


def test_shamir_t_minus_one_shares_are_uniform() -> None:
    p = 17
    for secret in (0, 5):
        shares = shamir_share(np.full(N, secret), 3, 5, prime=p, max_abs=8)
        s1, s4 = shares[0].values, shares[3].values
        _assert_uniform(s1 * p + s4, p * p)  # joint distribution of any 2 of a 3-of-5 sharing


def test_shamir_single_share_of_2_of_n_is_uniform_in_large_field() -> None:
    shares = shamir_share(np.full(N, 42), 2, 3)
    v = shares[1].values
    _assert_uniform(v & np.uint64(0xFF), 256)
    _assert_uniform(v >> np.uint64(53), 256)


def test_additive_n_minus_one_shares_are_uniform() -> None:
    shares = additive_share(np.full(N, -7), 3)  # ring Z_2^64
    a, c = shares[0].values, shares[2].values  # c is the derived share
    _assert_uniform(((a & np.uint64(0xF)) << np.uint64(4)) | (c >> np.uint64(60)), 256)
    _assert_uniform(c & np.uint64(0xFF), 256)
    prime = additive_share(np.full(N, 3), 2, modulus=257, max_abs=100)
    _assert_uniform(prime[1].values, 257)


def test_xor_n_minus_one_shares_are_uniform() -> None:
    secret = bytes(N)  # all zeros: the worst case for a leak
    shares = xor_share(secret, 3)
    b2 = np.frombuffer(shares[1], dtype=np.uint8)
    b3 = np.frombuffer(shares[2], dtype=np.uint8)
    _assert_uniform(b3, 256)
    _assert_uniform((b2 >> 4).astype(np.int64) * 16 + (b3 & 0xF), 256)
