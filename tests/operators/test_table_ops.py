"""rename_columns and pca (table-level)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _helpers import ctx, people

from veil.deid.operators import get_operator
from veil.errors import ConfigError, InputError


def test_rename_all_and_mapping_artifact() -> None:
    c = ctx()
    df = people()
    out = get_operator("rename_columns").apply(df, None, c)
    assert list(out.columns) == [f"col_{i}" for i in range(1, 8)]
    mapping = c.artifacts["column_mapping.csv"]
    assert mapping["original"].tolist() == list(df.columns)
    assert mapping["anonymous"].tolist() == list(out.columns)
    assert (out.to_numpy() == df.to_numpy())[df.notna().to_numpy()].all()


def test_rename_subset_and_clash() -> None:
    c = ctx()
    out = get_operator("rename_columns", {"columns": ["sex", "age"], "prefix": "v"}).apply(
        people(), None, c
    )
    assert list(out.columns) == ["id", "email", "phone", "v2", "income", "v1", "zip"]
    with pytest.raises(InputError, match="clash"):
        get_operator("rename_columns", {"columns": ["sex"], "prefix": "ag"}).apply(
            people().rename(columns={"age": "ag1"}), None, c
        )
    with pytest.raises(InputError):
        get_operator("rename_columns", {"columns": ["nope"]}).apply(people(), None, c)
    with pytest.raises(ConfigError):
        get_operator("rename_columns", {"columns": "sex"})


def _correlated(n: int = 2000) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    a = rng.normal(size=n)
    return pd.DataFrame(
        {
            "h": 170 + 10 * a,
            "w": 70 + 8 * a + rng.normal(scale=2, size=n),
            "z": rng.normal(size=n),
            "label": np.arange(n) % 3,
        },
        index=np.arange(n) + 100,
    )


def test_pca_matches_svd_and_reconstructs() -> None:
    df = _correlated()
    c = ctx()
    op = get_operator("pca", {"columns": ["h", "w", "z"]})
    out = op.apply(df, None, c)
    assert list(out.columns) == ["label", "PC_1", "PC_2", "PC_3"] and out.index.equals(df.index)
    comp = c.artifacts["pca_components.csv"]
    centre = c.artifacts["pca_centering.csv"]
    w = comp[["h", "w", "z"]].to_numpy()
    np.testing.assert_allclose(w @ w.T, np.eye(3), atol=1e-10)
    # reconstruct the original columns from all components
    x = (
        out[["PC_1", "PC_2", "PC_3"]].to_numpy() @ w * centre["scale"].to_numpy()
        + centre["mean"].to_numpy()
    )
    np.testing.assert_allclose(x, df[["h", "w", "z"]].to_numpy(), atol=1e-8)
    # explained variances agree with numpy's SVD of the standardized data
    xs = (df[["h", "w", "z"]] - df[["h", "w", "z"]].mean()) / df[["h", "w", "z"]].std(ddof=0)
    sv = np.linalg.svd(xs.to_numpy(), compute_uv=False)
    np.testing.assert_allclose(comp["explained_variance_ratio"], sv**2 / (sv**2).sum(), rtol=1e-9)
    assert out["PC_1"].var() > out["PC_2"].var() > out["PC_3"].var()


def test_pca_variance_ratio_selects_components() -> None:
    df = _correlated()
    op = get_operator("pca", {"columns": ["h", "w", "z"], "n_components": 0.6})
    out = op.apply(df, None, ctx())
    assert op.stats()["n_components"] == 1 and "PC_2" not in out.columns
    assert op.stats()["explained_variance_ratio"][0] > 0.6


def test_pca_errors() -> None:
    with pytest.raises(ConfigError):
        get_operator("pca", {"columns": ["h"]})
    with pytest.raises(ConfigError):
        get_operator("pca", {"columns": ["h", "w"], "n_components": 3})
    with pytest.raises(ConfigError):
        get_operator("pca", {"columns": ["h", "w"], "n_components": 1.5})
    with pytest.raises(InputError, match="missing"):
        get_operator("pca", {"columns": ["age", "income"]}).apply(people(), None, ctx())
    with pytest.raises(InputError, match="not numeric"):
        get_operator("pca", {"columns": ["age", "sex"]}).apply(people(), None, ctx())


def test_pca_with_every_component_falls_to_known_records() -> None:
    # the attack (known-plaintext, Liu, Giannella & Kargupta 2006): with all p components the
    # scores are an affine map of the columns; an attacker who knows p + 1 records' values and
    # their release rows (their own and friends') solves the map from the release alone, no
    # artifact needed, and rebuilds everybody else's values
    rng = np.random.default_rng(3)
    n, p = 500, 3
    x = rng.normal(size=(n, p)) @ rng.normal(size=(p, p)) + [40, 60_000, 170]
    df = pd.DataFrame(x, columns=["age", "income", "height"])
    c = ctx()
    release = get_operator("pca", {"columns": list(df.columns)}).apply(df, None, c)
    scores = release.to_numpy()
    known = rng.choice(n, size=p + 1, replace=False)
    design = np.column_stack([scores[known], np.ones(p + 1)])
    coef = np.linalg.solve(design, x[known])
    rebuilt = np.column_stack([scores, np.ones(n)]) @ coef
    np.testing.assert_allclose(rebuilt, x, rtol=1e-6)  # every record recovered
    assert len(c.warnings) == 1 and "all 3 components" in c.warnings[0]
    # fewer components: the attack recovers only a projection, and the warning is the rank one
    c2 = ctx()
    fewer = get_operator("pca", {"columns": list(df.columns), "n_components": 1}).apply(
        df, None, c2
    )
    s1 = np.column_stack([fewer.to_numpy(), np.ones(n)])
    coef1 = np.linalg.lstsq(s1[known], x[known], rcond=None)[0]
    assert np.abs(s1 @ coef1 - x).max() > 1
    assert len(c2.warnings) == 1 and "all" not in c2.warnings[0]
