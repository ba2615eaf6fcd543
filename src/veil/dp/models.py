"""diffprivlib-compatible home of the DP estimators: ``from veil.dp.models import GaussianNB``.

A port of ``from diffprivlib.models import X`` only changes ``diffprivlib`` to ``veil.dp``.
The estimators live in :mod:`veil.ml` (this module re-exports them; the objects are the same),
so ``veil.dp.models.GaussianNB is veil.ml.GaussianNB``.  See docs/ml.md for the algorithms
and the papers they come from.

Examples
--------
>>> from veil.dp.models import GaussianNB
>>> import veil.ml
>>> GaussianNB is veil.ml.GaussianNB
True
"""

from __future__ import annotations

from veil.ml import *  # noqa: F403 - the estimators named in veil.ml.__all__
from veil.ml import __all__ as _ml_all

__all__ = list(_ml_all)  # derived: a new veil.ml estimator is reachable here too
