"""Private machine learning: differentially private scikit-learn-style estimators.

Every estimator takes ``epsilon`` (and explicit bounds / ``data_norm``), follows the
scikit-learn contract (clone, get_params/set_params, Pipeline, cross-validation) and charges a
:class:`veil.dp.BudgetAccountant` after validating the input and before drawing any noise
(a failed fit keeps no model; see :mod:`veil.ml._budget`).  Also reachable as
``veil.dp.models`` for diffprivlib users.  DP-SGD for PyTorch lives in :mod:`veil.ml.dpsgd`
(optional ``torch`` extra).
"""

from veil.ml._base import read_bounds_from_data
from veil.ml._forest import DecisionTreeClassifier, RandomForestClassifier
from veil.ml._kmeans import KMeans
from veil.ml._linear import LinearRegression
from veil.ml._logistic import LogisticRegression
from veil.ml._naive_bayes import GaussianNB
from veil.ml._pipeline import PrivatePipeline, make_private_pipeline
from veil.ml._preprocessing import PCA, StandardScaler

__all__ = [
    "GaussianNB",
    "LogisticRegression",
    "LinearRegression",
    "KMeans",
    "PCA",
    "StandardScaler",
    "DecisionTreeClassifier",
    "RandomForestClassifier",
    "make_private_pipeline",
    "PrivatePipeline",
    "read_bounds_from_data",
]
