"""Differential-privacy mechanisms (diffprivlib-compatible names and signatures).

Every mechanism draws from the cryptographically secure generator by default
(``random_state=None``); a seed or numpy generator is accepted for tests and warns
(:class:`~veil.errors.InsecureRandomWarning`).  Continuous scalar outputs are floating-point
safe: exact discrete noise on a power-of-two grid (see :mod:`veil.dp._samplers`).  The two
vector machines (``Vector``, ``Bingham``) output continuous vectors computed in float64 and
are *not* floating-point hardened (see :mod:`veil.dp.mechanisms._machines`).  Each mechanism
has ``epsilon``, ``delta``, ``sensitivity``, ``randomise(value)`` (scalar or array),
``bias(value)``, ``variance(value)``, ``mse(value)`` and ``confidence_interval(alpha)``.

Mechanisms
----------
Laplace, LaplaceTruncated, LaplaceFolded, LaplaceBoundedDomain, LaplaceBoundedNoise,
Snapping, Staircase, Uniform, Gaussian, GaussianAnalytic, GaussianDiscrete, Geometric,
GeometricTruncated, GeometricFolded, Exponential, ExponentialCategorical,
ExponentialHierarchical, PermuteAndFlip, ReportNoisyMax, SparseVector, AboveThreshold, Binary,
RandomizedResponse, Vector, Bingham (every diffprivlib 0.6.6 mechanism name, plus
``DPMachine``), plus ``coin_flip_survey`` / ``estimate_proportion``.

Array-level samplers (for other Veil packages)
----------------------------------------------
Get a generator with ``rng = resolve_rng(random_state)`` (``None`` -> secure), then:

``laplace_fp(values, scale, rng, *, sensitivity, coords=1) -> ndarray``
    ``values`` + FP-safe Laplace noise of scale ``scale`` (calibrated for L1 ``sensitivity``;
    ``coords`` coordinates of one vector query share it).
``gaussian_fp(values, sigma, rng, *, sensitivity, coords=1) -> ndarray``
    ``values`` + FP-safe Gaussian noise (``sigma`` calibrated for L2 ``sensitivity``).
``discrete_laplace(scale, size, rng) -> int64 ndarray``
    exact ``P(z) ~ exp(-|z|/scale)`` (the geometric mechanism's noise).
``discrete_gaussian(sigma, size, rng) -> int64 ndarray``
    exact ``P(z) ~ exp(-z^2/(2 sigma^2))``.
``geometric(scale, size, rng)``, ``bernoulli(p, size, rng)``, ``bernoulli_exp(gamma, size,
rng)``
    exact one-sided geometric, Bernoulli(p) and Bernoulli(exp(-gamma)).
``sample_log_weights(logw, rng) -> int``
    index with probability ``~ exp(logw)`` (exponential mechanism core).
``classic_gaussian_sigma``, ``analytic_gaussian_sigma(epsilon, delta, sensitivity)``
    noise calibration.

Examples
--------
>>> from veil.dp.mechanisms import Laplace, laplace_fp, resolve_rng
>>> noisy = laplace_fp([3.0, 4.0], 2.0, resolve_rng(None), sensitivity=1.0)
>>> noisy.shape
(2,)
"""

from __future__ import annotations

from veil.dp._rng import SecureRandom, resolve_rng
from veil.dp._samplers import (
    bernoulli,
    bernoulli_exp,
    discrete_gaussian,
    discrete_laplace,
    gaussian_fp,
    geometric,
    grid_for,
    laplace_fp,
)
from veil.dp.mechanisms._base import DPMachine, DPMechanism, TruncationAndFoldingMixin
from veil.dp.mechanisms._binary import (
    Binary,
    RandomizedResponse,
    coin_flip_survey,
    estimate_proportion,
)
from veil.dp.mechanisms._bounded_noise import LaplaceBoundedNoise, Uniform
from veil.dp.mechanisms._categorical import ExponentialCategorical, ExponentialHierarchical
from veil.dp.mechanisms._exponential import (
    Exponential,
    PermuteAndFlip,
    ReportNoisyMax,
    sample_log_weights,
)
from veil.dp.mechanisms._gaussian import (
    Gaussian,
    GaussianAnalytic,
    GaussianDiscrete,
    analytic_gaussian_sigma,
    classic_gaussian_sigma,
)
from veil.dp.mechanisms._geometric import Geometric, GeometricFolded, GeometricTruncated
from veil.dp.mechanisms._laplace import (
    Laplace,
    LaplaceBoundedDomain,
    LaplaceFolded,
    LaplaceTruncated,
    Snapping,
)
from veil.dp.mechanisms._machines import Bingham, Vector
from veil.dp.mechanisms._staircase import Staircase
from veil.dp.mechanisms._svt import AboveThreshold, SparseVector

__all__ = [
    "DPMachine",
    "DPMechanism",
    "TruncationAndFoldingMixin",
    "Laplace",
    "LaplaceTruncated",
    "LaplaceFolded",
    "LaplaceBoundedDomain",
    "LaplaceBoundedNoise",
    "Snapping",
    "Staircase",
    "Uniform",
    "Gaussian",
    "GaussianAnalytic",
    "GaussianDiscrete",
    "Geometric",
    "GeometricTruncated",
    "GeometricFolded",
    "Exponential",
    "ExponentialCategorical",
    "ExponentialHierarchical",
    "PermuteAndFlip",
    "ReportNoisyMax",
    "SparseVector",
    "AboveThreshold",
    "Binary",
    "RandomizedResponse",
    "Vector",
    "Bingham",
    "coin_flip_survey",
    "estimate_proportion",
    "resolve_rng",
    "SecureRandom",
    "laplace_fp",
    "gaussian_fp",
    "discrete_laplace",
    "discrete_gaussian",
    "geometric",
    "bernoulli",
    "bernoulli_exp",
    "grid_for",
    "sample_log_weights",
    "classic_gaussian_sigma",
    "analytic_gaussian_sigma",
]
