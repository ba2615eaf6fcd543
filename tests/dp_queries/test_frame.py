"""PrivateFrame correctness: noise-free limit, keys, bounding, NaN, errors, no mutation."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from veil.dp._rng import SecureRandom
from veil.dp.frame import Agg, PrivateFrame
from veil.dp.frame._bounding import bound_contributions
from veil.errors import ConfigError, InputError

pytestmark = pytest.mark.filterwarnings("ignore::veil.errors.InsecureRandomWarning")
HUGE = 1e9
B = (18.0, 90.0)


def frame(df: pd.DataFrame, **kw) -> PrivateFrame:
    kw.setdefault("accountant", False)
    kw.setdefault("random_state", 7)
    return PrivateFrame(df, **kw)


def test_noise_free_limit_matches_pandas(people: pd.DataFrame) -> None:
    keys = ["east", "north", "south", "west"]
    out = (
        frame(people)
        .groupby("county", keys=keys)
        .agg(
            n="count",
            n_age=("age", "count"),
            s=("age", "sum", B),
            m=("age", "mean", B),
            v=("age", "var", B),
            sd=("age", "std", B),
            epsilon=HUGE,
        )
    )
    clipped = people.assign(age=people["age"].clip(*B))
    g = clipped.groupby("county")["age"]
    assert out["county"].tolist() == keys
    assert out["n"].tolist() == people.groupby("county").size().loc[keys].tolist()
    assert out["n_age"].tolist() == g.count().loc[keys].tolist()
    np.testing.assert_allclose(out["s"], g.sum().loc[keys], rtol=1e-6)
    np.testing.assert_allclose(out["m"], g.mean().loc[keys], rtol=1e-6)
    np.testing.assert_allclose(out["v"], g.var(ddof=0).loc[keys], rtol=1e-5)
    np.testing.assert_allclose(out["sd"], g.std(ddof=0).loc[keys], rtol=1e-5)
    assert out["n"].dtype.kind == "i"


@pytest.mark.parametrize("q", [0.1, 0.5, 0.9])
def test_quantile_noise_free_lies_between_order_statistics(people: pd.DataFrame, q) -> None:
    # income has no ties, so no interval between order statistics is empty
    bounds = (0.0, 80_000.0)
    out = (
        frame(people)
        .groupby("county", keys=["north", "south"])
        .agg(x=Agg("quantile", "income", bounds, q), epsilon=HUGE)
    )
    for county, value in zip(out["county"], out["x"]):
        vals = people.loc[people["county"] == county, "income"].clip(*bounds).to_numpy()
        vals = np.sort(vals)
        m = len(vals)
        ext = np.concatenate(([bounds[0]], vals, [bounds[1]]))  # x_0 = lo, x_{m+1} = hi
        lo_i, hi_i = int(np.floor(q * m)), int(np.ceil(q * m)) + 1
        assert ext[lo_i] <= value <= ext[hi_i]


def test_median_alias_and_ungrouped(people: pd.DataFrame) -> None:
    out = frame(people).agg(med=("age", "median", B), n="count", epsilon=HUGE)
    assert len(out) == 1 and out["n"].iloc[0] == len(people)
    vals = np.sort(people["age"].dropna().to_numpy())
    assert vals[len(vals) // 2 - 1] <= out["med"].iloc[0] <= vals[len(vals) // 2 + 1]


def test_public_keys_missing_keys_appear_and_unlisted_are_dropped(people: pd.DataFrame) -> None:
    out = (
        frame(people)
        .groupby("county", keys=["west", "atlantis", "north"])
        .agg(n="count", m=("age", "mean", B), epsilon=HUGE)
    )
    assert out["county"].tolist() == ["west", "atlantis", "north"]
    sizes = people.groupby("county").size()
    assert out["n"].tolist() == [sizes["west"], 0, sizes["north"]]
    assert B[0] <= out["m"].iloc[1] <= B[1]  # empty group: still a bounded value


def test_multi_column_groups_and_key_frame(people: pd.DataFrame) -> None:
    keys = pd.DataFrame({"county": ["north", "north", "mars"], "sex": ["F", "M", "F"]})
    out = frame(people).groupby(["county", "sex"], keys=keys).agg(n="count", epsilon=HUGE)
    exp = people.groupby(["county", "sex"]).size()
    assert out["n"].tolist() == [exp[("north", "F")], exp[("north", "M")], 0]
    out2 = frame(people).groupby(["county", "sex"]).agg(n="count", epsilon=HUGE, delta=1e-9)
    got = {(c, s): n for c, s, n in out2.itertuples(index=False)}
    assert got == exp.to_dict()


def test_private_selection_drops_rare_groups() -> None:
    df = pd.DataFrame(
        {"pid": [1, 2, 3, 4, 5, 6], "city": ["big", "big", "big", "big", "rare", "big"]}
    )
    pf = frame(df, privacy_unit="pid")
    plan = pf.groupby("city").plan(n="count", epsilon=HUGE, delta=1e-6)
    assert plan.selection_threshold == 2  # any group with >= 2 persons passes at huge epsilon
    out = plan.execute()
    assert out["city"].tolist() == ["big"] and out["n"].tolist() == [5]
    with pytest.raises(ConfigError, match="delta"):
        pf.groupby("city").plan(n="count", epsilon=1.0)


def test_contribution_bounding_caps_rows_and_groups() -> None:
    rows = [(1, "a")] * 10 + [(1, "b")] * 4 + [(1, "c")] * 3 + [(2, "a")] * 2 + [(3, "b")]
    df = pd.DataFrame(rows, columns=["pid", "g"])
    for max_rows, max_groups in [(1, 1), (3, 1), (3, 2), (20, 3)]:
        out = frame(df, privacy_unit="pid", max_rows=max_rows, max_groups=max_groups)
        res = out.groupby("g", keys=["a", "b", "c"]).agg(n="count", epsilon=HUGE)
        person1 = res["n"].sum() - min(2, max_rows) - 1
        caps = sorted(min(k, max_rows) for k in (10, 4, 3))[::-1]
        # person 1 keeps max_groups of its 3 groups, each capped at max_rows rows
        assert person1 <= sum(caps[:max_groups])
        assert person1 >= min(3, max_rows) * max_groups or max_groups == 3


def test_bounding_keeps_uniform_sample() -> None:
    """Which group survives max_groups=1 is uniform (chi-square, alpha = 1e-6)."""
    from scipy import stats

    persons = np.zeros(4, dtype=np.int64)
    groups = np.arange(4, dtype=np.int64)
    rng = SecureRandom(2024)
    hits = np.zeros(4)
    for _ in range(4000):
        keep = bound_contributions(persons, groups, 4, max_groups=1, max_rows=1, priorities=rng.raw)
        assert keep.sum() == 1
        hits += keep
    assert stats.chisquare(hits).pvalue > 1e-6
    # rows within a pair: 6 rows, keep 2 -> each row kept with probability 1/3
    p6 = np.zeros(6, dtype=np.int64)
    kept = np.zeros(6)
    for _ in range(3000):
        keep = bound_contributions(p6, p6, 1, max_groups=1, max_rows=2, priorities=rng.raw)
        assert keep.sum() == 2
        kept += keep
    assert stats.chisquare(kept).pvalue > 1e-6


def test_nan_never_becomes_zero() -> None:
    df = pd.DataFrame({"g": ["a"] * 4, "x": [np.nan, 10.0, np.nan, 20.0]})
    out = frame(df).groupby("g", keys=["a"]).agg(
        n="count", nx=("x", "count"), s=("x", "sum", (0, 100)), m=("x", "mean", (0, 100)),
        epsilon=HUGE,
    )  # fmt: skip
    assert out.loc[0, ["n", "nx"]].tolist() == [4, 2]
    assert out.loc[0, "s"] == pytest.approx(30.0, rel=1e-6)
    assert out.loc[0, "m"] == pytest.approx(15.0, rel=1e-6)


def test_where_filters_and_composes(people: pd.DataFrame) -> None:
    pf = frame(people)
    sub = pf.where("age > 40").where(people["sex"] == "F")
    out = sub.groupby("county", keys=["north"]).agg(n="count", epsilon=HUGE)
    exp = ((people["age"] > 40) & (people["sex"] == "F") & (people["county"] == "north")).sum()
    assert out["n"].tolist() == [exp]
    with pytest.raises(ConfigError):
        pf.where(people["age"].reset_index(drop=True) > 3)


def test_input_not_mutated_and_string_dtype(people: pd.DataFrame) -> None:
    before = people.copy()
    df = people.astype({"county": "string"})
    frame(df, privacy_unit="pid", max_groups=2).groupby("county").agg(
        n="count", m=("age", "mean", B), epsilon=1.0, delta=1e-6
    )
    pd.testing.assert_frame_equal(people, before)


@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        (lambda pf: pf.groupby("county").plan(m=("age", "mean"), epsilon=1, delta=1e-6), "'age'"),
        (lambda pf: pf.groupby("county").plan(m=("nope", "sum", B), epsilon=1), "'nope'"),
        (lambda pf: pf.groupby("nope"), "'nope'"),
        (lambda pf: pf.groupby("county", keys=["a"]).plan(n="count", epsilon=-1), "epsilon"),
        (lambda pf: pf.groupby("county", keys=["a"]).plan(n="count", epsilon=1, delta=2), "delta"),
        (lambda pf: pf.groupby("county", keys=["a", "a"]).plan(n="count", epsilon=1), "unique"),
        (lambda pf: pf.groupby("county", keys=["a"]).plan(n="sum", epsilon=1), "only 'count'"),
        (lambda pf: pf.groupby("county", keys=["a"]).plan(n=("age", "mode"), epsilon=1), "mode"),
        (lambda pf: pf.groupby("county", keys=["a"]).plan(epsilon=1), "at least one"),
        (
            lambda pf: pf.groupby("county", keys=["a"]).plan(
                n="count", epsilon=1, mechanism="gaussian"
            ),
            "delta",
        ),
        (
            lambda pf: pf.groupby("county", keys=["a"]).plan(x=("age", "mean", (5, 1)), epsilon=1),
            "lower <= upper",
        ),
        (lambda pf: pf.groupby("county", max_groups=2), "privacy_unit"),
    ],
)
def test_config_errors(people: pd.DataFrame, call, fragment: str) -> None:
    with pytest.raises(ConfigError) as err:
        call(frame(people))
    assert fragment in str(err.value)


def test_frame_level_bounds_and_bad_input(people: pd.DataFrame) -> None:
    pf = frame(people, bounds={"age": B})
    out = pf.groupby("county", keys=["north"]).agg(m=("age", "mean"), epsilon=HUGE)
    exp = people.loc[people["county"] == "north", "age"].clip(*B).mean()
    assert out["m"].iloc[0] == pytest.approx(exp, rel=1e-6)
    with pytest.raises(InputError):
        PrivateFrame([1, 2, 3], accountant=False)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="privacy unit"):
        PrivateFrame(people, privacy_unit="nobody", accountant=False)
    with pytest.raises(ConfigError, match="privacy unit"):
        frame(people, privacy_unit="pid").groupby("pid")


def test_secure_default_generator_warns_only_when_seeded(people: pd.DataFrame) -> None:
    from veil.errors import InsecureRandomWarning

    with warnings.catch_warnings():
        warnings.simplefilter("error", InsecureRandomWarning)
        PrivateFrame(people, accountant=False)  # secure: no warning
    with pytest.warns(InsecureRandomWarning):
        PrivateFrame(people, accountant=False, random_state=1)


def test_integer_column_quantile_returns_a_valid_quantile() -> None:
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"g": rng.choice(["a", "b"], 2000), "age": rng.integers(17, 91, 2000)})
    out = (
        frame(df, integer_columns=["age"])
        .groupby("g", keys=["a", "b"])
        .agg(
            med=("age", "median", (17, 90)), p9=Agg("quantile", "age", (17, 90), 0.9), epsilon=HUGE
        )
    )
    for g, med, p9 in out.itertuples(index=False):
        vals = df.loc[df["g"] == g, "age"].to_numpy()
        for q, c in ((0.5, med), (0.9, p9)):
            assert float(c).is_integer()
            assert (vals < c).sum() <= q * vals.size <= (vals <= c).sum()


@pytest.mark.parametrize("wide", [False, True])
def test_bounding_invariants_both_paths(wide: bool) -> None:
    """Kept rows per pair = min(rows, max_rows); kept pairs per person = min(pairs, max_groups)."""
    rng = np.random.default_rng(8)
    n = 5000
    persons = rng.integers(0, 300, n)
    if wide:  # person codes too wide for the packed 64-bit key: lexsort fallback
        persons = persons * (2**45)
    groups = rng.integers(0, 12, n)
    keep = bound_contributions(
        persons, groups, 12, max_groups=3, max_rows=2, priorities=SecureRandom(9).raw
    )
    df = pd.DataFrame({"p": persons, "g": groups, "k": keep})
    per_pair = df.groupby(["p", "g"])["k"].agg(["size", "sum"])
    kept_pairs = per_pair[per_pair["sum"] > 0]
    assert (kept_pairs["sum"] == np.minimum(kept_pairs["size"], 2)).all()
    pairs_per_person = per_pair.groupby(level="p").size()
    kept_per_person = (
        kept_pairs.groupby(level="p").size().reindex(pairs_per_person.index, fill_value=0)
    )
    assert (kept_per_person == np.minimum(pairs_per_person, 3)).all()


def test_bounding_caps_hold_even_when_random_keys_tie() -> None:
    """Constant 'random' priorities force the exact tie-breaking path: caps still hold."""
    persons = np.repeat(np.arange(50), 8)
    groups = np.tile(np.arange(8), 50)
    keep = bound_contributions(
        persons, groups, 8, max_groups=3, max_rows=1,
        priorities=lambda n: np.zeros(n, dtype=np.uint64),
    )  # fmt: skip
    assert np.bincount(persons[keep], minlength=50).tolist() == [3] * 50


@pytest.mark.parametrize("scale", [1, 2**50])
def test_persons_per_group_matches_pandas(scale: int) -> None:
    from veil.dp.frame._bounding import persons_per_group

    rng = np.random.default_rng(4)
    p, g = rng.integers(0, 500, 5000), rng.integers(0, 7, 5000)
    exp = pd.DataFrame({"p": p, "g": g}).groupby("g")["p"].nunique().to_numpy()
    n_groups = 7 if scale == 1 else 2**10  # the wide case takes the pandas fallback
    assert persons_per_group(p * scale, g, n_groups)[:7].tolist() == exp.tolist()


def test_replacement_neighbours_is_restricted(people: pd.DataFrame) -> None:
    full = people.dropna()
    pf = frame(full)
    with pytest.raises(ConfigError, match="ungrouped"):
        pf.groupby("county", keys=["north"]).plan(n="count", epsilon=1, neighbouring="replace")
    with pytest.raises(ConfigError, match="ungrouped"):
        pf.where("age > 3").plan(n="count", epsilon=1, neighbouring="replace")
    with pytest.raises(ConfigError, match="ungrouped"):
        frame(full, privacy_unit="pid").plan(n="count", epsilon=1, neighbouring="replace")
    with pytest.raises(ConfigError, match="missing values"):
        frame(people).plan(m=("age", "mean", B), epsilon=1, neighbouring="replace")
    with pytest.raises(ConfigError, match="neighbouring"):
        pf.plan(n="count", epsilon=1, neighbouring="swap")
    out = pf.agg(m=("age", "mean", B), v=("age", "var", B), epsilon=HUGE, neighbouring="replace")
    clipped = full["age"].clip(*B)
    assert out["m"].iloc[0] == pytest.approx(clipped.mean(), rel=1e-6)
    assert out["v"].iloc[0] == pytest.approx(clipped.var(ddof=0), rel=1e-5)


def test_bounds_for_a_column_not_in_the_table_are_refused(people):
    """A typo in a bounds key would leave the intended column without bounds: refused."""
    with pytest.raises(ConfigError, match="no column 'agee'"):
        PrivateFrame(people, bounds={"agee": (0, 100)})
    assert PrivateFrame(people, bounds={"age": (0, 100)}).bounds == {"age": (0, 100)}


def test_public_keys_by_column_are_every_combination() -> None:
    from veil.dp import BudgetAccountant

    df = pd.DataFrame({"a": ["x", "y", "x"], "b": [1, 2, 2], "v": [1.0, 2.0, 3.0]})
    pf = PrivateFrame(df, accountant=BudgetAccountant(), random_state=0)
    out = pf.groupby(["a", "b"], keys={"a": ["x", "y"], "b": [1, 2, 3]}).agg(n="count", epsilon=1e9)
    assert list(zip(out["a"], out["b"])) == [(a, b) for a in "xy" for b in (1, 2, 3)]
    assert out["n"].tolist() == [1, 1, 0, 0, 1, 0]
    with pytest.raises(ConfigError, match="exactly the group columns"):
        pf.groupby(["a", "b"], keys={"a": ["x"]}).agg(n="count", epsilon=1.0)
    with pytest.raises(ConfigError, match="list of values"):
        pf.groupby(["a", "b"], keys={"a": "x", "b": [1]}).agg(n="count", epsilon=1.0)
    with pytest.raises(ConfigError, match="combinations"):
        pf.groupby(["a", "b"], keys={"a": range(10_000), "b": range(10_000)}).agg(
            n="count", epsilon=1.0
        )


@pytest.mark.parametrize("dtype", [object, "str"])
def test_text_cells_read_as_numbers_each_by_itself(dtype) -> None:
    """A text column's cells as numbers (the factorized path) equal each cell's own canonical
    value: numbers and 'true' / 'false' read, other text and missing NaN."""
    import math

    from veil.dp._canon import canonical
    from veil.dp.frame._frame import _cell_numbers

    cells = [" 30.0 ", "x", None, "TRUE", "1e400", "30", "false", "2.5", "x", None, "1_0"]
    got = _cell_numbers(pd.Series(cells, dtype=dtype))
    want = []
    for v in cells:
        c = canonical(v)
        want.append(float(c) if isinstance(c, (int, float)) else math.nan)
    assert np.array_equal(got, np.array(want), equal_nan=True)
    assert got[0] == got[5] == 30.0 and got[3] == 1.0 and got[6] == 0.0 and got[4] == math.inf
