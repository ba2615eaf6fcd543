"""scikit-learn contract, bounds policy, bad input and budget enforcement."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline

import veil.dp as dp
from veil.errors import BudgetError, ConfigError, InputError, PrivacyLeakWarning
from veil.ml import (
    PCA,
    DecisionTreeClassifier,
    GaussianNB,
    KMeans,
    LinearRegression,
    LogisticRegression,
    RandomForestClassifier,
    StandardScaler,
    make_private_pipeline,
    read_bounds_from_data,
)

RNG = np.random.default_rng(12)
X = RNG.uniform(0, 1, (400, 3))
Y_CLS = (X[:, 0] + X[:, 1] > 1).astype(int)
Y_REG = X @ np.array([1.0, -2.0, 0.5]) + 0.3

FACTORIES = {
    "nb": (lambda **kw: GaussianNB(bounds=(0, 1), **kw), Y_CLS),
    "lr": (lambda **kw: LogisticRegression(data_norm=2.0, **kw), Y_CLS),
    "linreg": (lambda **kw: LinearRegression(bounds_X=(0, 1), bounds_y=(-2, 2), **kw), Y_REG),
    "kmeans": (lambda **kw: KMeans(3, bounds=(0, 1), **kw), None),
    "pca": (lambda **kw: PCA(2, data_norm=2.0, bounds=(0, 1), **kw), None),
    "scaler": (lambda **kw: StandardScaler(bounds=(0, 1), **kw), None),
    "tree": (lambda **kw: DecisionTreeClassifier(bounds=(0, 1), **kw), Y_CLS),
    "forest": (lambda **kw: RandomForestClassifier(5, bounds=(0, 1), **kw), Y_CLS),
}


def _fit(est, y):
    return est.fit(X) if y is None else est.fit(X, y)


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_clone_params_and_fitted_attributes(name):
    make, y = FACTORIES[name]
    est = make(epsilon=0.7, random_state=1)
    params = est.get_params()
    assert params["epsilon"] == 0.7
    c = clone(est)
    assert c.get_params() == params
    assert not [a for a in vars(c) if a.endswith("_")]  # nothing learned before fit
    c.set_params(epsilon=2.0)
    assert c.epsilon == 2.0
    _fit(c, y)
    learned = [a for a in vars(c) if a.endswith("_") and not a.startswith("_")]
    assert "epsilon_spent_" in learned and c.epsilon_spent_ == 2.0


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_same_seed_same_model_and_input_not_mutated(name):
    make, y = FACTORIES[name]
    Xc = X.copy()
    a = _fit(make(epsilon=1.0, random_state=5), y)
    b = _fit(make(epsilon=1.0, random_state=5), y)
    np.testing.assert_array_equal(X, Xc)
    out_a = a.predict(X) if hasattr(a, "predict") else a.transform(X)
    out_b = b.predict(X) if hasattr(b, "predict") else b.transform(X)
    np.testing.assert_array_equal(out_a, out_b)


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_missing_bounds_is_an_error_and_data_bounds_warn(name):
    make, y = FACTORIES[name]
    est = make(epsilon=1.0, random_state=0)
    for key in ("bounds", "data_norm", "bounds_X"):
        if key in est.get_params():
            est.set_params(**{key: None})
    with pytest.raises(ConfigError, match="required"):
        _fit(est, y)
    with pytest.warns(PrivacyLeakWarning):
        with read_bounds_from_data():
            _fit(clone(est), y)


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_bad_input(name):
    make, y = FACTORIES[name]
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(InputError, match="NaN"):
        make(epsilon=1.0).fit(bad) if y is None else make(epsilon=1.0).fit(bad, y)
    with pytest.raises(InputError, match="2D"):
        make(epsilon=1.0).fit(X[:, 0]) if y is None else make(epsilon=1.0).fit(X[:, 0], y)
    for eps in (0, -1.0, float("inf")):
        with pytest.raises(ConfigError, match="epsilon"):
            _fit(make(epsilon=eps), y)
    fitted = _fit(make(epsilon=1.0, random_state=0), y)
    apply = fitted.predict if hasattr(fitted, "predict") else fitted.transform
    with pytest.raises(InputError, match="features"):
        apply(X[:, :2])


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_budget_checked_before_fit_and_spent_after(name):
    make, y = FACTORIES[name]
    acc = dp.BudgetAccountant(epsilon=1.0)
    est = _fit(make(epsilon=0.6, random_state=0, accountant=acc), y)
    assert acc.total().epsilon == pytest.approx(0.6)
    second = make(epsilon=0.6, random_state=0, accountant=acc)
    with pytest.raises(BudgetError):
        _fit(second, y)
    assert not hasattr(second, "epsilon_spent_")  # no partial model claiming privacy
    assert acc.total().epsilon == pytest.approx(0.6)
    assert est.epsilon_spent_ == 0.6


def test_labels_outside_declared_classes_rejected():
    with pytest.raises(InputError, match="classes"):
        GaussianNB(epsilon=1, bounds=(0, 1), classes=[0]).fit(X, Y_CLS)
    with pytest.raises(InputError, match="classes"):
        RandomForestClassifier(epsilon=1, bounds=(0, 1), classes=[1, 2]).fit(X, Y_CLS)
    with pytest.raises(InputError, match="classes"):
        LogisticRegression(epsilon=1, data_norm=1.0, classes=[0, 5]).fit(X, Y_CLS)


def test_pipeline_and_cross_validation():
    pipe = make_pipeline(
        StandardScaler(epsilon=1.0, bounds=(0, 1), random_state=0),
        LogisticRegression(epsilon=1.0, data_norm=5.0, random_state=0),
    )
    scores = cross_val_score(pipe, X, Y_CLS, cv=3)
    assert scores.shape == (3,) and np.all((scores >= 0) & (scores <= 1))


def test_private_pipeline_splits_one_budget():
    acc = dp.BudgetAccountant(epsilon=1.0)
    pipe = make_private_pipeline(
        StandardScaler(bounds=(0, 1), random_state=0),
        LogisticRegression(data_norm=5.0, random_state=0),
        epsilon=1.0,
        weights=[1, 3],
        accountant=acc,
    )
    pipe.fit(X, Y_CLS)
    spent = sorted(e for e, _ in acc.spent_budget)
    assert spent == pytest.approx([0.25, 0.75])
    assert acc.remaining().epsilon == pytest.approx(0.0, abs=1e-9)
    with pytest.raises(ConfigError):
        make_private_pipeline(StandardScaler(bounds=(0, 1)), epsilon=1.0, weights=[1, 2])


def test_private_pipeline_checks_the_whole_budget_before_any_step():
    # 0.8 left but the pipeline costs 1.0: before the fix the scaler spent 0.5 and was
    # fitted, then the classifier raised BudgetError
    bounds = (np.zeros(3), np.ones(3))
    for method in ("fit", "fit_transform"):
        acc = dp.BudgetAccountant(epsilon=0.8)
        last = (
            LogisticRegression(data_norm=5.0, classes=[0, 1])
            if method == "fit"
            else PCA(2, data_norm=3.0, centered=True)
        )
        pipe = make_private_pipeline(
            StandardScaler(bounds=bounds), last, epsilon=1.0, accountant=acc
        )
        with pytest.raises(BudgetError):
            getattr(pipe, method)(X, Y_CLS)
        assert acc.spent_budget == []
        assert not any(hasattr(est, "n_features_in_") for _, est in pipe.steps)
    # a budget that covers the sum still fits every step and spends each share once
    acc = dp.BudgetAccountant(epsilon=1.0)
    pipe = make_private_pipeline(
        StandardScaler(bounds=bounds, random_state=0),
        LogisticRegression(data_norm=5.0, classes=[0, 1], random_state=0),
        epsilon=1.0,
        accountant=acc,
    ).fit(X, Y_CLS)
    assert sorted(e for e, _ in acc.spent_budget) == pytest.approx([0.5, 0.5])
    assert not hasattr(pipe, "fit_transform")  # the last step has no transform


def test_private_pipeline_ignores_scikit_learns_own_epsilon_parameters():
    """HuberRegressor's and SVR's ``epsilon`` are loss parameters, not budgets: they are neither
    counted in the pre-check nor overwritten with a share."""
    from sklearn.linear_model import HuberRegressor
    from sklearn.svm import SVR

    bounds = (np.zeros(3), np.ones(3))
    y = X[:, 0] + 0.1
    acc = dp.BudgetAccountant(epsilon=1.0)
    pipe = make_private_pipeline(
        StandardScaler(bounds=bounds, random_state=0), HuberRegressor(), epsilon=1.0,
        accountant=acc,
    )  # fmt: skip
    assert pipe.steps[1][1].epsilon == 1.35  # scikit-learn's default, untouched
    assert pipe.steps[0][1].epsilon == 1.0  # the whole budget goes to the only DP step
    pipe.fit(X, y)
    assert [e for e, _ in acc.spent_budget] == pytest.approx([1.0])
    svr = make_private_pipeline(StandardScaler(bounds=bounds), SVR(), epsilon=1.0)
    assert svr.steps[1][1].epsilon == 0.1 and svr.steps[0][1].epsilon == 1.0
    with pytest.raises(ConfigError, match="differentially private"):
        make_private_pipeline(HuberRegressor(), epsilon=1.0)


def test_randomforest_seed_call_warns_when_domains_read_from_data():
    # the seed: RandomForestClassifier(n_jobs=-1, epsilon=0.5, random_state=345, verbose=1)
    # on a one-hot table; domains read from the data only with an explicit opt-in + warning
    onehot = (RNG.uniform(size=(300, 8)) > 0.5).astype(float)
    y = onehot[:, 0].astype(int)
    with pytest.raises(ConfigError):
        RandomForestClassifier(n_jobs=-1, epsilon=0.5, random_state=345, verbose=1).fit(onehot, y)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with read_bounds_from_data():
            RandomForestClassifier(n_jobs=-1, epsilon=0.5, random_state=345).fit(onehot, y)
    assert any(issubclass(w.category, PrivacyLeakWarning) for w in caught)


def test_accountant_survives_clone_pickle_and_cross_validation():
    import pickle

    acc = dp.BudgetAccountant(epsilon=10.0)
    est = GaussianNB(epsilon=1.0, bounds=(0, 1), accountant=acc, random_state=0)
    assert clone(est).accountant is acc  # clones charge the same budget
    pipe = make_private_pipeline(
        StandardScaler(bounds=(0, 1), random_state=0),
        LogisticRegression(data_norm=5.0, random_state=0),
        epsilon=1.0,
        accountant=acc,
    )
    cross_val_score(pipe, X, Y_CLS, cv=3)
    assert acc.total().epsilon == pytest.approx(3.0)  # one epsilon per fold
    again = pickle.loads(pickle.dumps(est.fit(X, Y_CLS)))
    assert again.accountant.total().epsilon == pytest.approx(4.0)
    np.testing.assert_array_equal(again.predict(X), est.predict(X))


class _FailAfterNoise(Exception):
    pass


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_failed_fit_restores_the_estimator_and_is_not_refunded(name, monkeypatch):
    """A fit that fails after its noise was drawn leaves no mix of old and new attributes (a
    fresh estimator stays unfitted, a fitted one keeps its previous model) and its budget
    stays spent: the failure depends on the noise, so a refund would release it for free."""
    import veil.ml._budget as budget

    make, y = FACTORIES[name]
    acc = dp.BudgetAccountant(epsilon=10.0)
    est = _fit(make(epsilon=1.0, random_state=0, accountant=acc), y)
    before = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in vars(est).items()}
    fresh = make(epsilon=1.0, random_state=1, accountant=acc)

    def fail_at_block_end(self, exc_type, exc, tb):  # the fit ran: noise drawn, attributes set
        if exc_type is None:
            raise _FailAfterNoise

    monkeypatch.setattr(budget.Charge, "__exit__", fail_at_block_end)
    for e in (est.set_params(random_state=7), fresh):
        with pytest.raises(_FailAfterNoise):
            _fit(e, y)
    monkeypatch.undo()
    assert not [a for a in vars(fresh) if a.endswith("_")]
    assert set(vars(est)) == set(before)
    for k, v in before.items():
        if k == "random_state":
            continue
        if isinstance(v, np.ndarray):
            np.testing.assert_array_equal(vars(est)[k], v)
    assert acc.total().epsilon == pytest.approx(3.0)  # both failed fits paid


def test_failed_gaussian_nb_priors_check_before_noise():
    acc = dp.BudgetAccountant(epsilon=10.0)
    nb = GaussianNB(epsilon=1.0, bounds=(0, 1), classes=[0, 1], accountant=acc).fit(X, Y_CLS)
    theta = nb.theta_.copy()
    with pytest.raises(InputError, match="priors"):
        nb.set_params(priors=[0.2, 0.2], epsilon=0.3, bounds=(0, 2)).fit(X, Y_CLS)
    np.testing.assert_array_equal(nb.theta_, theta)
    assert nb.epsilon_spent_ == 1.0 and acc.total().epsilon == pytest.approx(1.0)


def test_warning_turned_error_leaves_no_model_and_is_paid_for():
    """The AccuracyWarning's message holds the noisy inertia: raised as an error it is still a
    release, so its budget is spent (a refund would let a loop average the noise away)."""
    from veil.errors import AccuracyWarning

    acc = dp.BudgetAccountant(epsilon=1.0)
    raised = 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", AccuracyWarning)
        for seed in range(50):
            km = KMeans(3, epsilon=0.5, bounds=(0, 1), inertia_share=0.05, random_state=seed,
                        accountant=acc)  # fmt: skip
            try:
                km.fit(X[:50])
            except AccuracyWarning:
                raised += 1
                assert not [a for a in vars(km) if a.endswith("_")]
            except BudgetError:
                break
    assert raised >= 1
    assert len(acc) == 2 and acc.total().epsilon == pytest.approx(1.0)  # no free retries


@pytest.mark.parametrize("bad", ["1", True, np.bool_(True), None, [1.0]])
def test_epsilon_must_be_a_real_number(bad):
    with pytest.raises(ConfigError, match="real number"):
        GaussianNB(epsilon=bad, bounds=(0, 1), classes=[0, 1]).fit(X, Y_CLS)


@pytest.mark.parametrize("name", ["nb", "lr", "tree", "forest"])
def test_score_refuses_labels_the_model_was_not_fitted_for(name):
    make, y = FACTORIES[name]
    est = make(epsilon=1.0, random_state=0, classes=[0, 1]).fit(X, Y_CLS)
    assert 0 <= est.score(X, Y_CLS) <= 1
    with pytest.raises(InputError, match=r"1 label\(s\) the model was not fitted for") as info:
        est.score(X, np.where(Y_CLS == 1, 7, 0))
    assert "7" not in str(info.value)  # the label is a value of y: counted, not quoted


def test_private_pipeline_budgets_nested_private_steps():
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline

    acc = dp.BudgetAccountant(epsilon=1.0)
    inner = StandardScaler(bounds=(0, 1))
    pipe = make_private_pipeline(
        ColumnTransformer([("s", inner, [0, 1, 2])]),
        GaussianNB(bounds=(-5, 5), classes=[0, 1]),
        epsilon=1.0,
        weights=[1, 3],
        accountant=acc,
    )
    assert inner.epsilon == pytest.approx(0.25) and inner.accountant is acc
    pipe.fit(X, Y_CLS)
    assert acc.total().epsilon == pytest.approx(1.0) and len(acc) == 2
    # the up-front check counts the nested step: 0.9 cannot pay for 0.25 + 0.75
    small = dp.BudgetAccountant(epsilon=0.9)
    pipe.set_params(columntransformer_0__s__accountant=small, gaussiannb_1__accountant=small)
    with pytest.raises(BudgetError):
        pipe.fit(X, Y_CLS)
    assert len(small) == 0
    shared = StandardScaler(bounds=(0, 1))
    with pytest.raises(ConfigError, match="twice"):
        make_private_pipeline(
            Pipeline([("a", shared)]), Pipeline([("b", shared)]), GaussianNB(), epsilon=1.0
        )


def test_pca_score_is_the_probabilistic_pca_likelihood():
    from sklearn.decomposition import PCA as SkPCA

    Z = RNG.normal(0, 1, (3000, 4)) @ np.diag([3.0, 1.0, 0.3, 0.1])
    ours = PCA(2, epsilon=1e7, data_norm=30.0, centered=True, random_state=0).fit(Z)
    theirs = SkPCA(2).fit(Z)
    # at a huge epsilon the release is the data's PCA: same model, same likelihood
    assert ours.score(Z) == pytest.approx(theirs.score(Z), rel=2e-3)
    np.testing.assert_allclose(ours.get_covariance(), theirs.get_covariance(), atol=0.02)
    # the likelihood prefers the right number of components without a scorer
    scores = [cross_val_score(PCA(k, epsilon=5.0, data_norm=30.0, centered=True,
                                  random_state=0), Z, cv=3).mean() for k in (1, 3)]  # fmt: skip
    assert scores[1] > scores[0]
