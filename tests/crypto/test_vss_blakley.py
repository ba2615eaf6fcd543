"""Feldman and Pedersen verifiable secret sharing, and Blakley's hyperplane scheme."""

from __future__ import annotations

import dataclasses
import itertools

import gmpy2
import numpy as np
import pytest
from scipy import stats

from veil.crypto import (
    CryptoError,
    FeldmanGroup,
    blakley_reconstruct,
    blakley_share,
    feldman_reconstruct,
    feldman_share,
    feldman_verify,
    pedersen_generator,
    pedersen_reconstruct,
    pedersen_share,
    pedersen_verify,
)
from veil.errors import ConfigError

# the dealings come from os.urandom, which no test can seed: the 5 chi-square tests below fail
# a correct scheme with probability 5 x ALPHA per run of the suite
ALPHA = 1e-8


@pytest.fixture(scope="module")
def group() -> FeldmanGroup:
    return FeldmanGroup.generate(160, insecure=True)


def test_default_group_is_a_safe_prime_group() -> None:
    grp = FeldmanGroup.default()
    assert grp.p.bit_length() == 2048 and grp.p == 2 * grp.q + 1
    assert gmpy2.is_prime(grp.p, 25) and gmpy2.is_prime(grp.q, 25)
    assert pow(grp.g, grp.q, grp.p) == 1 and grp.g != 1  # g generates the order-q subgroup


def test_generated_group(group: FeldmanGroup) -> None:
    assert group.p == 2 * group.q + 1 and gmpy2.is_prime(group.p) and gmpy2.is_prime(group.q)
    with pytest.raises(ConfigError, match="insecure"):
        FeldmanGroup.generate(512)


def test_feldman_default_group_scalar_round_trip() -> None:
    secret = 2**200 + 12345
    shares, comm = feldman_share(secret, 2, 3)
    assert feldman_reconstruct([shares[2], shares[0]], comm) == secret


def test_feldman_every_subset_and_negative_values(group: FeldmanGroup) -> None:
    secret = [0, -1, 10**30, -(10**30)]
    shares, comm = feldman_share(secret, 3, 5, group=group)
    assert all(feldman_verify(s, comm) for s in shares)
    for sub in itertools.combinations(shares, 3):
        assert feldman_reconstruct(list(sub), comm) == secret
    for sub in itertools.combinations(shares, 2):
        with pytest.raises(CryptoError, match="need at least 3"):
            feldman_reconstruct(list(sub), comm)


def test_feldman_detects_corrupted_and_substituted_shares(group: FeldmanGroup) -> None:
    shares, comm = feldman_share([5, 6], 2, 4, group=group)
    bad = dataclasses.replace(shares[1], values=(shares[1].values[0] + 1, shares[1].values[1]))
    assert not feldman_verify(bad, comm)
    with pytest.raises(CryptoError, match=r"share\(s\) \[2\] failed Feldman verification"):
        feldman_reconstruct([shares[0], bad, shares[2]], comm)
    other, _ = feldman_share([5, 6], 2, 4, group=group)
    with pytest.raises(CryptoError, match=r"\[3\]"):
        feldman_reconstruct([shares[0], other[2]], comm)


def test_feldman_homomorphic_addition(group: FeldmanGroup) -> None:
    sa, ca = feldman_share([100, -3], 2, 3, group=group)
    sb, cb = feldman_share([23, 10], 2, 3, group=group)
    total = [a + b for a, b in zip(sa, sb)]
    comm = ca + cb
    assert all(feldman_verify(s, comm) for s in total)
    assert feldman_reconstruct(total[1:], comm) == [123, 7]
    with pytest.raises(CryptoError):
        sa[0] + sb[1]


def test_blakley_every_subset() -> None:
    for t, n in [(1, 2), (2, 3), (3, 5), (4, 4)]:
        secret = [7, -7, 2**100]
        shares = blakley_share(secret, t, n)
        for k in range(t, n + 1):
            for sub in itertools.combinations(shares, k):
                assert blakley_reconstruct(list(sub)) == secret
        if t > 1:
            with pytest.raises(CryptoError, match=f"need at least {t}"):
                blakley_reconstruct(shares[: t - 1])
    assert blakley_reconstruct(blakley_share(-5, 2, 2, prime=257)) == -5


def test_blakley_inconsistent_and_foreign_shares() -> None:
    shares = blakley_share(99, 2, 4)
    bad = dataclasses.replace(shares[3], offsets=(shares[3].offsets[0] + 1,))
    with pytest.raises(CryptoError, match="share 4 is inconsistent"):
        blakley_reconstruct([shares[0], shares[1], bad])
    other = blakley_share([1, 2], 2, 4)
    with pytest.raises(CryptoError, match="different sharing"):
        blakley_reconstruct([shares[0], other[1]])
    with pytest.raises(ConfigError):
        blakley_share(1, 2, 3, prime=256)


def test_blakley_t_minus_one_shares_uniform() -> None:
    p, n_samples = 257, 60_000
    shares = blakley_share([3] * n_samples, 2, 3, prime=p)  # same secret everywhere
    counts = np.bincount(np.array(shares[1].offsets), minlength=p)
    assert stats.chisquare(counts).pvalue > ALPHA


def test_pedersen_share_with_a_blinding_too_many_or_too_few_fails_verification(
    group: FeldmanGroup,
) -> None:
    # a received share whose blindings do not match its values one to one is malformed: False,
    # not an IndexError (too few) nor a pass that ignores the extra blinding (too many)
    shares, comm = pedersen_share([4, 7], 2, 3, group=group)
    good = shares[0]
    assert pedersen_verify(good, comm)
    for blindings in (good.blindings[:1], (*good.blindings, 0)):
        assert not pedersen_verify(dataclasses.replace(good, blindings=blindings), comm)


def test_pedersen_round_trip_tamper_and_homomorphism(group: FeldmanGroup) -> None:
    shares, comm = pedersen_share([1, 0, -5], 3, 5, group=group)
    assert all(pedersen_verify(s, comm) for s in shares)
    for sub in itertools.combinations(shares, 3):
        assert pedersen_reconstruct(list(sub), comm) == [1, 0, -5]
    with pytest.raises(CryptoError, match="need at least 3"):
        pedersen_reconstruct(shares[:2], comm)
    bad = dataclasses.replace(shares[4], blindings=(shares[4].blindings[0] + 1, 0, 0))
    with pytest.raises(CryptoError, match=r"\[5\] failed Pedersen"):
        pedersen_reconstruct([shares[0], shares[1], bad], comm)
    other, comm2 = pedersen_share([2, 3, 4], 3, 5, group=group)
    total = [a + b for a, b in zip(shares, other)]
    assert pedersen_reconstruct(total[2:], comm + comm2) == [3, 3, -1]
    assert pedersen_reconstruct(*pedersen_share(7, 2, 2)) == 7  # default 2048-bit group


def test_pedersen_commitments_hide_low_entropy_secrets(group: FeldmanGroup) -> None:
    # Feldman leaks g^s: a yes/no vote is recovered by comparing with g^0 and g^1 ...
    _, fcomm = feldman_share(1, 2, 3, group=group)
    assert fcomm.commitments[0][0] == pow(group.g, 1, group.p)
    # ... Pedersen's constant-term commitment is blinded: it matches neither candidate
    _, pcomm = pedersen_share(1, 2, 3, group=group)
    assert pcomm.commitments[0][0] not in (1, group.g)
    h = pedersen_generator(group)
    assert pow(h, group.q, group.p) == 1 and h != group.g


def test_blakley_refuses_shares_of_another_sharing_with_the_same_layout() -> None:
    a, b = blakley_share(5, 2, 3), blakley_share(5, 2, 3)
    with pytest.raises(CryptoError, match="different sharing"):
        blakley_reconstruct([a[0], b[1]])
    assert blakley_reconstruct([a[2], a[0]]) == 5


def test_blakley_small_field_never_deals_leaky_or_dependent_hyperplanes() -> None:
    # 5-of-20 over GF(101): too many subsets to check exhaustively, and with random normals
    # about 1 subset in 100 is degenerate -- t - 1 shares could then pin the secret down.
    p, t, n = 101, 5, 20
    try:
        shares = blakley_share(3, t, n, prime=p)
    except ConfigError as err:
        assert "prime" in str(err)
        return
    normals = [list(s.normal) for s in shares]
    for sub in itertools.combinations(normals, t - 1):
        m = np.array([r[1:] for r in sub], dtype=object)
        assert _rank_mod(m, p) == t - 1  # the secret coordinate stays free
    for sub in itertools.combinations(normals, t):
        assert _rank_mod(np.array(sub, dtype=object), p) == t


def _rank_mod(m: np.ndarray, p: int) -> int:
    """Rank of an integer matrix modulo the prime ``p`` (plain Gaussian elimination)."""
    rows = [[int(v) % p for v in row] for row in m]
    rank = 0
    for c in range(len(rows[0])):
        piv = next((r for r in range(rank, len(rows)) if rows[r][c]), None)
        if piv is None:
            continue
        rows[rank], rows[piv] = rows[piv], rows[rank]
        inv = pow(rows[rank][c], -1, p)
        rows[rank] = [v * inv % p for v in rows[rank]]
        for r in range(len(rows)):
            if r != rank and rows[r][c]:
                f = rows[r][c]
                rows[r] = [(v - f * w) % p for v, w in zip(rows[r], rows[rank])]
        rank += 1
    return rank


@pytest.mark.parametrize("scheme", ["feldman", "pedersen"])
def test_vss_rejects_malformed_shares_with_a_crypto_error(group: FeldmanGroup, scheme: str) -> None:
    share_fn, verify, rebuild = {
        "feldman": (feldman_share, feldman_verify, feldman_reconstruct),
        "pedersen": (pedersen_share, pedersen_verify, pedersen_reconstruct),
    }[scheme]
    shares, comm = share_fn(7, 2, 3, group=group)
    # index 1 + q evaluates the commitments like index 1 (exponents are mod q): it used to
    # verify and then crash Lagrange interpolation with a bare ValueError
    alias = dataclasses.replace(shares[0], index=shares[0].index + group.q)
    assert not verify(alias, comm)
    with pytest.raises(CryptoError, match=r"\[" + str(alias.index) + r"\]"):
        rebuild([shares[0], alias], comm)
    for bad in (
        dataclasses.replace(shares[1], values=(1.5,)),
        dataclasses.replace(shares[1], index=0),
        dataclasses.replace(shares[1], index=-2),
    ):
        assert not verify(bad, comm)
        with pytest.raises(CryptoError, match="failed"):
            rebuild([shares[0], bad], comm)
    assert rebuild([shares[2], shares[0]], comm) == 7


def test_feldman_group_refuses_parameters_that_are_not_a_safe_prime_group() -> None:
    assert FeldmanGroup(23, 11, 4).q == 11  # p = 2q + 1, both prime, g a square
    for p, q, g in [
        (35, 17, 4),  # p composite: discrete logs are easy modulo its factors
        (19, 9, 4),  # q composite
        (23, 10, 4),  # p != 2q + 1
        (23, 11, 5),  # 5 is not a square mod 23: order 22, g^s leaks s mod 2
        (23, 11, 1),  # g = 1 commits to nothing
        (23, 11, 22),  # g = -1 has order 2
    ]:
        with pytest.raises(ConfigError):
            FeldmanGroup(p, q, g)


def test_pedersen_one_share_and_the_commitments_are_uniform_whatever_the_secret() -> None:
    # in the order-11 subgroup of Z_23^*, one party's whole view of a 2-of-3 Pedersen sharing
    # -- its value, its blinding and C_0 (C_1 follows from them) -- must be uniform on
    # 11^3 cells for a 0 and for a 1 vote alike (chi-square, alpha 1e-8, 40,000 dealings)
    grp = FeldmanGroup(23, 11, 4)
    cell = {pow(grp.g, k, grp.p): k for k in range(grp.q)}
    for secret in (0, 1):
        shares, comm = pedersen_share([secret] * 40_000, 2, 3, group=grp)
        v, b = np.array(shares[1].values), np.array(shares[1].blindings)
        c0 = np.array([cell[c[0]] for c in comm.commitments])
        counts = np.bincount((v * grp.q + b) * grp.q + c0, minlength=grp.q**3)
        assert stats.chisquare(counts).pvalue > ALPHA


@pytest.mark.parametrize("scheme", ["feldman", "pedersen", "blakley"])
def test_secrets_that_are_not_integers_raise_a_crypto_error(
    group: FeldmanGroup, scheme: str
) -> None:
    def deal(secret: object) -> object:
        if scheme == "blakley":
            return blakley_reconstruct(blakley_share(secret, 2, 3))  # type: ignore[arg-type]
        share, rebuild = {
            "feldman": (feldman_share, feldman_reconstruct),
            "pedersen": (pedersen_share, pedersen_reconstruct),
        }[scheme]
        shares, comm = share(secret, 2, 3, group=group)  # type: ignore[arg-type]
        return rebuild(shares[:2], comm)

    # a float, bytes (would be dealt as a list of byte values), text, None, a NaN
    for bad in (1.5, b"key", "key", None, float("nan"), [1, 2.5]):
        with pytest.raises(CryptoError):
            deal(bad)
    # numpy integers are integers: dealt as the same scalar / vector as Python ints
    assert deal(np.int64(-42)) == -42
    assert deal(np.array([5, -6])) == [5, -6]


def test_blakley_two_of_three_needed_shares_are_uniform_on_a_small_field() -> None:
    # 3-of-4 over GF(11): within one dealing (shared normals) the offsets that shares 1 and 4
    # hold for each element must be uniform on 11^2 cells whatever the secret (chi-square,
    # alpha 1e-8, 30,000 elements per secret)
    p = 11
    for secret in (0, 5):
        shares = blakley_share([secret] * 30_000, 3, 4, prime=p)
        cells = np.array(shares[0].offsets) * p + np.array(shares[3].offsets)
        assert stats.chisquare(np.bincount(cells, minlength=p * p)).pvalue > ALPHA


def test_blakley_refuses_malformed_hyperplanes() -> None:
    # a normal with a coordinate too many shifted the offset columns: two such shares
    # "reconstructed" a 38-digit number instead of 5, without error; a short one raised
    # IndexError, and an empty one passed the redundancy check of extra shares
    sh = blakley_share(5, 2, 4)
    long_normal = dataclasses.replace(sh[3], normal=(*sh[3].normal, 7))
    short_normal = dataclasses.replace(sh[3], normal=sh[3].normal[:1])
    empty = dataclasses.replace(sh[3], normal=(), offsets=(0,))
    out_of_field = dataclasses.replace(sh[3], offsets=(sh[3].offsets[0] + sh[3].prime,))
    vector = dataclasses.replace(sh[3], scalar=False)
    for bad in (long_normal, short_normal, empty, out_of_field, vector):
        for combo in ([bad, sh[1]], [sh[0], bad], [sh[0], sh[1], bad]):
            with pytest.raises(CryptoError, match="is malformed"):
                blakley_reconstruct(combo)
    assert blakley_reconstruct([sh[0], sh[3]]) == 5
