"""``dp.tools.count`` (DP number of records) and the public ``veil.dp`` exports."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import veil.dp as dp
from veil.dp._rng import SecureRandom
from veil.errors import BudgetError, ConfigError, InputError

ALPHA = 1e-6
N_DRAWS = 20_000  # fixed sample size; fixed seeds below
TRUE_N = 60  # far from 0: the clamp at 0 has probability < 1e-10 for these scales


@pytest.mark.parametrize(("epsilon", "seed"), [(0.5, 11), (1.3, 12)])
def test_count_noise_is_exact_discrete_laplace(chi2_pvalue, epsilon, seed):
    rng = SecureRandom(seed)
    acc = dp.BudgetAccountant()
    x = np.arange(TRUE_N, dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # seeded generator: InsecureRandomWarning
        noise = (
            np.array(
                [
                    dp.tools.count(x, epsilon, random_state=rng, accountant=acc)
                    for _ in range(N_DRAWS)
                ]
            )
            - TRUE_N
        )
    scale = 1 / epsilon
    support = np.arange(-int(60 * scale) - 10, int(60 * scale) + 10)
    assert chi2_pvalue(noise, support, np.exp(-np.abs(support) / scale)) > ALPHA


def test_count_charges_the_accountant_once_before_computing():
    acc = dp.BudgetAccountant(epsilon=1.0)
    c = dp.tools.count(np.ones((40, 3)), epsilon=0.4, accountant=acc)
    assert isinstance(c, int) and c >= 0
    assert len(acc) == 1 and acc.total().epsilon == pytest.approx(0.4)
    with pytest.raises(BudgetError):
        dp.tools.count(np.ones(40), epsilon=0.7, accountant=acc)
    assert len(acc) == 1


@pytest.mark.parametrize("eps", [0, -1, float("nan"), float("inf"), "1"])
def test_count_bad_epsilon(eps):
    acc = dp.BudgetAccountant(epsilon=1.0)
    with pytest.raises(ConfigError):
        dp.tools.count([1.0, 2.0], epsilon=eps, accountant=acc)
    assert len(acc) == 0


def test_count_counts_records_and_refuses_nan_and_other_axes():
    acc = dp.BudgetAccountant()
    assert dp.tools.count(np.ones((7, 3)), epsilon=1e6, accountant=acc) == 7  # rows
    assert dp.tools.count(np.ones((7, 3)), epsilon=1e6, axis=0, accountant=acc) == 7
    assert dp.tools.count(5.0, epsilon=1e6, accountant=acc) == 1
    assert dp.tools.count([], epsilon=1e6, accountant=acc) == 0
    n_before = len(acc)
    with pytest.raises(InputError, match="NaN"):
        dp.tools.count([1.0, np.nan], epsilon=1.0, accountant=acc)
    with pytest.raises(ConfigError, match="axis"):
        dp.tools.count(np.ones((7, 3)), epsilon=1.0, axis=1, accountant=acc)
    assert len(acc) == n_before  # refused calls spend nothing
    assert dp.tools.accuracy("count", 1.0) == dp.tools.accuracy("count_nonzero", 1.0)


def test_public_exports():
    import veil.dp as dp_mod
    from veil.dp._pld import PLDAccountant
    from veil.dp._rdp import RDPAccountant
    from veil.dp._zcdp import ZCDPAccountant
    from veil.dp.frame import PrivateFrame

    assert dp_mod.PrivateFrame is PrivateFrame
    assert dp_mod.PLDAccountant is PLDAccountant
    assert dp_mod.RDPAccountant is RDPAccountant
    assert dp_mod.ZCDPAccountant is ZCDPAccountant
    assert dp_mod.tools.count is dp_mod.tools._moments.count
    assert {"PrivateFrame", "PLDAccountant", "RDPAccountant"} <= set(dir(dp_mod))
    # the names docs/dpsgd.md imports from veil.dp
    from veil.dp import compute_rdp, noise_multiplier_for, pld_epsilon, rdp_to_epsilon  # noqa: F401
