"""Randomized response: binary (Warner 1965), k-ary, and the coin-flip survey.

The coin-flip survey is the classic teaching protocol: flip a coin; on heads answer
truthfully; on tails flip again and answer "yes" on heads.  It is ``ln 3``-DP and the true
proportion is recovered as ``2 * (share of yes) - 1/2``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from veil.dp._samplers import bernoulli
from veil.dp.mechanisms._base import DPMechanism
from veil.errors import ConfigError, InputError

__all__ = ["Binary", "RandomizedResponse", "coin_flip_survey", "estimate_proportion"]


def _keep_probability(epsilon: float, k: int) -> float:
    """``e^eps / (e^eps + k - 1)`` rounded down (so the likelihood ratio never exceeds e^eps)."""
    p = 1.0 / (1.0 + (k - 1) * math.exp(-epsilon))
    return float(np.nextafter(np.nextafter(p, 0.0), 0.0)) if p < 1 else p


class RandomizedResponse(DPMechanism):
    """k-ary randomized response: keep the true category with probability
    ``e^eps / (e^eps + k - 1)``, otherwise report one of the other ``k - 1`` uniformly.

    Parameters
    ----------
    epsilon : float
    categories : sequence
        The ``k >= 2`` possible answers.
    random_state : None, int or numpy Generator

    Examples
    --------
    >>> from veil.dp.mechanisms import RandomizedResponse
    >>> rr = RandomizedResponse(epsilon=1.0, categories=["a", "b", "c"])
    >>> rr.randomise("a") in ("a", "b", "c")
    True
    """

    def __init__(self, *, epsilon: float, categories: Any, random_state: Any = None) -> None:
        super().__init__(epsilon=epsilon, delta=0.0, random_state=random_state)
        cats = list(categories)
        if len(cats) < 2 or len(set(map(str, cats))) != len(cats):
            raise ConfigError("randomized response needs at least two distinct categories")
        self.categories = cats
        self.sensitivity = 1.0
        self._index = {str(c): i for i, c in enumerate(cats)}

    @property
    def p_keep(self) -> float:
        """Probability of reporting the true category."""
        return _keep_probability(self.epsilon, len(self.categories))

    def _codes(self, values: Any) -> np.ndarray:
        arr = np.asarray(values, dtype=object).ravel()
        try:
            return np.fromiter((self._index[str(v)] for v in arr), dtype=np.int64, count=arr.size)
        except KeyError:  # the value is the private input: never quoted (errors end up in logs)
            raise InputError(
                f"a value to randomise is not one of the {len(self.categories)} categories "
                "(matched as text); map it to a category first"
            ) from None

    def randomise_codes(self, codes: np.ndarray) -> np.ndarray:
        """Vectorized form on integer codes ``0..k-1``."""
        k = len(self.categories)
        codes = np.asarray(codes, dtype=np.int64)
        keep = bernoulli(self.p_keep, codes.size, self._rng)
        other = self._rng.integers(0, k - 1, size=codes.size)
        other = other + (other >= codes)
        return np.where(keep, codes, other)

    def randomise(self, value: Any) -> Any:
        """Randomise one answer (or an array of answers)."""
        out = self.randomise_codes(self._codes(value))
        cats = np.asarray(self.categories, dtype=object)
        if np.ndim(value) == 0:
            return self.categories[int(out[0])]
        return cats[out].reshape(np.shape(value))

    def estimate(self, responses: Any) -> dict[Any, float]:
        """Unbiased estimate of the true share of each category from randomised responses."""
        codes = self._codes(responses)
        if codes.size == 0:
            raise InputError("no responses")
        k = len(self.categories)
        obs = np.bincount(codes, minlength=k) / codes.size
        p = self.p_keep
        q = (1 - p) / (k - 1)
        est = (obs - q) / (p - q)
        return dict(zip(self.categories, est.tolist()))

    def bias(self, value: Any) -> float:
        raise NotImplementedError("bias is not defined for categorical outputs")

    def variance(self, value: Any) -> float:
        raise NotImplementedError("variance is not defined for categorical outputs")

    def _noise_halfwidth(self, alpha: float) -> float:
        raise NotImplementedError(
            "confidence_interval is not defined for categorical outputs; for the estimated "
            "shares use estimate_halfwidth(n, alpha) (Hoeffding half-width from n responses)"
        )

    def estimate_halfwidth(self, n: int, alpha: float = 0.05) -> float:
        """Half-width of a ``1 - alpha`` (Hoeffding) interval for each estimated share
        from ``n`` responses."""
        p = self.p_keep
        q = (1 - p) / (len(self.categories) - 1)
        return math.sqrt(math.log(2 / alpha) / (2 * n)) / (p - q)


class Binary(RandomizedResponse):
    """Binary randomized response with diffprivlib's signature.

    Examples
    --------
    >>> from veil.dp.mechanisms import Binary
    >>> Binary(epsilon=1.0, value0="no", value1="yes").randomise("yes") in ("no", "yes")
    True
    """

    def __init__(
        self, *, epsilon: float, value0: Any, value1: Any, random_state: Any = None
    ) -> None:
        if str(value0) == str(value1):
            raise ConfigError("value0 and value1 must differ")
        super().__init__(epsilon=epsilon, categories=[value0, value1], random_state=random_state)
        self.value0, self.value1 = value0, value1


def coin_flip_survey(truth: Any, random_state: Any = None) -> np.ndarray:
    """The coin-flip survey on boolean answers (``ln 3``-DP).

    Heads: answer truthfully.  Tails: flip again and answer ``True`` on heads.

    Examples
    --------
    >>> import numpy as np
    >>> answers = coin_flip_survey(np.ones(4, bool))  # secure randomness: no seed
    >>> answers.dtype, answers.shape
    (dtype('bool'), (4,))
    """
    from veil.dp._rng import resolve_rng

    t = np.asarray(truth)
    if t.dtype.kind not in "bui":
        raise InputError("coin_flip_survey expects booleans (or 0/1)")
    rng = resolve_rng(random_state)
    first = bernoulli(0.5, t.size, rng)
    second = bernoulli(0.5, t.size, rng)
    return np.where(first, t.ravel().astype(bool), second).reshape(t.shape)


def estimate_proportion(responses: Any) -> float:
    """Unbiased estimate of the true ``True`` share from coin-flip survey answers:
    ``P(yes) = pi / 2 + 1/4`` so ``pi = 2 * mean - 1/2``.

    References
    ----------
    S. L. Warner, "Randomized response: a survey technique for eliminating evasive answer
    bias", Journal of the American Statistical Association 60(309), 1965.
    C. Dwork, A. Roth, "The algorithmic foundations of differential privacy", Foundations and
    Trends in Theoretical Computer Science 9(3-4), 2014 (section 3.2).

    Examples
    --------
    >>> estimate_proportion([True, False, True, True])  # 2 * 0.75 - 0.5
    1.0

    30% of 10,000 people hold the sensitive attribute; each answers through the survey:

    >>> import numpy as np
    >>> truth = np.arange(10_000) < 3_000
    >>> answers = coin_flip_survey(truth, random_state=1)  # seeded for the example only
    >>> round(estimate_proportion(answers), 4)
    0.2838
    """
    r = np.asarray(responses, dtype=float)
    if r.size == 0:
        raise InputError("no responses")
    return float(2 * r.mean() - 0.5)
