"""diffprivlib-compatible ``utils`` module: warnings, errors and randomness helpers.

``from diffprivlib.utils import X`` ports by changing only the package name for
``PrivacyLeakWarning``, ``DiffprivlibCompatibilityWarning``, ``BudgetError``, ``Budget``,
``check_random_state`` and ``warn_unused_args``.  Differences (see docs/dp.md):

* :func:`check_random_state` returns a Veil bit source (what every Veil mechanism, tool and
  model accepts as ``random_state``), not a numpy ``RandomState``.  ``None`` always gives the
  cryptographically secure generator (diffprivlib gives numpy's global, insecure one unless
  ``secure=True``); a seed or numpy generator gives a reproducible, insecure source and an
  :class:`~veil.errors.InsecureRandomWarning`.
* ``global_seed`` is not offered (diffprivlib 0.6 removed it too): a process-wide seed would make
  every release's noise reproducible.  Pass ``random_state=`` per call in tests instead.
"""

from __future__ import annotations

import random
import warnings
from collections.abc import Iterable
from typing import Any

from veil.dp._accountant import Budget
from veil.dp._rng import BitSource, resolve_rng
from veil.errors import (
    BudgetError,
    DiffprivlibCompatibilityWarning,
    InsecureRandomWarning,
    PrivacyLeakWarning,
)

__all__ = [
    "Budget",
    "BudgetError",
    "PrivacyLeakWarning",
    "DiffprivlibCompatibilityWarning",
    "InsecureRandomWarning",
    "check_random_state",
    "warn_unused_args",
]


def check_random_state(seed: Any = None, secure: bool = False) -> BitSource:
    """diffprivlib's ``check_random_state``, returning a Veil bit source.

    Parameters
    ----------
    seed : None, int, numpy Generator/RandomState, random.SystemRandom or BitSource
        ``None`` (or a ``random.SystemRandom``) gives the process-wide cryptographically
        secure generator; anything else is resolved by :func:`veil.dp.resolve_rng` (seeded
        sources are reproducible, for tests only, and warn).
    secure : bool, default False
        Accepted for diffprivlib compatibility.  Veil's default is always secure, so it changes
        nothing.

    Returns
    -------
    BitSource
        Pass it as ``random_state=`` to any Veil mechanism, tool or model.

    Examples
    --------
    >>> check_random_state().secure
    True
    """
    del secure  # the default generator is secure either way
    if isinstance(seed, random.SystemRandom):
        seed = None
    return resolve_rng(seed)


def warn_unused_args(unused_args: str | Iterable[str]) -> None:
    """Warn (:class:`DiffprivlibCompatibilityWarning`) that arguments are accepted but ignored.

    Parameters
    ----------
    unused_args : str, or iterable of str (e.g. a ``**kwargs`` dict)
        Names of the ignored arguments; one warning per name.

    Examples
    --------
    A port of a diffprivlib model that accepts (and ignores) scikit-learn arguments:

    >>> def fit(X, y=None, **unused):
    ...     warn_unused_args(unused)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     fit([[1.0]], n_jobs=4)
    >>> caught[0].category.__name__
    'DiffprivlibCompatibilityWarning'
    >>> print(caught[0].message)
    Parameter 'n_jobs' is not functional in veil.dp; it is accepted for diffprivlib ...
    """
    names = [unused_args] if isinstance(unused_args, str) else list(unused_args)
    for name in names:
        warnings.warn(
            f"Parameter '{name}' is not functional in veil.dp; it is accepted for diffprivlib "
            "compatibility and ignored",
            DiffprivlibCompatibilityWarning,
            stacklevel=2,
        )
