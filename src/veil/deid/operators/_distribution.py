"""Replacing a continuous column by samples from its best-fitting parametric distribution."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from veil.deid._keys import shown
from veil.deid.operators._base import Operator, OperatorContext, register
from veil.deid.operators._numeric_out import numeric_result
from veil.deid.operators._util import (
    check_column,
    numeric_values,
    replace_column,
    require_choice,
    require_int,
)
from veil.errors import ConfigError, InputError

__all__ = ["Distribution", "fit_best"]

DEFAULT_CANDIDATES = ("norm", "lognorm", "gamma", "expon", "beta", "uniform", "weibull_min")


def _score(dist: Any, params: tuple[float, ...], x: np.ndarray, criterion: str) -> float:
    if criterion == "ks":
        return float(stats.kstest(x, dist.cdf, args=params).statistic)
    ll = float(np.sum(dist.logpdf(x, *params)))
    if not np.isfinite(ll):
        return float("inf")
    return 2.0 * len(params) - 2.0 * ll  # AIC (Akaike 1974)


def fit_best(
    x: np.ndarray, candidates: Sequence[str], criterion: str = "aic"
) -> tuple[str, tuple[float, ...], dict[str, float]]:
    """Fit every candidate by maximum likelihood; return (name, params, score per candidate).

    Lower is better for both criteria: AIC = 2k - 2 log L, or the Kolmogorov-Smirnov statistic.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> name, params, scores = fit_best(rng.normal(5, 2, 2000), ["norm", "expon"])
    >>> name
    'norm'
    """
    scores: dict[str, float] = {}
    fits: dict[str, tuple[float, ...]] = {}
    for name in candidates:
        dist = getattr(stats, name)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            try:
                if name == "beta":  # support from the data, slightly widened
                    lo, hi = float(x.min()), float(x.max())
                    pad = (hi - lo) * 1e-3 or 1.0
                    params = tuple(
                        float(p) for p in dist.fit(x, floc=lo - pad, fscale=hi - lo + 2 * pad)
                    )
                else:
                    params = tuple(float(p) for p in dist.fit(x))
                score = _score(dist, params, x, criterion)
            except (ValueError, RuntimeError, FloatingPointError, OverflowError):
                continue
        if np.isfinite(score) and all(np.isfinite(params)):
            scores[name], fits[name] = score, params
    if not scores:
        raise InputError("no candidate distribution could be fitted to the column")
    best = min(scores, key=lambda n: scores[n])
    return best, fits[best], scores


@register
class Distribution(Operator):
    """Replace a continuous column by i.i.d. samples from its best-fitting distribution.

    Each candidate ``scipy.stats`` distribution is fitted by maximum likelihood on a random
    subsample (``sample_size`` values) and the best one by ``criterion`` (``aic``, Akaike 1974,
    default; or ``ks``, the Kolmogorov-Smirnov statistic) generates the release.  The column keeps
    its overall shape but loses every link to other columns and to the person; the fitted
    parameters are computed from the data (not differentially private).

    Parameters
    ----------
    candidates
        scipy.stats names (default norm, lognorm, gamma, expon, beta, uniform, weibull_min).
    criterion
        ``aic`` or ``ks``.
    sample_size
        Values used for fitting (default 2000).
    keep_integer
        Round the samples when the column holds integers (default True).
    clip_to_range
        Clip samples to the observed [min, max] (default False).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from veil.deid.operators import OperatorContext, get_operator
    >>> df = pd.DataFrame({"x": np.random.default_rng(0).normal(10, 1, 500)})
    >>> op = get_operator("distribution", {"candidates": ["norm", "expon"]})
    >>> _ = op.apply(df, "x", OperatorContext(rng=np.random.default_rng(1)))
    >>> op.stats()["distribution"]
    'norm'
    """

    name = "distribution"

    def __init__(
        self,
        candidates: Sequence[str] = DEFAULT_CANDIDATES,
        criterion: str = "aic",
        sample_size: int = 2000,
        keep_integer: bool = True,
        clip_to_range: bool = False,
    ) -> None:
        if isinstance(candidates, str) or not isinstance(candidates, Sequence) or not candidates:
            raise ConfigError("operator 'distribution': candidates must be a list of names")
        for c in candidates:
            if not isinstance(getattr(stats, str(c), None), stats.rv_continuous):
                raise ConfigError(
                    f"operator 'distribution': {shown(c)} is not a continuous scipy.stats "
                    "distribution"
                )
        self.candidates = [str(c) for c in candidates]
        self.criterion = require_choice(self.name, "criterion", criterion, ("aic", "ks"))
        self.sample_size = require_int(
            self.name, "sample_size", sample_size, minimum=10, maximum=10**9
        )
        self.keep_integer = bool(keep_integer)
        self.clip_to_range = bool(clip_to_range)
        self._last: dict[str, Any] = {}

    def apply(self, df: pd.DataFrame, column: str | None, ctx: OperatorContext) -> pd.DataFrame:
        col = check_column(df, column, self.name)
        s = df[col]
        x = numeric_values(s, self.name)
        ok = np.isfinite(x)
        data = x[ok]
        if data.size < 2 or np.ptp(data) == 0:
            raise InputError(
                f"operator 'distribution': column {col!r} needs varying numeric values"
            )
        fit_on = data
        if data.size > self.sample_size:
            fit_on = data[ctx.rng.choice(data.size, self.sample_size, replace=False)]
        best, params, scores = fit_best(fit_on, self.candidates, self.criterion)
        dist = getattr(stats, best)
        samples = dist.rvs(*params, size=int(ok.sum()), random_state=ctx.rng)
        lo, hi = float(data.min()), float(data.max())
        # MLE of a location / end point is often the sample's extreme (uniform: loc = min,
        # loc + scale = max; expon: loc = min): the report's parameters then carry a record's
        # exact value, as percentile codes and bin-count edges do
        fitted = [float(v) for v in params] + [float(params[-2]) + float(params[-1])]
        if (
            np.isclose(fitted, [lo], rtol=1e-9, atol=0).any()
            or np.isclose(fitted, [hi], rtol=1e-9, atol=0).any()
        ):
            ctx.warn_once(
                f"operator 'distribution' on {str(col)!r}: the fitted {best} parameters, "
                "published in the report, hold the column's exact minimum or maximum (a "
                "record's value); leave that distribution out of candidates for a release"
            )
        if self.clip_to_range:
            clipped = int(np.count_nonzero((samples <= lo) | (samples >= hi)))
            samples = np.clip(samples, lo, hi)
            if clipped:
                ctx.warn_once(
                    f"operator 'distribution' on {str(col)!r}: clip_to_range put the column's "
                    f"exact minimum or maximum (a record's value) into {clipped} released "
                    "record(s); clip to fixed bounds with a later top_bottom_code instead"
                )
        y = np.full(len(x), np.nan)
        y[ok] = samples
        shapes = [p.strip() for p in (dist.shapes or "").split(",") if p.strip()]
        names = [*shapes, "loc", "scale"]
        self._last = {
            "distribution": best,
            "params": dict(zip(names, params)),
            "criterion": self.criterion,
            "scores": scores,
            "fitted_on": int(fit_on.size),
        }
        return replace_column(df, col, numeric_result(s, y, self.keep_integer))

    def describe(self) -> str:
        if self._last:
            p = ", ".join(f"{k}={v:.4g}" for k, v in self._last["params"].items())
            return (
                f"replaced by samples from the best-fitting {self._last['distribution']}({p}) "
                f"by {self.criterion.upper()}"
            )
        return f"replaced by samples from the best-fitting distribution by {self.criterion.upper()}"

    def params(self) -> dict[str, Any]:
        return {
            "candidates": self.candidates,
            "criterion": self.criterion,
            "sample_size": self.sample_size,
        }

    def fitted_columns(self, column: str | None) -> list[str]:
        return [column] if column is not None else []

    def stats(self) -> dict[str, Any]:
        return dict(self._last)
