"""Share values that went through another representation: exact, or refused -- never garbage."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from veil.crypto import (
    CryptoError,
    additive_reconstruct,
    additive_share,
    shamir_reconstruct,
    shamir_share,
)

SECRET = np.array([10, -20, 2**40])


def _with(shares: list, conv) -> list:  # type: ignore[no-untyped-def, type-arg]
    return [dataclasses.replace(s, values=conv(s.values)) for s in shares]


@pytest.mark.parametrize("modulus", [2**64, 2**61 - 1])
def test_integer_representations_round_trip(modulus: int) -> None:
    shamir = shamir_share(SECRET, 2, 3) if modulus != 2**64 else None
    additive = additive_share(SECRET, 2, modulus=modulus)
    for conv in (
        lambda v: np.array(v.tolist(), dtype=object),  # Python ints (e.g. from JSON)
        lambda v: v.tolist(),  # a plain list
        lambda v: v.astype(np.int64) if modulus != 2**64 else v,  # residues below 2**61
    ):
        assert additive_reconstruct(_with(additive, conv)).tolist() == SECRET.tolist()
        if shamir is not None:
            assert shamir_reconstruct(_with(shamir[1:], conv)).tolist() == SECRET.tolist()
    # numpy turns a list mixing ints above and below 2**63 into float64 (rounded): the result
    # must then be refused, never a wrong secret
    try:
        got = additive_reconstruct(_with(additive, lambda v: np.array(v.tolist())))
    except CryptoError:
        return
    assert got.tolist() == SECRET.tolist()


def test_values_that_cannot_be_exact_are_refused() -> None:
    shamir = shamir_share(SECRET, 2, 3)
    additive = additive_share(SECRET, 2)
    bad_convs = {
        "float": lambda v: v.astype(np.float64),  # e.g. read back through pandas / CSV
        "negative": lambda v: -(v.astype(np.int64) & np.int64(0xFFFF)) - 1,
        "out of field": lambda v: v | np.uint64(2**62),
        "wrong length": lambda v: v[:-1],
        "text": lambda v: v.astype(str),
    }
    for name, conv in bad_convs.items():
        with pytest.raises(CryptoError, match="share"):
            shamir_reconstruct(_with(shamir[:2], conv))
        if name not in ("out of field",):  # every 64-bit word is in Z_2^64
            with pytest.raises(CryptoError, match="share"):
                additive_reconstruct(_with(additive, conv))
