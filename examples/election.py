"""Homomorphic secret-sharing election (the seed scenario).

Each voter encodes a ballot as a one-hot vector over the candidates and splits it with Shamir
3-of-5 sharing among five tallying authorities.  Every authority only ever sees uniformly random
shares; it adds the shares it received (a local, homomorphic operation) and publishes the
sum of its shares.  Any three published sums reconstruct the tally, and no single ballot is
ever reconstructed.  When all five authorities publish, a corrupted sum is detected and the
faulty authority is named.

Run: ``python examples/election.py``
"""

from __future__ import annotations

import dataclasses
import secrets
from collections import Counter

import numpy as np

from veil.crypto import CryptoError, Share, shamir_reconstruct, shamir_share

CANDIDATES = ["Alice", "Bob", "Carol"]


def cast(choice: int, n_candidates: int, authorities: int, threshold: int) -> list[Share]:
    """A voter: one-hot ballot, Shamir-shared among the authorities (share i to authority i)."""
    ballot = np.zeros(n_candidates, dtype=np.int64)
    ballot[choice] = 1
    return shamir_share(ballot, threshold, authorities, max_abs=1)


def publish_sums(
    choices: list[int], n_candidates: int, authorities: int = 5, threshold: int = 3
) -> list[Share]:
    """Voters cast ballots; each authority adds the shares it received and publishes the sum."""
    inbox: list[list[Share]] = [[] for _ in range(authorities)]  # what each authority receives
    for choice in choices:
        for a, share in enumerate(cast(choice, n_candidates, authorities, threshold)):
            inbox[a].append(share)
    # each authority adds its shares locally (the public bound grows by 1 per ballot)
    published = []
    for received in inbox:
        total = received[0]
        for share in received[1:]:
            total = total + share
        published.append(total)
    return published


def run_election(
    choices: list[int], n_candidates: int, authorities: int = 5, threshold: int = 3
) -> np.ndarray:
    """Run the protocol and return the reconstructed tally per candidate."""
    published = publish_sums(choices, n_candidates, authorities, threshold)
    # any `threshold` authorities suffice; here three chosen at random
    chosen = secrets.SystemRandom().sample(published, threshold)
    return shamir_reconstruct(chosen)


def audited_tally(published: list[Share]) -> np.ndarray:
    """Reconstruct from *all* published sums: with threshold + 2 or more authorities a single
    cheating authority is detected and named (CryptoError) instead of skewing the tally."""
    return shamir_reconstruct(published)


def main() -> int:
    rng = secrets.SystemRandom()
    choices = [rng.randrange(len(CANDIDATES)) for _ in range(1000)]
    tally = run_election(choices, len(CANDIDATES))
    expected = Counter(choices)
    for i, name in enumerate(CANDIDATES):
        print(f"{name:>6}: {int(tally[i]):4d} votes")
        assert tally[i] == expected[i]
    print("tally verified; no individual ballot was ever reconstructed")
    published = publish_sums(choices, len(CANDIDATES))
    forged = dataclasses.replace(published[3], values=published[3].values ^ np.uint64(1))
    try:
        audited_tally([*published[:3], forged, published[4]])
    except CryptoError as exc:
        print(f"cheating authority detected: {exc}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
