"""De-identification operators, one small class each, registered by name.

Use them from Python with :func:`get_operator` (``get_operator("mask", {"keep_last": 4})``) or
from a policy file (``operator: {name: mask, keep_last: 4}``).  Every operator validates its
parameters when built (:class:`~veil.errors.ConfigError`), returns a new DataFrame from
``apply(df, column, ctx)`` and never mutates its input.
"""

from veil.deid.operators._base import (
    Operator,
    OperatorContext,
    OperatorParameterError,
    available_operators,
    get_operator,
    operator_parameters,
    register,
)
from veil.deid.operators._condition import Condition, evaluate_condition, parse_condition
from veil.deid.operators._distribution import Distribution, fit_best
from veil.deid.operators._drop import Drop
from veil.deid.operators._fake import Fake
from veil.deid.operators._generalize import Generalize, truncate_dates
from veil.deid.operators._mask import Mask
from veil.deid.operators._noise import Noise
from veil.deid.operators._pca import PCARelease
from veil.deid.operators._pseudonymize import Pseudonymize, pseudonyms
from veil.deid.operators._redact import Redact
from veil.deid.operators._rename import RenameColumns
from veil.deid.operators._resample import Resample
from veil.deid.operators._round import Round
from veil.deid.operators._suppress import Suppress
from veil.deid.operators._tokenize import Tokenize, detokenize, detokenize_frame, tokenize_values
from veil.deid.operators._topcode import TopBottomCode

__all__ = [
    "Operator",
    "OperatorContext",
    "OperatorParameterError",
    "available_operators",
    "get_operator",
    "operator_parameters",
    "register",
    "Condition",
    "parse_condition",
    "evaluate_condition",
    "Drop",
    "Suppress",
    "Mask",
    "Redact",
    "Pseudonymize",
    "pseudonyms",
    "Tokenize",
    "tokenize_values",
    "detokenize",
    "detokenize_frame",
    "Fake",
    "Generalize",
    "truncate_dates",
    "TopBottomCode",
    "Noise",
    "Round",
    "Resample",
    "Distribution",
    "fit_best",
    "RenameColumns",
    "PCARelease",
]
