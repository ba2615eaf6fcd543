"""Shared Paillier key pairs for the crypto tests (512-bit: fast, test-only keys)."""

from __future__ import annotations

import pytest

from veil.crypto.paillier import generate_paillier_keypair


@pytest.fixture(scope="module")
def keys():  # type: ignore[no-untyped-def]
    """A test key pair ``(public, private)``, one per test module."""
    return generate_paillier_keypair(n_length=512, insecure=True)


@pytest.fixture(scope="module")
def other_keys():  # type: ignore[no-untyped-def]
    """A second, independent key pair (wrong-key tests)."""
    return generate_paillier_keypair(n_length=512, insecure=True)
