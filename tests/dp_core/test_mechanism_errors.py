"""A mechanism's input is the private value: an error about it must not quote it."""

from __future__ import annotations

import pytest

import veil.dp.mechanisms as M
from veil.errors import InputError

SENTINEL = "SENTINEL-7731"


def test_randomized_response_does_not_quote_the_input():
    rr = M.RandomizedResponse(epsilon=1.0, categories=["a", "b", "c"], random_state=1)
    with pytest.raises(InputError, match="not one of the 3 categories") as info:
        rr.randomise(SENTINEL)
    assert SENTINEL not in str(info.value)
    b = M.Binary(epsilon=1.0, value0="no", value1="yes", random_state=2)
    with pytest.raises(InputError, match="categories") as info:
        b.randomise(SENTINEL)
    assert SENTINEL not in str(info.value)


def test_exponential_categorical_does_not_quote_the_input():
    m = M.ExponentialCategorical(
        epsilon=1.0, utility_list=[("a", "b", 1), ("a", "c", 2), ("b", "c", 1)], random_state=3
    )
    with pytest.raises(
        InputError, match=r"not in the domain of the utility list \(3 values\)"
    ) as e:
        m.randomise(SENTINEL)
    assert SENTINEL not in str(e.value)
