"""Population tables whose QI columns are typed differently from the sample's, repeated QIs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.anonymity import check, risk
from veil.cli.main import main
from veil.errors import InputError


def _pandas_population_sizes(df: pd.DataFrame, pop: pd.DataFrame, qi: list[str]) -> pd.Series:
    """F_j of every sample class, matching values after mapping both tables to float."""
    key = [df[c].astype(float) for c in qi]
    pkey = [pop[c].astype(float) for c in qi]
    fsize = pd.DataFrame(dict(zip(qi, pkey))).groupby(qi).size()
    sample = pd.DataFrame(dict(zip(qi, key))).groupby(qi).size()
    return fsize.reindex(sample.index).fillna(0), sample


@pytest.mark.parametrize(
    "pop_age",
    [
        [30.0, 30.0, 30.0, 40.0, 40.0, np.nan],  # a missing age makes the column float
        ["30", "30", "30", "40", "40", "unknown"],  # a stray word makes it text
    ],
)
def test_population_columns_typed_differently_still_match(pop_age, tmp_path, capsys) -> None:
    df = pd.DataFrame({"age": [30, 30, 40, 40], "zip": ["a", "a", "b", "b"]})
    pop = pd.DataFrame({"age": pop_age, "zip": ["a", "a", "a", "b", "b", "b"]})
    big_f = {30: 3, 40: 2}  # people per age in the population (the 6th has no usable age)
    f = df["age"].map(df["age"].value_counts())
    F = df["age"].map(big_f)
    r = risk(df, ["age"], population=pop)
    assert r["journalist"]["highest"] == pytest.approx(1 / 2)
    assert r["marketer"] == pytest.approx(float((1 / F).mean()))
    assert r["prosecutor"]["average"] == pytest.approx(float((1 / f).mean()))
    res = check(df, ["age"], k=2, population=pop)
    kmap = [m for m in res.models if m["model"].startswith("k-map")][0]
    assert kmap["holds"] and kmap["achieved"] == 2
    assert res.risk["journalist"] == r["journalist"]
    s, p = tmp_path / "s.csv", tmp_path / "p.csv"
    df.to_csv(s, index=False)
    pop.to_csv(p, index=False)
    assert main(["check", str(s), "--qi", "age", "--k", "2", "--population", str(p)]) == 0
    assert main(["check", str(s), "--qi", "age", "--k", "3", "--population", str(p)]) == 1
    capsys.readouterr()


def test_a_quasi_identifier_listed_twice_counts_once() -> None:
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"a": rng.integers(0, 5, 60), "b": rng.integers(0, 3, 60)})
    pop = pd.DataFrame({"a": rng.integers(0, 5, 600), "b": rng.integers(0, 3, 600)})
    big_f, sample = _pandas_population_sizes(df, pop, ["a", "b"])
    big_f = np.maximum(big_f, sample)
    for qi in (["a", "b", "a"], ["a", "b"]):
        r = risk(df, qi, population=pop)
        assert r["classes"] == len(sample)
        assert r["journalist"]["highest"] == pytest.approx(float(1 / big_f.min()))
        assert r["marketer"] == pytest.approx(float((sample / big_f).sum() / len(df)))
        res = check(df, qi, k=1, population=pop)
        assert res.n_classes == len(sample)
        assert res.risk["journalist"] == r["journalist"]


def test_risk_of_an_empty_table_is_reported_not_a_crash() -> None:
    df = pd.DataFrame({"a": pd.Series([], dtype="int64"), "b": pd.Series([], dtype=object)})
    r = risk(df, ["a", "b"])
    assert r["records"] == 0 and r["prosecutor"] is None and r["sample_uniqueness"] == 0.0
    pop = pd.DataFrame({"a": [1, 2], "b": ["x", "y"]})
    assert risk(df, ["a", "b"], population=pop)["journalist"] is None
    with pytest.raises(InputError, match="DataFrame"):
        risk([[1, "x"]], ["a", "b"])  # type: ignore[arg-type]
    with pytest.raises(InputError, match="nope"):
        risk(df, ["nope"])


def test_risk_and_k_map_on_adult_match_pandas(adult_data) -> None:
    # sample 8,000 of the 48,842 adult.data + adult.test people; population = all of them
    names = ["age", "workclass", "fnlwgt", "education", "education_num", "marital"]
    names += ["occupation", "relationship", "race", "sex", "gain", "loss", "hours"]
    names += ["country", "salary"]
    opts = {"header": None, "names": names, "skipinitialspace": True}
    test = pd.read_csv(adult_data.with_name("adult.test"), skiprows=1, **opts)
    pop = pd.concat([pd.read_csv(adult_data, **opts), test], ignore_index=True)
    rng = np.random.default_rng(0)
    sample = pop.iloc[rng.choice(len(pop), 8000, replace=False)]
    sample.index = rng.integers(0, 100, len(sample))  # a non-unique index
    qi, n = ["age", "sex", "race", "marital"], len(sample)
    f = sample.groupby(qi).size()
    big_f = pop.groupby(qi).size().reindex(f.index)
    per_record = sample[qi].merge(big_f.rename("F").reset_index(), on=qi, how="left")["F"]
    r = risk(sample, qi, population=pop, threshold=0.1)
    assert r["prosecutor"]["highest"] == pytest.approx(1 / f.min())
    assert r["prosecutor"]["average"] == pytest.approx(len(f) / n)
    assert r["prosecutor"]["records_at_risk"] == pytest.approx(float(f[f < 10].sum() / n))
    assert r["journalist"]["highest"] == pytest.approx(1 / big_f.min())
    assert r["journalist"]["average"] == pytest.approx(float((1 / per_record).mean()))
    assert r["journalist"]["records_at_risk"] == pytest.approx(float((per_record < 10).mean()))
    assert r["marketer"] == pytest.approx(float((f / big_f).sum() / n))
    assert r["sample_uniqueness"] == pytest.approx(float((f == 1).sum() / n))
    pi, fi = n / len(pop), f.value_counts()  # Zayatz, binomial approximation
    denom = sum(i * c * (1 - pi) ** (i - 1) for i, c in fi.items())
    assert r["population_uniqueness"] == pytest.approx(fi[1] * fi[1] / denom / n)
    res = check(sample, qi, k=5, population=pop)
    kanon, kmap = res.models
    assert (kanon["violating_classes"], kanon["violating_records"]) == (
        int((f < 5).sum()),
        int(f[f < 5].sum()),
    )
    assert (kmap["violating_classes"], kmap["violating_records"]) == (
        int((big_f < 5).sum()),
        int(f[big_f < 5].sum()),
    )
    multi = sample.set_index([sample.index, np.arange(n)])  # a MultiIndex: same answer
    assert check(multi, qi, k=5, population=pop).models == res.models


def test_check_reports_the_same_risk_as_risk_with_a_population() -> None:
    # docs/anonymity.md: the population-uniqueness estimate uses n / len(population) when a
    # population table is given; check().risk must not drop it
    rng = np.random.default_rng(11)
    df = pd.DataFrame({"a": rng.integers(0, 40, 60), "b": rng.choice(list("xyz"), 60)})
    pop = pd.concat([df, df.sample(400, replace=True, random_state=1)], ignore_index=True)
    want = risk(df, ["a", "b"], population=pop)
    assert want["population_uniqueness"] is not None
    assert check(df, ["a", "b"], k=1, population=pop).risk == want
    assert check(df, ["a", "b"], k=1).risk == risk(df, ["a", "b"])
