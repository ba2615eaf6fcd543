"""The ConvergenceWarning of objective perturbation names no value computed from the data.

Its text used to quote the gradient left by the solver and the solver's own message, both
functions of the training rows that the noise does not cover: neighbouring tables gave
different warning texts.  The warning (that the proof's exact minimiser was not reached) now
names only the public tolerance.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from veil.ml import _objpert


def _texts(Z: np.ndarray, s: np.ndarray) -> list[str]:
    b = np.full(Z.shape[1], 0.3)  # the same noise draw on both tables
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _objpert.minimise_perturbed_logistic(Z, s, b, 1e-3, max_iter=1, gtol=1e-300)
    return [str(w.message) for w in caught]


@pytest.mark.parametrize("newton_max_dim", [0, 512])  # the L-BFGS path and Newton's
def test_neighbours_get_the_same_warning_text(
    monkeypatch: pytest.MonkeyPatch, newton_max_dim: int
) -> None:
    monkeypatch.setattr(_objpert, "_NEWTON_MAX_DIM", newton_max_dim)
    rng = np.random.default_rng(4)
    Z = rng.uniform(-0.5, 0.5, (40, 3))
    s = np.where(Z[:, 0] > 0, 1.0, -1.0)
    Z2, s2 = np.vstack([Z, [[0.5, 0.5, 0.5]]]), np.append(s, -1.0)  # one more row
    a, b = _texts(Z, s), _texts(Z2, s2)
    assert a and a == b
