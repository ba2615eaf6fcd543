"""Sensitivity helpers, seed material (0/1 database, coin flips) and diffprivlib drop-in use."""

from __future__ import annotations

import math

import numpy as np
import pytest

import veil.dp as dp
from veil.errors import ConfigError, PrivacyLeakWarning

# statistical checks of calls without random_state: their generator is seeded (conftest)
pytestmark = pytest.mark.usefixtures("seeded_default")


def test_global_sensitivity_of_bounded_queries():
    assert dp.global_sensitivity("count") == 1
    assert dp.global_sensitivity("sum", bounds=(0, 1)) == 1
    assert dp.global_sensitivity("sum", bounds=(-5, 10), neighbouring="add_remove") == 10
    assert dp.global_sensitivity("mean", bounds=(0, 100), n=50) == 2
    assert dp.global_sensitivity("histogram", neighbouring="add_remove") == 1
    assert dp.global_sensitivity("var", bounds=(0, 1), n=10) == pytest.approx(9 / 100)
    with pytest.raises(ConfigError):
        dp.global_sensitivity("mean", bounds=(0, 1))
    with pytest.raises(ConfigError):
        dp.global_sensitivity("nonsense")


def test_global_sensitivity_bounds_every_neighbour():
    """Brute force over all 0/1 databases of size 6 and their replace-one neighbours."""
    import itertools

    worst = {"sum": 0.0, "mean": 0.0, "var": 0.0}
    for db in itertools.product([0.0, 1.0], repeat=6):
        a = np.array(db)
        for i in range(6):
            b = a.copy()
            b[i] = 1 - b[i]
            worst["sum"] = max(worst["sum"], abs(a.sum() - b.sum()))
            worst["mean"] = max(worst["mean"], abs(a.mean() - b.mean()))
            worst["var"] = max(worst["var"], abs(a.var() - b.var()))
    for q, w in worst.items():
        assert w <= dp.global_sensitivity(q, bounds=(0, 1), n=6) + 1e-12


def test_parallel_databases_and_empirical_sensitivity_is_not_a_guarantee():
    db = np.array([1, 0, 1, 1, 0, 1])
    pdbs = list(dp.parallel_databases(db))
    assert len(pdbs) == 6 and all(len(p) == 5 for p in pdbs)
    with pytest.warns(PrivacyLeakWarning):
        s = dp.empirical_sensitivity(np.sum, db)
    assert s == 1.0
    zeros = np.zeros(8)
    with pytest.warns(PrivacyLeakWarning):
        local = dp.empirical_sensitivity(np.sum, zeros)
    # the local (leave-one-out) sensitivity of this database is 0, the global one is 1:
    # calibrating noise on it would add no noise at all
    assert local == 0.0 < dp.global_sensitivity("sum", bounds=(0, 1))


def test_seed_laplace_on_a_01_database():
    rng = np.random.default_rng(7)
    db = rng.integers(0, 2, 1000)
    sums = np.array([dp.tools.sum(db, epsilon=0.5, bounds=(0, 1)) for _ in range(300)])
    means = np.array([dp.tools.mean(db, epsilon=0.5, bounds=(0, 1)) for _ in range(300)])
    assert abs(sums.mean() - db.sum()) < 4.9 * math.sqrt(2) * 2 / math.sqrt(300)
    assert sums.std() == pytest.approx(math.sqrt(2) * 2, rel=0.25)  # scale 1 / 0.5
    assert means.std() == pytest.approx(math.sqrt(2) * 2 / 1000, rel=0.25)


def test_seed_coin_flip_estimates_proportion():
    truth = np.random.default_rng(8).random(50_000) < 0.3
    answers = dp.mechanisms.coin_flip_survey(truth)
    est = dp.mechanisms.estimate_proportion(answers)
    assert abs(est - truth.mean()) < 4.9 * 2 * math.sqrt(0.4 * 0.6 / truth.size)


def test_diffprivlib_snippets_run_with_only_the_import_changed():
    # --- copied diffprivlib usage, only "import diffprivlib as dp" changed ---
    ages = np.array([23, 35, 47, 51, 62, 29, 40, 33, 71, 58])
    acc = dp.BudgetAccountant(epsilon=1.2)
    dp.tools.mean(ages, epsilon=0.5, bounds=(0, 100), accountant=acc)
    acc.total()
    acc.remaining()
    acc.remaining(2)
    assert len(acc) == 1
    dp.tools.histogram(ages, epsilon=0.1, range=[10, 100], accountant=acc)
    with dp.BudgetAccountant(epsilon=2, delta=1e-5) as default_acc:
        dp.tools.var(ages, epsilon=0.3, bounds=(0, 100))
        dp.tools.median(ages, epsilon=0.3, bounds=(0, 100))
        dp.tools.percentile(ages, [25, 75], epsilon=0.3, bounds=(0, 100))
        dp.tools.count_nonzero(ages > 40, epsilon=0.2)
    assert len(default_acc) == 4 and default_acc.total().epsilon == pytest.approx(1.1)
    mech = dp.mechanisms.Laplace(epsilon=1.0, delta=0.0, sensitivity=1.0)
    mech.randomise(3.0)
    mech.variance(3.0)
    dp.mechanisms.GaussianAnalytic(epsilon=0.5, delta=1e-5, sensitivity=1).randomise(1.0)
    dp.mechanisms.Geometric(epsilon=0.5, sensitivity=1).randomise(4)
    dp.mechanisms.Exponential(epsilon=1.0, sensitivity=1, utility=[1, 2, 3]).randomise()
    dp.mechanisms.Binary(epsilon=1.0, value0="a", value1="b").randomise("a")
    assert issubclass(dp.BudgetError, ValueError)
    assert issubclass(dp.PrivacyLeakWarning, RuntimeWarning)
    assert issubclass(dp.DiffprivlibCompatibilityWarning, RuntimeWarning)
    with pytest.warns(dp.DiffprivlibCompatibilityWarning):
        dp.tools.mean(ages, epsilon=0.1, bounds=(0, 100), out=None)


def test_rdp_and_models_are_reachable_lazily():
    rdp = pytest.importorskip("veil.dp._rdp")
    assert dp.RDPAccountant is rdp.RDPAccountant
    try:
        models = dp.models
    except AttributeError:
        pytest.skip("veil.ml is not importable yet")
    # a real module (``from veil.dp.models import X``) re-exporting veil.ml's estimators; the
    # ``from diffprivlib.<sub> import <name>`` forms are in test_diffprivlib_imports.py
    assert models.__name__ == "veil.dp.models"
    assert models.GaussianNB is pytest.importorskip("veil.ml").GaussianNB
