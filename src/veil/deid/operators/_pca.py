"""PCA release: replace numeric columns by their principal-component scores."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from veil.deid.operators._base import Operator, OperatorContext, register
from veil.deid.operators._util import numeric_values
from veil.errors import ConfigError, InputError

__all__ = ["PCARelease"]


@register
class PCARelease(Operator):
    """Project numeric columns onto their principal components (Pearson 1901; Jolliffe 2002).

    The listed columns are replaced by ``PC_1 .. PC_k`` (scores of the centred, optionally
    standardized data).  Components, means, scales and explained-variance ratios go to
    ``ctx.artifacts["pca_components.csv"]``; with them (and all k components) the original
    columns can be rebuilt, so keep that file apart.  Not privacy-preserving on its own.

    Parameters
    ----------
    columns
        Numeric columns to project (at least two).
    n_components
        Number of components (int), or a variance ratio in (0, 1] to keep the fewest components
        explaining at least that share of the variance.  Default: all.
    standardize
        Divide by each column's standard deviation before the projection (default True).
    prefix
        Names of the output columns (default ``"PC_"``).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from veil.deid.operators import OperatorContext, get_operator
    >>> rng = np.random.default_rng(0)
    >>> a = rng.normal(size=200)
    >>> df = pd.DataFrame({"h": a, "w": 2 * a + rng.normal(scale=0.1, size=200), "id": range(200)})
    >>> out = get_operator("pca", {"columns": ["h", "w"], "n_components": 1}).apply(df, None, OperatorContext())
    >>> list(out.columns)
    ['id', 'PC_1']
    """

    name = "pca"
    table_level = True

    def __init__(
        self,
        columns: Sequence[str],
        n_components: int | float | None = None,
        standardize: bool = True,
        prefix: str = "PC_",
    ) -> None:
        if isinstance(columns, str) or not isinstance(columns, Sequence) or len(columns) < 2:
            raise ConfigError("operator 'pca': columns must list at least two numeric columns")
        self.columns = list(columns)
        if n_components is not None:
            if isinstance(n_components, bool) or not isinstance(n_components, (int, float)):
                raise ConfigError("operator 'pca': n_components must be an int or a ratio")
            if isinstance(n_components, int) and not 1 <= n_components <= len(self.columns):
                raise ConfigError(f"operator 'pca': n_components must be in 1..{len(self.columns)}")
            if isinstance(n_components, float) and not 0 < n_components <= 1:
                raise ConfigError("operator 'pca': a variance ratio must be in (0, 1]")
        self.n_components = n_components
        self.standardize = bool(standardize)
        self.prefix = str(prefix)
        self._last: dict[str, Any] = {}

    def apply(self, df: pd.DataFrame, column: str | None, ctx: OperatorContext) -> pd.DataFrame:
        missing = [c for c in self.columns if c not in df.columns]
        if missing:
            raise InputError(f"operator 'pca': no column(s) {missing[:5]} in the table")
        x = np.column_stack([numeric_values(df[c], self.name) for c in self.columns])
        if not np.isfinite(x).all():
            raise InputError("operator 'pca': the columns contain missing or infinite values")
        mean = x.mean(axis=0)
        xc = x - mean
        scale = xc.std(axis=0) if self.standardize else np.ones(x.shape[1])
        scale = np.where(scale > 0, scale, 1.0)
        xc /= scale
        # eigen-decomposition of the p x p covariance: cheap for tall tables
        cov = (xc.T @ xc) / max(len(xc) - 1, 1)
        evals, evecs = np.linalg.eigh(cov)
        order = np.argsort(evals)[::-1]
        evals = np.clip(evals[order], 0.0, None)
        evecs = evecs[:, order]
        signs = np.sign(evecs[np.argmax(np.abs(evecs), axis=0), np.arange(evecs.shape[1])])
        evecs *= np.where(signs == 0, 1.0, signs)  # deterministic signs
        ratio = evals / evals.sum() if evals.sum() > 0 else np.full(len(evals), 1 / len(evals))
        k = self._n_keep(ratio)
        scores = xc @ evecs[:, :k]
        names = [f"{self.prefix}{i}" for i in range(1, k + 1)]
        clash = set(names) & (set(df.columns) - set(self.columns))
        if clash:
            raise InputError(f"operator 'pca': output names clash with columns {sorted(clash)}")
        out = df.drop(columns=self.columns)
        for i, nm in enumerate(names):
            out[nm] = scores[:, i]
        comp = pd.DataFrame(evecs[:, :k].T, columns=[str(c) for c in self.columns])
        comp.insert(0, "component", names)
        comp.insert(1, "explained_variance_ratio", ratio[:k])
        ctx.artifacts["pca_components.csv"] = comp
        ctx.artifacts["pca_centering.csv"] = pd.DataFrame(
            {"column": [str(c) for c in self.columns], "mean": mean, "scale": scale}
        )
        cols = ", ".join(map(repr, map(str, self.columns)))
        if k == len(self.columns):
            ctx.warn_once(
                f"operator 'pca' kept all {k} components of {cols}: the scores are an invertible "
                "affine map of those columns; pca_components.csv and pca_centering.csv rebuild "
                f"them exactly, and without them anyone who knows {k + 1} records' values and "
                "their release rows solves the map and gets every other record's values; keep "
                "fewer components (n_components) and keep the artifacts apart from the release"
            )
        else:
            ctx.warn_once(
                f"operator 'pca': pca_components.csv and pca_centering.csv rebuild {cols} from "
                f"the {k} released components (a rank-{k} approximation); keep them apart from "
                "the release"
            )
        self._last = {
            "n_components": k,
            "explained_variance_ratio": [float(r) for r in ratio[:k]],
        }
        return out

    def _n_keep(self, ratio: np.ndarray) -> int:
        if self.n_components is None:
            return len(ratio)
        if isinstance(self.n_components, int):
            return self.n_components
        cum = np.cumsum(ratio)
        return int(min(np.searchsorted(cum, self.n_components - 1e-12) + 1, len(ratio)))

    def describe(self) -> str:
        k = self._last.get("n_components", self.n_components or "all")
        return f"columns {self.columns} replaced by {k} principal component(s)"

    def params(self) -> dict[str, Any]:
        return {
            "columns": self.columns,
            "n_components": self.n_components,
            "standardize": self.standardize,
            "prefix": self.prefix,
        }

    def fitted_columns(self, column: str | None) -> list[str]:
        return [str(c) for c in self.columns]

    def stats(self) -> dict[str, Any]:
        return dict(self._last)
