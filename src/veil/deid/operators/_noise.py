"""Numeric noise addition (statistical disclosure control, *not* differential privacy)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from veil.deid.operators._base import Operator, OperatorContext, register
from veil.deid.operators._numeric_out import numeric_result
from veil.deid.operators._util import (
    check_column,
    numeric_values,
    replace_column,
    require_choice,
    require_number,
)
from veil.errors import ConfigError

__all__ = ["Noise"]


@register
class Noise(Operator):
    """Add random noise to a numeric column.

    This is *not* differential privacy: the scale is not calibrated to a sensitivity, the
    relative scale reads the data, and the generator is ``ctx.rng`` (seedable, not a CSPRNG).
    Use :mod:`veil.dp` for guarantees.  Noise masks exact values against linkage on them
    (Brand 2002, "Microdata protection through noise addition").

    Parameters
    ----------
    distribution
        ``gaussian`` (default; ``scale`` is the standard deviation), ``laplace`` (``scale`` is
        the Laplace b) or ``uniform`` (on ``[-scale, scale]``).
    scale
        Noise scale (> 0).
    relative
        When True, ``scale`` is a fraction of the column's standard deviation (e.g. 0.1);
        when False (default) it is in the column's units.
    clip
        Optional ``[low, high]`` bounds applied after adding noise.
    keep_integer
        Round the result when the column holds integers (default True).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from veil.deid.operators import OperatorContext, get_operator
    >>> df = pd.DataFrame({"salary": [30_000.0, 52_000.0]})
    >>> ctx = OperatorContext(rng=np.random.default_rng(0))
    >>> out = get_operator("noise", {"scale": 100}).apply(df, "salary", ctx)
    >>> bool((out["salary"] - df["salary"]).abs().max() < 1000)
    True
    """

    name = "noise"

    def __init__(
        self,
        scale: float,
        distribution: str = "gaussian",
        relative: bool = False,
        clip: Sequence[float] | None = None,
        keep_integer: bool = True,
    ) -> None:
        self.scale = require_number(self.name, "scale", scale, positive=True)
        self.distribution = require_choice(
            self.name, "distribution", distribution, ("gaussian", "laplace", "uniform")
        )
        self.relative = bool(relative)
        if clip is not None:
            if not isinstance(clip, Sequence) or isinstance(clip, str) or len(clip) != 2:
                raise ConfigError("operator 'noise': clip must be [low, high]")
            lo = require_number(self.name, "clip", clip[0])
            hi = require_number(self.name, "clip", clip[1])
            if lo > hi:
                raise ConfigError("operator 'noise': clip low must not exceed high")
            self.clip: tuple[float, float] | None = (lo, hi)
        else:
            self.clip = None
        self.keep_integer = bool(keep_integer)
        self._last: dict[str, Any] = {}

    def apply(self, df: pd.DataFrame, column: str | None, ctx: OperatorContext) -> pd.DataFrame:
        col = check_column(df, column, self.name)
        s = df[col]
        x = numeric_values(s, self.name)
        scale = self.scale
        if self.relative:
            # over the finite values: one cell of inf made the scale NaN, and the noise then
            # blanked every record's value
            finite = x[np.isfinite(x)]
            sd = float(np.std(finite)) if finite.size else 0.0
            scale = self.scale * sd
        n = len(x)
        if scale == 0.0:
            noise = np.zeros(n)
        elif self.distribution == "gaussian":
            noise = ctx.rng.normal(0.0, scale, n)
        elif self.distribution == "laplace":
            noise = ctx.rng.laplace(0.0, scale, n)
        else:
            noise = ctx.rng.uniform(-scale, scale, n)
        if ctx.seed is not None and scale > 0.0:
            # the noise is a function of the seed alone: whoever knows the seed (it sits in the
            # policy file, or on the command line) regenerates it and subtracts it
            ctx.warn_once(
                f"operator 'noise' on {str(col)!r} drew its noise from the run's seed: anyone "
                "who knows the seed and the policy regenerates the noise and subtracts it, "
                "recovering the exact values; leave the seed out of a release run"
            )
        y = x + noise
        if self.clip is not None:
            y = np.clip(y, *self.clip)
        self._last = {"absolute_scale": scale}
        return replace_column(df, col, numeric_result(s, y, self.keep_integer))

    def describe(self) -> str:
        unit = " x the column's standard deviation" if self.relative else ""
        return f"{self.distribution} noise added (scale {self.scale:g}{unit}; not differential privacy)"

    def params(self) -> dict[str, Any]:
        p: dict[str, Any] = {
            "distribution": self.distribution,
            "scale": self.scale,
            "relative": self.relative,
        }
        if self.clip is not None:
            p["clip"] = list(self.clip)
        return p

    def fitted_columns(self, column: str | None) -> list[str]:
        return [column] if self.relative and column is not None else []

    def stats(self) -> dict[str, Any]:
        return dict(self._last)
