"""diffprivlib model code runs with only the import changed: the constructor arguments
diffprivlib's models take from scikit-learn are accepted (stored, no effect), typos are not."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone

import veil.dp as dp

X = np.random.default_rng(0).uniform(0, 1, (300, 4))
y = (X[:, 0] + X[:, 1] > 1).astype(int)
B = (np.zeros(4), np.ones(4))

LR_COMPAT = {"verbose": 0, "warm_start": False, "n_jobs": None}
RF_COMPAT = {"warm_start": False, "shuffle": False}
MODELS = [  # (factory, the diffprivlib-compatibility arguments it was given)
    (
        lambda: dp.models.LogisticRegression(epsilon=1, data_norm=2.0, classes=[0, 1], **LR_COMPAT),
        LR_COMPAT,
    ),
    (
        lambda: dp.models.LinearRegression(epsilon=1, bounds_X=B, bounds_y=(0, 2), copy_X=True),
        {"copy_X": True},
    ),
    (
        lambda: dp.models.DecisionTreeClassifier(
            epsilon=1, bounds=B, classes=[0, 1], criterion=None
        ),
        {"criterion": None},
    ),
    (
        lambda: dp.models.RandomForestClassifier(epsilon=1, bounds=B, classes=[0, 1], **RF_COMPAT),
        RF_COMPAT,
    ),
]


@pytest.mark.parametrize(("make", "compat"), MODELS)
def test_diffprivlib_constructor_arguments_are_accepted_and_kept(make, compat):
    est = make()
    target = X.sum(axis=1) / 2 if "Linear" in type(est).__name__ else y
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, target)
    assert est.predict(X).shape == (len(X),)
    params = est.get_params()
    assert {k: params[k] for k in compat} == compat  # every argument given is kept as given
    again = clone(est).get_params()
    assert params.keys() == again.keys()  # stored as parameters: clone and grid search carry them
    shown = set(compat)
    assert shown and all(params[k] == again[k] for k in shown)


def test_non_default_compat_values_are_stored_and_cloned():
    est = dp.models.LogisticRegression(verbose=2, warm_start=True, n_jobs=3)
    got = clone(est).get_params()
    assert (got["verbose"], got["warm_start"], got["n_jobs"]) == (2, True, 3)
    rf = clone(dp.models.RandomForestClassifier(warm_start=True, shuffle=True)).get_params()
    assert rf["warm_start"] is True and rf["shuffle"] is True
    assert clone(dp.models.LinearRegression(copy_X=False)).get_params()["copy_X"] is False
    assert (
        clone(dp.models.DecisionTreeClassifier(criterion="gini")).get_params()["criterion"]
        == "gini"
    )


def test_unknown_constructor_arguments_are_refused():
    with pytest.raises(TypeError):
        dp.models.LogisticRegression(epsilom=0.1)  # a typo must not leave the default budget
    with pytest.raises(TypeError):
        dp.models.LinearRegression(positive=True)  # would change what the model means


def test_pca_noise_variance_is_the_mean_dropped_variance():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pca = dp.models.PCA(2, epsilon=1.0, data_norm=2.0, centered=True, random_state=0)
        pca.fit(X - 0.5)
        full = dp.models.PCA(None, epsilon=1.0, data_norm=2.0, centered=True, random_state=0)
        full.fit(X - 0.5)
    assert pca.noise_variance_ >= 0.0 and full.noise_variance_ == 0.0
    # same seed, same noisy eigenvalues: the dropped ones are components 3 and 4 of the full fit
    assert pca.noise_variance_ == pytest.approx(full.explained_variance_[2:].mean())
