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


def test_bounded_domain_too_narrow_for_its_scale_is_refused_not_hung() -> None:
    """randomise() resamples until the value lands in the domain; a domain far narrower than
    the noise scale (1e-300 wide, or [0, 1] at epsilon 1e-10) looped practically forever."""
    import pytest

    from veil.dp.mechanisms import LaplaceBoundedDomain
    from veil.errors import ConfigError

    for upper, eps in ((1e-300, 1.0), (1.0, 1e-10)):
        with pytest.raises(ConfigError, match="too narrow"):
            LaplaceBoundedDomain(epsilon=eps, sensitivity=1, lower=0, upper=upper)
    m = LaplaceBoundedDomain(epsilon=1e-5, sensitivity=1, lower=0, upper=1, random_state=0)
    assert 0 <= m.randomise(0.5) <= 1  # ~250,000 proposals on average: still served
