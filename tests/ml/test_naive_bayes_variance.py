"""GaussianNB's released variances: the delta-method noise sd and the posterior-mean floor."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

from veil.ml import GaussianNB
from veil.ml._naive_bayes import count_share, posterior_mean_variance, variance_noise_sd


def test_variance_noise_sd_matches_the_spread_of_fitted_variances():
    """Over many fits, the sd of the released variance (scaled units) is the delta-method sd,
    which counts the mean's noise entering through theta^2.  The feature sits near its lower
    bound (theta = -0.9 in the scaled units), where the sum-of-squares noise alone
    understates the sd about 2.2-fold: the test would catch that omission."""
    rng = np.random.default_rng(11)
    n, eps, lo, hi = 2_000, 10.0, 0.0, 10.0  # only n * eps matters (as 20,000 at eps 1)
    X = rng.uniform(0.0, 1.0, (n, 1))
    y = np.zeros(n, int)
    half = (hi - lo) / 2
    fits = np.array(
        [
            GaussianNB(epsilon=eps, bounds=(lo, hi), var_smoothing=0.0, classes=[0], random_state=s)
            .fit(X, y)
            .var_[0, 0]
            for s in range(2000)
        ]
    )
    share = count_share(1)
    eps_count, eps_each = share * eps, (1 - share) * eps / 2
    z = (X[:, 0] - 5.0) / half
    theta, second = z.mean(), np.mean(z**2)
    predicted = float(variance_noise_sd(theta, second, n, eps_each, eps_count))
    # the true variance is ~6.6 noise sds above zero: the posterior mean is the estimate itself
    assert (second - theta**2) / predicted > 6
    observed = fits.std(ddof=1) / half**2
    assert observed == pytest.approx(predicted, rel=0.1)  # se of the sd ~2.5 %
    sums_of_squares_only = np.sqrt(2.0) / (eps_each * n)
    assert observed > 1.5 * sums_of_squares_only


@pytest.mark.parametrize("x", [-3.0, -1.0, -0.2, 0.0, 0.5, 1.0, 2.5, 6.0])
@pytest.mark.parametrize("sd", [1e-3, 1.0])
def test_posterior_mean_variance_is_the_truncated_posterior_mean(x, sd):
    """Checked against numerical integration of v * N(v_hat; v, sd^2) over v >= 0."""
    v_hat = x * sd
    dens = lambda v: stats.norm.pdf(v_hat, loc=v, scale=sd)  # noqa: E731
    upper = max(v_hat, 0.0) + 12 * sd
    num = integrate.quad(lambda v: v * dens(v), 0.0, upper, points=[max(v_hat, 0.0)])[0]
    den = integrate.quad(dens, 0.0, upper, points=[max(v_hat, 0.0)])[0]
    assert float(posterior_mean_variance(np.array(v_hat), np.array(sd))) == pytest.approx(
        num / den, rel=1e-6
    )


def test_posterior_mean_variance_is_an_increasing_floor():
    v_hat = np.linspace(-5.0, 8.0, 2001)
    pm = posterior_mean_variance(v_hat, np.ones_like(v_hat))
    assert np.all(np.diff(pm) > 0)
    assert np.all(pm > np.maximum(v_hat, 0.0))
    assert pm[v_hat >= 4].max() - v_hat[v_hat >= 4].max() < 1e-3  # ~identity well above zero


def test_near_constant_feature_keeps_a_variance_at_the_noise_level():
    """A feature that is constant within a class has sample variance 0; the released variance
    must not collapse below the noise level (which would let that feature dominate every
    likelihood): its mean over fits is about 0.8 noise sds (the posterior mean at v_hat ~ 0),
    and no fit is below a tenth of a noise sd."""
    n, eps = 5_000, 1.0
    X = np.full((n, 1), 0.5)
    y = np.zeros(n, int)
    share = count_share(1)
    sd = float(variance_noise_sd(0.0, 0.0, n, (1 - share) * eps / 2, share * eps))
    var = np.array(
        [
            GaussianNB(
                epsilon=eps, bounds=(0.0, 1.0), var_smoothing=0.0, classes=[0], random_state=s
            )
            .fit(X, y)
            .var_[0, 0]
            / 0.25
            for s in range(400)
        ]
    )
    assert var.min() > 0.1 * sd
    assert 0.6 * sd < var.mean() < 1.2 * sd
