"""HMAC keys for authenticated shares: an empty or short key would make tags forgeable."""

from __future__ import annotations

import dataclasses
import hashlib
import hmac

import numpy as np
import pytest

from veil.crypto import additive_reconstruct, additive_share, shamir_reconstruct, shamir_share
from veil.errors import ConfigError


def test_an_empty_key_would_let_anyone_forge_a_tag() -> None:
    # the attack the check prevents: with b"" as key, a forger recomputes a valid tag
    try:
        shares = shamir_share(np.array([5]), 2, 3, mac_key=b"")
    except ConfigError:
        return
    forged = dataclasses.replace(shares[1], values=shares[1].values + np.uint64(1), tag=None)
    mac = hmac.new(b"", forged.header(), hashlib.sha256)
    mac.update(forged.values.astype("<u8").tobytes())
    forged = dataclasses.replace(forged, tag=mac.digest())
    got = shamir_reconstruct([shares[0], forged], mac_key=b"")
    pytest.fail(f"a share forged without any secret was accepted (reconstructed {got.size} value)")


@pytest.mark.parametrize("key", [b"", b"short", "a text key of 32 characters.....", 12345])
def test_weak_or_mistyped_keys_are_refused(key: object) -> None:
    x = np.arange(4)
    for deal in (
        lambda: shamir_share(x, 2, 3, mac_key=key),  # type: ignore[arg-type]
        lambda: additive_share(x, 2, mac_key=key),  # type: ignore[arg-type]
    ):
        with pytest.raises(ConfigError, match="mac_key"):
            deal()
    good = b"k" * 16
    with pytest.raises(ConfigError, match="mac_key"):
        shamir_reconstruct(shamir_share(x, 2, 3, mac_key=good), mac_key=key)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="mac_key"):
        additive_reconstruct(additive_share(x, 2, mac_key=good), mac_key=key)  # type: ignore[arg-type]
    assert shamir_reconstruct(shamir_share(x, 2, 3, mac_key=good)[1:], mac_key=good).tolist() == [
        0,
        1,
        2,
        3,
    ]
