"""Exponential mechanisms on categorical values (McSherry & Talwar 2007), exact coins.

``ExponentialCategorical`` randomises one category: given a symmetric *distance* ``u(a, c)``
between categories (``u(a, a) = 0``, positive otherwise, ``Delta = max u``) it releases ``c``
with probability proportional to ``exp(-epsilon u(value, c) / (2 Delta))``.  Changing the
input changes every score by at most ``Delta``, so the exponential mechanism is
``epsilon``-DP (McSherry & Talwar 2007, Theorem 6; local DP on the single value).
``ExponentialHierarchical`` derives the distance from a balanced hierarchy: the number of
levels from the leaves up to the lowest common ancestor.

Sampling is exact (uniform proposals, exact ``Bernoulli(exp(-gamma))`` acceptance coins,
:func:`~veil.dp.mechanisms._coins.sample_exact_gamma`); outputs are discrete, so there is no
floating-point attack surface beyond the float value of each exponent.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from veil.dp.mechanisms._base import DPMechanism, as_float
from veil.dp.mechanisms._coins import sample_exact_gamma
from veil.errors import ConfigError, InputError

__all__ = ["ExponentialCategorical", "ExponentialHierarchical"]


class ExponentialCategorical(DPMechanism):
    """Exponential mechanism over categories with user-given distances (diffprivlib API).

    Parameters
    ----------
    epsilon : float, > 0
    utility_list : list of (value1, value2, utility)
        Distance between every pair of distinct values (strictly positive, finite); symmetric,
        the distance of a value to itself is 0.  Every pair must be given.
    random_state : None, int or numpy Generator

    Notes
    -----
    ``epsilon``-DP, ``delta = 0``, ``sensitivity = max utility``.  Output probabilities:
    ``P(c | value) ~ exp(-epsilon u(value, c) / (2 sensitivity))``.  ``bias`` and
    ``variance`` are not defined (categorical output).

    References
    ----------
    F. McSherry and K. Talwar, "Mechanism design via differential privacy", FOCS 2007.

    Examples
    --------
    >>> from veil.dp.mechanisms import ExponentialCategorical
    >>> mech = ExponentialCategorical(epsilon=1.0, utility_list=[("a", "b", 1), ("a", "c", 2),
    ...                                                          ("b", "c", 1)])
    >>> mech.randomise("a") in ("a", "b", "c")
    True
    """

    _needs_positive_epsilon = True

    def __init__(self, *, epsilon: float, utility_list: Any, random_state: Any = None) -> None:
        super().__init__(epsilon=epsilon, delta=0.0, random_state=random_state)
        self._domain, self._dist = self._parse(utility_list)
        self.sensitivity = float(self._dist.max()) if self._dist.size else 0.0

    @staticmethod
    def _parse(utility_list: Any) -> tuple[list[Any], np.ndarray]:
        if not isinstance(utility_list, (list, tuple)):
            raise ConfigError("utility_list must be a list of (value1, value2, utility) tuples")
        index: dict[Any, int] = {}
        pairs: dict[tuple[int, int], float] = {}
        for item in utility_list:
            if not isinstance(item, (list, tuple)) or len(item) != 3:
                raise ConfigError(f"utility_list entries must be 3-tuples, got {item!r}")
            a, b, u = item
            util = as_float("utility", u)
            if not (util > 0 and math.isfinite(util)):
                raise ConfigError(f"utilities must be strictly positive and finite, got {util}")
            if a == b:
                raise ConfigError(f"utility between {a!r} and itself must not be given")
            ia = index.setdefault(a, len(index))
            ib = index.setdefault(b, len(index))
            key = (min(ia, ib), max(ia, ib))
            if key in pairs and pairs[key] != util:
                raise ConfigError(f"conflicting utilities for ({a!r}, {b!r})")
            pairs[key] = util
        n = len(index)
        dist = np.zeros((n, n))
        for (i, j), util in pairs.items():
            dist[i, j] = dist[j, i] = util
        missing = n * (n - 1) // 2 - len(pairs)
        if missing:
            raise ConfigError(f"utility_list misses {missing} pair(s): every pair is needed")
        return list(index), dist

    @property
    def utility_list(self) -> list[tuple[Any, Any, float]]:
        """The distances as ``(value1, value2, utility)`` tuples."""
        d = self._domain
        return [
            (d[i], d[j], float(self._dist[i, j]))
            for i in range(len(d))
            for j in range(i + 1, len(d))
        ]

    def _gamma(self, value: Any) -> np.ndarray:
        try:
            i = self._domain.index(value)
        except ValueError:  # the value is the private input: never quoted (errors end up in logs)
            raise InputError(
                f"the value to randomise is not in the domain of the utility list "
                f"({len(self._domain)} values); map it to one of them first"
            ) from None
        if self.sensitivity == 0:
            return np.zeros(len(self._domain))
        return self.epsilon * self._dist[i] / (2 * self.sensitivity)

    def probabilities(self, value: Any) -> dict[Any, float]:
        """Output probability of each category given the input ``value``."""
        w = np.exp(-self._gamma(value))
        w /= w.sum()
        return dict(zip(self._domain, w.tolist()))

    def randomise(self, value: Any) -> Any:
        """Release a category for the input ``value`` (exact exponential-mechanism draw)."""
        return self._domain[sample_exact_gamma(self._gamma(value), self._rng)]

    def bias(self, value: Any) -> float:
        raise NotImplementedError("bias is not defined for a categorical mechanism")

    def variance(self, value: Any) -> float:
        raise NotImplementedError("variance is not defined for a categorical mechanism")


class ExponentialHierarchical(ExponentialCategorical):
    """Exponential mechanism over the leaves of a balanced hierarchy (diffprivlib API).

    The distance between two leaves is the number of levels from the leaves up to their lowest
    common ancestor (1 for siblings, the height for leaves only joined at the root).

    Parameters
    ----------
    epsilon : float, > 0
    hierarchy : nested list
        Leaves (any hashable, non-list values, all distinct) at the same depth.
    random_state : None, int or numpy Generator

    Notes
    -----
    ``epsilon``-DP, ``sensitivity`` = height of the hierarchy.

    References
    ----------
    F. McSherry and K. Talwar, "Mechanism design via differential privacy", FOCS 2007.

    Examples
    --------
    >>> from veil.dp.mechanisms import ExponentialHierarchical
    >>> mech = ExponentialHierarchical(epsilon=1.0, hierarchy=[["A", "B"], ["C", "D"]])
    >>> mech.utility_list[:2]
    [('A', 'B', 1.0), ('A', 'C', 2.0)]
    """

    def __init__(self, *, epsilon: float, hierarchy: Any, random_state: Any = None) -> None:
        paths = self._leaves(hierarchy, ())
        if not paths:
            raise ConfigError("hierarchy must contain at least one leaf")
        depths = {len(p) for _, p in paths}
        if len(depths) != 1:
            raise ConfigError("leaves of the hierarchy must all be at the same depth")
        names = [v for v, _ in paths]
        if len(set(names)) != len(names):
            raise ConfigError("leaves of the hierarchy must be distinct")
        height = depths.pop()
        triples = []
        for i, (a, pa) in enumerate(paths):
            for b, pb in paths[i + 1 :]:
                common = 0
                while common < height and pa[common] == pb[common]:
                    common += 1
                triples.append((a, b, height - common))
        self.hierarchy = hierarchy
        if len(paths) == 1:  # a single leaf: always released, no budget needed
            DPMechanism.__init__(self, epsilon=epsilon, delta=0.0, random_state=random_state)
            self._domain, self._dist, self.sensitivity = [names[0]], np.zeros((1, 1)), 0.0
            return
        super().__init__(epsilon=epsilon, utility_list=triples, random_state=random_state)

    @classmethod
    def _leaves(cls, node: Any, path: tuple[int, ...]) -> list[tuple[Any, tuple[int, ...]]]:
        if not isinstance(node, (list, tuple)):
            raise ConfigError("hierarchy must be a (nested) list")
        out: list[tuple[Any, tuple[int, ...]]] = []
        for i, child in enumerate(node):
            if isinstance(child, (list, tuple)):
                out.extend(cls._leaves(child, path + (i,)))
            else:
                out.append((child, path + (i,)))
        return out
