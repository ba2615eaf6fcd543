"""Secure aggregation of three parties' model weights with Paillier (the seed scenario).

A key holder generates a Paillier key pair and publishes the public key.  Three hospitals
train a model locally, encrypt their weight vectors with packing (35 fixed-point values per
2048-bit ciphertext) and send the JSON to an aggregator.  The aggregator adds the ciphertexts
without being able to read them; only the key holder decrypts, and only the sum.

Run: ``python examples/paillier_weights.py [--bits 2048]``
"""

from __future__ import annotations

import argparse

import numpy as np

from veil.crypto.paillier import (
    PackingSpec,
    aggregate,
    decrypt_aggregate,
    dumps,
    encrypt_contribution,
    generate_paillier_keypair,
)


def run(bits: int = 2048, n_weights: int = 1000, parties: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(decrypted mean weights, plaintext mean weights)``."""
    public_key, private_key = generate_paillier_keypair(n_length=bits, insecure=bits < 2048)
    spec = PackingSpec(frac_bits=32, int_bits=20, max_parties=parties)
    rng = np.random.default_rng(0)  # the *data* are simulated; encryption randomness is secure
    local_weights = [rng.normal(0, 0.1, size=n_weights) for _ in range(parties)]
    messages = [encrypt_contribution(public_key, w, spec) for w in local_weights]  # parties
    encrypted_sum = aggregate(messages, public_key)  # aggregator: sees ciphertexts only
    total = decrypt_aggregate(private_key, dumps(encrypted_sum))  # key holder: the sum only
    return total / parties, sum(local_weights) / parties


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bits", type=int, default=2048)
    parser.add_argument("--weights", type=int, default=1000)
    args = parser.parse_args(argv)
    mean, expected = run(args.bits, args.weights)
    err = float(np.max(np.abs(mean - expected)))
    print(f"averaged {args.weights} weights from 3 parties; max error {err:.2e}")
    assert err <= 2.0**-32
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
