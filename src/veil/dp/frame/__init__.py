"""Differentially private group-by queries on pandas DataFrames.

``PrivateFrame(df, privacy_unit=...)`` wraps a table; ``.where(...)`` filters it;
``.groupby(cols, keys=...)`` groups it; ``.plan(...)`` calibrates a query and reports accuracy
(CI half-widths) before release; ``.agg(...)`` / ``plan.execute()`` charges the budget
accountant once and returns a DataFrame of noisy counts, sums, means, variances, standard
deviations and quantiles.  Contribution bounding, public keys or private partition selection,
and the budget split are described in ``docs/dp_queries.md``.

Example
-------
>>> import pandas as pd, warnings
>>> from veil.dp.frame import PrivateFrame
>>> df = pd.DataFrame({"county": ["a", "b", "a"], "age": [30, 40, 50]})
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore")
...     pf = PrivateFrame(df, accountant=False, random_state=3)
>>> pf.groupby("county", keys=["a", "b"]).agg(n="count", epsilon=1e6)["n"].tolist()
[2, 1]
"""

from veil.dp.frame._frame import GroupedFrame, PrivateFrame
from veil.dp.frame._plan import QueryPlan
from veil.dp.frame._spec import Agg

__all__ = ["PrivateFrame", "GroupedFrame", "QueryPlan", "Agg"]
