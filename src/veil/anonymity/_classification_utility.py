"""Classification utility of a release: same model, original vs anonymized training data.

The workload-aware evaluation of K. LeFevre, D. J. DeWitt and R. Ramakrishnan, "Workload-Aware
Anonymization Techniques for Large-Scale Datasets", ACM TODS 33(3), 2008, and of V. S. Iyengar,
"Transforming data to satisfy privacy constraints", KDD 2002: train the same classifier on the
original rows and on their anonymized versions, and compare accuracy on held-out *original*
rows.

Generalized cells are mapped into the original feature space, so that both models are scored
on exactly the same test matrix:

* numeric features: a number stays a number; an interval ``"[lo, hi]"`` (also ``"[lo, hi["``,
  ``"(lo, hi)"``) becomes its midpoint; a hierarchy label becomes the mean of the original
  values under it; ``"*"`` becomes the training mean;
* categorical features: one column per original value; an original value is one-hot; a set
  ``"{a,b}"``, a hierarchy node or ``"*"`` spreads a weight of 1 uniformly over the original
  values it covers (a "soft" one-hot).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from veil.errors import ConfigError, InputError
from veil.schema._hierarchy import factorize_typed

__all__ = ["classification_utility"]

_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_INTERVAL = re.compile(rf"^\s*[\[\(]\s*({_NUM})\s*[,;]\s*({_NUM})\s*[\]\[\)]\s*$")
_SUPPRESSED = {"*", ""}


def _is_numeric(s: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)


def _cell_str(v: Any) -> str:
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    return str(v)


def _hier_leaves(h: Any) -> dict[str, list[str]]:
    """Label (any level) -> original values under it."""
    if h is None:
        return {}
    if not hasattr(h, "generalize"):
        from veil.schema import Hierarchy  # noqa: PLC0415

        h = Hierarchy.from_file(h) if not isinstance(h, Mapping) else Hierarchy.from_mapping(h)
    leaves = [str(v) for v in h.values]
    out: dict[str, list[str]] = {}
    for lvl in range(1, h.height):
        for leaf, lab in zip(leaves, h.generalize(leaves, lvl).tolist()):
            out.setdefault(str(lab), []).append(leaf)
    return out


def _mean(x: np.ndarray) -> float:
    """Mean of finite ``x`` that cannot overflow: taken on ``x / 2**e`` (exact), scaled back."""
    if x.size == 0:
        return 0.0
    scale = np.ldexp(1.0, int(np.frexp(np.max(np.abs(x)))[1]) - 1)  # |x| / scale < 2
    return float(np.mean(x / scale) * scale)


def _midpoint(a: float, b: float) -> float:
    """``(a + b) / 2`` without overflow (``[1e308, 1.7e308]`` summed to ``inf``)."""
    mid = (a + b) / 2.0
    return mid if np.isfinite(mid) else a / 2.0 + b / 2.0


def _pow2_scale(x: np.ndarray) -> float:
    """``2**(e - 1)`` with ``2**e > max |x|``: ``x / scale`` is exact and below 2 in size."""
    if x.size and not np.isfinite(x).all():
        raise InputError("numeric features must be finite")
    return float(np.ldexp(1.0, int(np.frexp(np.max(np.abs(x)) if x.size else 0.0)[1]) - 1))


class _NumericMap:
    def __init__(self, name: str, train: np.ndarray, hierarchy: Any, scale: float = 1.0) -> None:
        self.name = name
        self.mean = _mean(train)
        self.under = _hier_leaves(hierarchy)
        self.scale = scale  # the feature is value / scale (a power of two: exact)

    def value(self, cell: Any) -> float:
        if isinstance(cell, (int, float, np.integer, np.floating)) and not isinstance(cell, bool):
            f = float(cell)
            if np.isfinite(f):
                return f
        text = str(cell).strip()
        try:
            return float(text)
        except ValueError:
            pass
        m = _INTERVAL.match(text)
        if m:
            return _midpoint(float(m.group(1)), float(m.group(2)))
        if text in _SUPPRESSED:
            return self.mean
        if text in self.under:
            try:
                return _mean(np.array([float(v) for v in self.under[text]]))
            except ValueError:
                pass
        raise InputError(
            f"cannot read a release cell of numeric feature {self.name!r}: it is neither a "
            "number, an interval nor a label of the feature's hierarchy (pass its hierarchy to "
            "map generalized labels)"
        )

    def transform(self, cells: pd.Series) -> np.ndarray:
        codes, uniq = factorize_typed(cells)  # True and 1 read as two cells
        if (codes < 0).any():
            raise InputError(f"feature {self.name!r} has missing values in the release")
        vals = np.array([self.value(u) for u in uniq], dtype=np.float64) / self.scale
        return vals[codes][:, None]


class _CategoricalMap:
    def __init__(self, name: str, vocabulary: list[str], hierarchy: Any) -> None:
        self.name = name
        self.vocab = vocabulary
        self.index = {v: i for i, v in enumerate(vocabulary)}
        self.under = _hier_leaves(hierarchy)

    def weights(self, cell: Any) -> np.ndarray:
        text = _cell_str(cell).strip()
        w = np.zeros(len(self.vocab))
        if text in self.index:
            members = [text]
        elif text.startswith("{") and text.endswith("}"):
            members = [m.strip() for m in text[1:-1].split(",")]
        elif text in self.under:
            members = self.under[text]
        elif text in _SUPPRESSED:
            members = self.vocab
        else:
            raise InputError(
                f"cannot read a release cell of categorical feature {self.name!r}: it is "
                "neither a value, a {...} set nor a label of the feature's hierarchy (pass its "
                "hierarchy to map generalized labels)"
            )
        pos = [self.index[m] for m in members if m in self.index]
        if pos:
            w[pos] = 1.0 / len(pos)
        return w

    def transform(self, cells: pd.Series) -> np.ndarray:
        codes, uniq = factorize_typed(cells)  # True and 1 read as two cells
        if (codes < 0).any():
            raise InputError(f"feature {self.name!r} has missing values in the release")
        table = np.vstack([self.weights(u) for u in uniq])
        return table[codes]


def _make_model(model: Any, random_state: int) -> Any:
    from sklearn.base import clone  # noqa: PLC0415
    from sklearn.ensemble import RandomForestClassifier  # noqa: PLC0415
    from sklearn.linear_model import LogisticRegression  # noqa: PLC0415
    from sklearn.pipeline import make_pipeline  # noqa: PLC0415
    from sklearn.preprocessing import StandardScaler  # noqa: PLC0415

    if model == "logistic":
        return make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    if model == "forest":
        return RandomForestClassifier(
            n_estimators=100, min_samples_leaf=2, random_state=random_state, n_jobs=1
        )
    if hasattr(model, "fit") and hasattr(model, "predict"):
        return clone(model)
    raise ConfigError(
        f"model must be 'logistic', 'forest' or a scikit-learn classifier, not {model!r}"
    )


def classification_utility(
    original: pd.DataFrame,
    release: pd.DataFrame,
    target: str,
    features: Sequence[str],
    *,
    hierarchies: Mapping[str, Any] | None = None,
    model: Any = "logistic",
    test_size: float = 0.3,
    random_state: int = 0,
) -> dict[str, Any]:
    """Compare a classifier trained on ``original`` with the same one trained on ``release``.

    The rows are split once (stratified by ``target``, seeded); both models learn from the
    training rows (the release's versions of them for the second model) and are scored on the
    *original* test rows.

    Parameters
    ----------
    original : pandas.DataFrame
        The table before anonymization.
    release : pandas.DataFrame
        Its anonymized version, row-aligned by index (rows dropped by suppression may be
        missing).
    target : str
        Class label column.
    features : sequence of str
        Feature columns; numeric features are those numeric in ``original``.
    hierarchies : mapping, optional
        Hierarchies of generalized features, to map node labels to the values under them.
    model : {"logistic", "forest"} or scikit-learn classifier
        Standardized logistic regression, a random forest (100 trees), or any estimator
        (cloned for each fit).
    test_size : float
        Share of rows held out for testing.
    random_state : int
        Seed of the split (and of the forest).

    Returns
    -------
    dict
        ``original_accuracy``, ``release_accuracy``, ``baseline_accuracy`` (majority class of
        the training rows), ``accuracy_loss`` (original - release), ``relative_utility``
        (``(release - baseline) / (original - baseline)``; NaN when the original model does
        not beat the baseline, where the ratio means nothing), ``n_train``, ``n_test``,
        ``n_features`` (after one-hot encoding) and ``model``.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"x": list(range(40)), "y": [0] * 20 + [1] * 20})
    >>> rel = df.assign(x=["[0, 19]"] * 20 + ["[20, 39]"] * 20)
    >>> out = classification_utility(df, rel, "y", ["x"])
    >>> out["original_accuracy"], out["release_accuracy"]
    (1.0, 1.0)
    """
    from sklearn.model_selection import train_test_split  # noqa: PLC0415

    feats = [features] if isinstance(features, str) else list(features)
    for name, frame in (("original", original), ("release", release)):
        if not isinstance(frame, pd.DataFrame):
            raise InputError(f"{name} must be a pandas DataFrame")
        absent = [c for c in [*feats, target] if c not in frame.columns]
        if absent:
            raise InputError(f"column(s) not in the {name} table: {absent}")
    if not feats:
        raise ConfigError("at least one feature is needed")
    if target in feats:
        raise ConfigError(f"the target {target!r} is also listed as a feature")
    if not 0 < test_size < 1:
        raise ConfigError(f"test_size must be in (0, 1), got {test_size!r}")
    if not release.index.isin(original.index).all() or release.index.has_duplicates:
        raise InputError("the release must be row-aligned with the original (same index labels)")
    y_all = original[target]
    if y_all.isna().any():
        raise InputError(f"target {target!r} has missing values")
    if y_all.nunique() < 2:
        raise InputError(f"target {target!r} has a single class")
    pos = np.arange(len(original))
    counts = y_all.value_counts()
    strat = y_all.to_numpy() if counts.min() >= 2 else None
    train_pos, test_pos = train_test_split(
        pos, test_size=test_size, random_state=random_state, stratify=strat
    )
    train_pos = np.sort(train_pos)
    test_pos = np.sort(test_pos)
    train_orig = original.iloc[train_pos]
    test_orig = original.iloc[test_pos]
    train_rel = release.loc[release.index.intersection(train_orig.index, sort=False)]
    if len(train_rel) == 0:
        raise InputError("no training row of the original is present in the release")
    hier = dict(hierarchies or {})
    maps: list[_NumericMap | _CategoricalMap] = []
    for c in feats:
        if _is_numeric(original[c]):
            if original[c].isna().any():
                raise InputError(f"feature {c!r} has missing values")
            # The built-in models are invariant to a power-of-two rescaling of a feature (a
            # forest's splits, a standardized logistic regression); applying one keeps values
            # near 1.8e308 from overflowing in them (the forest casts to float32).  Other
            # estimators get the values as they are.
            col = original[c].to_numpy(dtype=np.float64)
            scale = _pow2_scale(col) if model in ("logistic", "forest") else 1.0
            train = train_orig[c].to_numpy(dtype=np.float64)
            maps.append(_NumericMap(c, train, hier.get(c), scale))
        else:
            distinct = factorize_typed(original[c].dropna())[1]  # True and 1: two values
            vocab = sorted({_cell_str(v) for v in distinct})
            maps.append(_CategoricalMap(c, vocab, hier.get(c)))

    def matrix(frame: pd.DataFrame) -> np.ndarray:
        return np.hstack([m.transform(frame[m.name]) for m in maps])

    X_train, X_rel, X_test = matrix(train_orig), matrix(train_rel), matrix(test_orig)
    y_train = train_orig[target].to_numpy()
    y_rel = train_rel[target].to_numpy()
    y_test = test_orig[target].to_numpy()
    clf_orig = _make_model(model, random_state).fit(X_train, y_train)
    clf_rel = _make_model(model, random_state).fit(X_rel, y_rel)
    acc_orig = float(np.mean(clf_orig.predict(X_test) == y_test))
    acc_rel = float(np.mean(clf_rel.predict(X_test) == y_test))
    majority = pd.Series(y_train).value_counts().idxmax()
    acc_base = float(np.mean(y_test == majority))
    gain = acc_orig - acc_base
    return {
        "original_accuracy": acc_orig,
        "release_accuracy": acc_rel,
        "baseline_accuracy": acc_base,
        "accuracy_loss": acc_orig - acc_rel,
        "relative_utility": (acc_rel - acc_base) / gain if gain > 0 else float("nan"),
        "n_train": int(len(train_rel)),
        "n_test": int(len(test_pos)),
        "n_features": int(X_train.shape[1]),
        "model": model if isinstance(model, str) else type(model).__name__,
    }
