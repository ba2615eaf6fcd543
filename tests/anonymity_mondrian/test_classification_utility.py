"""Classification utility: same model on original and release, scored on original test rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.anonymity._classification_utility import classification_utility
from veil.anonymity._mdav import mdav
from veil.anonymity._mondrian import mondrian
from veil.errors import ConfigError, InputError

QI = [
    "age",
    "education",
    "marital-status",
    "native-country",
    "race",
    "sex",
    "workclass",
    "occupation",
]
FEATURES = [*QI, "hours-per-week", "relationship"]


@pytest.fixture(scope="module")
def sample(adult_full):
    return adult_full.sample(2500, random_state=11)


def test_identity_release_scores_the_same(sample):
    before = sample.copy(deep=True)
    out = classification_utility(sample, sample.copy(), "salary", FEATURES)
    pd.testing.assert_frame_equal(sample, before)
    assert out["original_accuracy"] == out["release_accuracy"]
    assert out["accuracy_loss"] == 0.0
    assert out["original_accuracy"] > out["baseline_accuracy"] + 0.03
    assert out["n_train"] + out["n_test"] == len(sample)


@pytest.mark.parametrize("model", ["logistic", "forest"])
def test_mondrian_release_is_sane(sample, adult_hier, model):
    res = mondrian(sample, QI, 10, hierarchies=adult_hier)
    out = classification_utility(
        sample, res.data, "salary", FEATURES, hierarchies=adult_hier, model=model
    )
    # Generalization can help by chance, but not by much; it keeps most of the signal.
    assert out["release_accuracy"] <= out["original_accuracy"] + 0.02
    assert out["release_accuracy"] > out["baseline_accuracy"] + 0.02


def test_fully_suppressed_qis_fall_to_majority(sample):
    gone = sample.copy()
    for c in QI:
        gone[c] = "*"
    out = classification_utility(sample, gone, "salary", QI)
    assert out["release_accuracy"] == pytest.approx(out["baseline_accuracy"])
    assert out["original_accuracy"] > out["release_accuracy"]
    assert out["relative_utility"] == pytest.approx(0.0)


def test_sets_and_mdav_releases(sample):
    sets = mondrian(sample, QI, 10)
    out = classification_utility(sample, sets.data, "salary", FEATURES)
    assert out["release_accuracy"] <= out["original_accuracy"] + 0.02
    num = ["age", "hours-per-week", "education-num", "capital-gain"]
    micro = mdav(sample, num, 10)
    out2 = classification_utility(sample, micro.data, "salary", num)
    assert out2["release_accuracy"] <= out2["original_accuracy"] + 0.02
    assert out2["release_accuracy"] > out2["baseline_accuracy"]


def test_soft_one_hot_mapping():
    df = pd.DataFrame({"c": ["a", "b", "c", "a"] * 10, "y": [0, 1, 1, 0] * 10})
    rel = df.assign(c=["a", "{b,c}", "{b,c}", "a"] * 10)
    out = classification_utility(df, rel, "y", ["c"], test_size=0.5)
    # {b,c} always means y=1 and a means y=0: nothing is lost.
    assert out["release_accuracy"] == out["original_accuracy"] == 1.0
    assert out["n_features"] == 3


def test_suppressed_rows_are_skipped(sample):
    kept = sample.iloc[::2]
    out = classification_utility(sample, kept, "salary", FEATURES)
    assert out["n_train"] < int(0.7 * len(sample))


def test_errors(sample):
    with pytest.raises(InputError, match="not in the release"):
        classification_utility(sample, sample.drop(columns="age"), "salary", FEATURES)
    with pytest.raises(ConfigError, match="also listed"):
        classification_utility(sample, sample, "salary", [*FEATURES, "salary"])
    bad = sample.assign(education="Somewhere")
    with pytest.raises(InputError, match="hierarchy"):
        classification_utility(sample, bad, "salary", FEATURES)
    bad_num = sample.assign(age="old")
    with pytest.raises(InputError, match="numeric feature 'age'"):
        classification_utility(sample, bad_num, "salary", FEATURES)
    shifted = sample.set_axis(np.arange(len(sample)) + 10**9)
    with pytest.raises(InputError, match="row-aligned"):
        classification_utility(sample, shifted, "salary", FEATURES)
    with pytest.raises(ConfigError, match="model"):
        classification_utility(sample, sample, "salary", FEATURES, model="svm")


def test_unreadable_release_cell_is_not_quoted():
    rng = np.random.default_rng(5)
    original = pd.DataFrame(
        {"x": rng.integers(0, 50, 200), "c": rng.choice(["a", "b"], 200), "y": [0, 1] * 100}
    )
    for col in ("x", "c"):
        release = original.copy().astype({col: object})
        release.loc[release.index[3], col] = "SENTINEL-7731"
        with pytest.raises(InputError, match=f"release cell of .* feature '{col}'") as info:
            classification_utility(original, release, "y", ["x", "c"])
        assert "SENTINEL-7731" not in str(info.value)
