"""check() and `veil check` against plain pandas group-bys, for any index."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from veil.anonymity import check
from veil.cli.main import main
from veil.errors import ConfigError, InputError


def _table(seed: int, n: int = 400) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "zip": rng.choice(["100", "101", "102", "200"], n),
            "age": rng.integers(20, 26, n),
            "sex": rng.choice(["F", "M"], n),
            "dx": rng.choice(["flu", "hiv", "cold", "none"], n, p=[0.4, 0.1, 0.2, 0.3]),
            "income": rng.integers(0, 8, n) * 1000,
        }
    )


def _reindexed(df: pd.DataFrame, kind: str, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    out = df.copy()
    if kind == "shuffled":
        out.index = rng.permutation(len(df)) + 17
    elif kind == "duplicated":
        out.index = rng.integers(0, 5, len(df))
    elif kind == "string":
        out.index = [f"r{i}" for i in rng.permutation(len(df))]
    return out


def _oracle(df, qi, k, l_col, ell, t_col, t):
    key = df[qi].astype(str).agg("|".join, axis=1).to_numpy()
    d = pd.DataFrame({"key": key, "l": df[l_col].to_numpy(), "t": df[t_col].to_numpy()})
    sizes = d.groupby("key").size()
    nun = d.groupby("key")["l"].nunique()
    glob = d["t"].value_counts(normalize=True)
    emd = d.groupby("key")["t"].apply(
        lambda s: (
            0.5
            * float(
                (s.value_counts(normalize=True).reindex(glob.index, fill_value=0) - glob)
                .abs()
                .sum()
            )
        )
    )
    return (sizes < k).sum(), (nun < ell).sum(), (emd > t + 1e-9).sum(), sizes.min(), len(sizes)


@pytest.mark.parametrize("kind", ["range", "shuffled", "duplicated", "string"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_check_matches_groupby(kind, seed):
    df = _reindexed(_table(seed), kind, seed)
    qi = ["zip", "age", "sex"]
    for k, ell, t in [(2, 2, 0.3), (5, 3, 0.2), (1, 1, 1.0)]:
        r = check(df, qi, k=k, l={"dx": ell}, t=("income", t))
        vk, vl, vt, smin, ncls = _oracle(df, qi, k, "dx", ell, "income", t)
        got = [m["violating_classes"] for m in r.models]
        assert got == [vk, vl, vt]
        assert r.holds == (vk + vl + vt == 0)
        assert r.n_classes == ncls
        assert int(r.smallest["size"].iloc[0]) == smin
        assert sum(b["records"] for b in r.class_sizes) == len(df)


def test_smallest_class_values_are_real():
    df = _reindexed(_table(5, 300), "duplicated", 5)
    r = check(df, ["zip", "age"], k=300)  # every class is smaller than the table
    sizes = df.groupby(["zip", "age"]).size()
    for _, row in r.smallest.iterrows():
        assert sizes[(row["zip"], row["age"])] == row["size"]
    assert r.n_violating == len(sizes)


def test_entropy_recursive_average_risk():
    df = _table(3, 500)
    r = check(df, ["zip"], l={"dx": 3}, l_variant="entropy")
    ent = df.groupby("zip")["dx"].apply(
        lambda s: float(
            -(s.value_counts(normalize=True) * np.log(s.value_counts(normalize=True))).sum()
        )
    )
    assert r.models[0]["violating_classes"] == int((ent < np.log(3) - 1e-9).sum())
    r = check(df, ["zip"], l={"dx": 2}, l_variant="recursive", c=1.5)

    def rec(s):
        c = np.sort(s.value_counts().to_numpy())[::-1]
        return c[0] < 1.5 * c[1:].sum()

    ok = df.groupby("zip")["dx"].apply(rec)
    assert r.models[0]["violating_classes"] == int((~ok).sum())
    nclass = df.groupby(["zip", "age", "sex"]).ngroups
    assert check(df, ["zip", "age", "sex"], average_risk=nclass / len(df)).holds
    assert not check(df, ["zip", "age", "sex"], average_risk=nclass / len(df) - 1e-3).holds


def test_k_map_with_population():
    df = _table(4, 200)
    pop = pd.concat([_table(40, 2000), df], ignore_index=True)
    r = check(df, ["zip", "age"], k=3, population=pop)
    psize = pop.groupby(["zip", "age"]).size()
    ssize = df.groupby(["zip", "age"]).size()
    kmap = [m for m in r.models if m["model"].startswith("k-map")][0]
    assert kmap["violating_classes"] == int((psize.reindex(ssize.index) < 3).sum())
    assert r.risk["journalist"]["highest"] == pytest.approx(1 / psize.reindex(ssize.index).min())


def test_check_errors():
    df = _table(0, 50)
    with pytest.raises(InputError, match="nope"):
        check(df, ["nope"], k=2)
    with pytest.raises(ConfigError, match="nothing to check"):
        check(df, ["zip"])
    with pytest.raises(ConfigError, match="both"):
        check(df, ["zip", "dx"], l={"dx": 2})
    with pytest.raises(ConfigError, match="COLUMN:VALUE"):
        check(df, ["zip"], l="dx")
    with pytest.raises(ConfigError, match="with a number as VALUE"):
        check(df, ["zip"], l="dx:two")
    for lim in (2, -0.5, 5.0, True, "0.1"):  # a typo like 5 (meant 5 %) would make any table hold
        with pytest.raises(ConfigError, match="suppression_limit"):
            check(df, ["zip"], k=2, suppression_limit=lim)
    with pytest.raises(ConfigError, match="larger than the table"):
        check(df, ["zip"], k=len(df) + 1)
    assert check(df, ["zip"], k=len(df), suppression_limit=1).holds  # the edges are allowed


def test_cli_exit_codes(tmp_path, capsys):
    df = _table(1, 300)
    p = tmp_path / "t.csv"
    df.to_csv(p, index=False)
    assert main(["check", str(p), "--qi", "zip", "--k", "2", "--l", "dx:2"]) == 0
    out = capsys.readouterr().out
    assert "HOLDS" in out and "class sizes" in out
    assert main(["check", str(p), "--qi", "zip,age,sex", "--k", "50", "--t", "income:0.01"]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "violating classes" in out
    assert main(["check", str(p), "--qi", "nope", "--k", "2"]) == 2
    assert "nope" in capsys.readouterr().err
    assert main(["check", str(p), "--qi", "zip", "--k", "2", "--suppression-limit", "2"]) == 2
    err = capsys.readouterr().err
    assert "suppression_limit" in err and len(err.strip().splitlines()) == 1
    assert main(["check", str(p), "--qi", "zip", "--k", "301"]) == 2
    assert "larger than the table" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["check", str(p), "--k", "2"])
    assert e.value.code == 2
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:  # a negative count is a usage error, not 0
        main(["check", str(p), "--qi", "zip", "--k", "2", "--show", "-1"])
    assert e.value.code == 2 and "--show: must be an integer >= 0" in capsys.readouterr().err
    assert main(["check", str(p), "--qi", "zip", "--k", "2", "--json"]) == 0
    import json

    assert json.loads(capsys.readouterr().out)["holds"] is True


def test_cli_population_hierarchy_and_risk(tmp_path, capsys):
    df = _table(2, 200)
    p = tmp_path / "t.csv"
    df.to_csv(p, index=False)
    pop = tmp_path / "pop.csv"
    pd.concat([df, df, df]).to_csv(pop, index=False)
    h = tmp_path / "dx.csv"
    h.write_text("flu,respiratory,*\ncold,respiratory,*\nhiv,infection,*\nnone,healthy,*\n")
    rc = main(
        ["check", str(p), "--qi", "zip", "--k", "3", "--population", str(pop), "--t", "dx:0.5",
         "--t-distance", "hierarchical", "--hierarchy", f"dx={h}", "--average-risk", "0.5",
         "--json"]
    )  # fmt: skip
    import json

    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["holds"] is True
    names = [m["model"] for m in out["models"]]
    assert any(n.startswith("k-map") for n in names)
    assert any("hierarchical" in n for n in names)
    assert out["risk"]["journalist"]["highest"] <= 1 / 3 + 1e-12


def test_check_on_a_release_with_categoricals():
    from veil.anonymity import AnonymizationConfig, Hierarchy, anonymize

    df = _table(6, 300)
    qi = {
        "zip": Hierarchy.from_mapping(
            {z: [z[0] + "**", "*"] for z in ["100", "101", "102", "200"]}
        ),
        "sex": Hierarchy.flat(["F", "M"]),
    }
    res = anonymize(df, AnonymizationConfig(qi, k=40, suppression_limit=0.1))
    kept = res.data[~res.suppressed]
    assert check(kept, ["zip", "sex"], k=40).holds


def test_check_with_suppression_budget():
    df = pd.DataFrame({"z": ["a"] * 10 + ["b"] * 2, "y": ["u", "v"] * 6})
    assert not check(df, ["z"], k=3).holds
    r = check(df, ["z"], k=3, suppression_limit=2 / 12)
    assert r.holds and r.n_suppressed == 2 and "would be suppressed" in r.report()
    assert not check(df, ["z"], k=3, suppression_limit=1 / 12).holds


def test_cli_show_zero_prints_no_class_values(tmp_path, capsys):
    """``--show 0`` is the way to keep the rarest records' QI values out of a shared log: no
    table (pandas printed an 'Empty DataFrame' block), no value of any class, verdict intact."""
    from veil.cli.main import main

    df = pd.DataFrame({"zip": ["Z-SENTINEL-1", "Z-SENTINEL-2", "Z3"], "age": [41, 67, 99]})
    p = tmp_path / "d.csv"
    df.to_csv(p, index=False)
    assert main(["check", str(p), "--qi", "zip,age", "--k", "2", "--show", "0"]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "class sizes" in out and "not shown" in out
    assert "SENTINEL" not in out and "Empty DataFrame" not in out and "67" not in out
    assert main(["check", str(p), "--qi", "zip,age", "--k", "2", "--show", "1"]) == 1
    assert "smallest classes" in capsys.readouterr().out


def test_mixed_type_cells_are_classes_as_written():
    """Python's ``True == 1 == 1.0`` merged those cells into one class: five records checked as
    k = 5 were written as ``True`` x3 and ``1`` x2 (classes of 3 and 2).  Cells of different
    types are different classes (never larger than the written release's)."""
    flag = pd.Series([True, True, True, 1, 1], dtype=object)
    r = check(pd.DataFrame({"flag": flag}), ["flag"], k=5)
    written = pd.read_csv(io.StringIO(pd.DataFrame({"flag": flag}).to_csv(index=False)), dtype=str)
    assert not r.holds and r.n_classes == written["flag"].nunique() == 2
    v = pd.Series([1, 1.0, "1", None, np.nan, True, "x"], dtype=object)
    sizes = check(pd.DataFrame({"v": v}), ["v"], k=1)
    # one class per type and value (1, 1.0, '1', True, 'x'), None and NaN both missing
    assert sizes.n_classes == 6
    same_type = pd.DataFrame({"v": pd.Series(["a", "b", "a"], dtype=object)})
    assert check(same_type, ["v"], k=1).n_classes == 2


def test_text_report_counts_read_as_english() -> None:
    df = pd.DataFrame({"a": ["x"] * 5 + ["y"], "s": list("abcdea")})
    text = check(df, ["a"], k=5).report()
    assert "6 records, 2 equivalence classes" in text
    assert "(1 class / 1 record violate)" in text
    assert "1: 1 class, 1 record" in text and "5-9: 1 class, 5 records" in text
    assert "1 classes" not in text and "1 records" not in text


def test_kmap_passed_as_a_model_brings_its_population() -> None:
    from veil.anonymity import KMap
    from veil.errors import ConfigError

    zips = ["1001", "1002", "1003", "1004", "1005"]
    df = pd.DataFrame({"zip": zips * 2})
    population = pd.DataFrame({"zip": zips * 4 + ["1001"] * 3})
    ours = check(df, "zip", models=[KMap(5, population)])
    ref = check(df, "zip", k=5, population=population).models[1]
    assert ours.models[0] == ref
    assert not ours.holds and ours.models[0]["achieved"] == 4.0
    assert ours.models[0]["violating_classes"] == 4  # 1001 matches 7 people, the others 4
    with pytest.raises(ConfigError, match="different population tables"):
        check(df, "zip", k=5, population=population, models=[KMap(5, population.copy())])
    # population= without k: the risk estimates and the KMap must not use two tables
    with pytest.raises(ConfigError, match="different population tables"):
        check(df, "zip", population=population.copy(), models=[KMap(5, population)])


def test_cli_headerless_file_names_its_columns(tmp_path, capsys):
    p = tmp_path / "raw.data"
    p.write_text("".join(f"{20 + i % 7}, {'FM'[i % 2]}, x\n" for i in range(40)))
    assert main(["check", str(p), "--qi", "age,sex", "--k", "2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "['age', 'sex']" in err
    assert "no header row" in err and "col_1..col_3" in err
    assert main(["check", str(p), "--qi", "col_1,col_2", "--k", "2"]) == 0
    h = tmp_path / "h.csv"
    h.write_text("age,sex\n" + "".join(f"{20 + i % 7},{'FM'[i % 2]}\n" for i in range(40)))
    capsys.readouterr()
    assert main(["check", str(h), "--qi", "age,nope", "--k", "2"]) == 2
    assert "no header row" not in capsys.readouterr().err


def test_cli_names_a_headerless_file_and_reads_the_population_with_its_header(tmp_path, capsys):
    p = tmp_path / "raw.data"
    p.write_text("".join(f"{20 + i % 7}, {'FM'[i % 2]}, x\n" for i in range(40)))
    assert main(["check", str(p), "--qi", "age,sex", "--k", "2"]) == 2
    assert "--names" in capsys.readouterr().err
    assert main(["check", str(p), "--names", "age,sex,y", "--qi", "age,sex", "--k", "2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("HOLDS: 40 records")
    pop = tmp_path / "pop.csv"
    pop.write_text("age,sex\n" + "".join(f"{20 + i % 7},{'FM'[i % 2]}\n" for i in range(80)))
    rc = main(
        ["check", str(p), "--names", "age,sex,y", "--qi", "age,sex", "--k", "2",
         "--population", str(pop)]
    )  # fmt: skip
    assert rc == 0 and "k-map(k=2, population_rows=80)" in capsys.readouterr().out


def test_numeric_sensitive_column_with_missing_values_says_what_to_do() -> None:
    df = pd.DataFrame({"z": ["a"] * 6, "s": [1.0, 2.0, np.nan, 1.0, 2.0, 3.0]})
    with pytest.raises(InputError, match=r"1 missing value\(s\).*astype\(str\)"):
        check(df, "z", k=2, l={"s": 2})
    as_text = df.assign(s=df["s"].astype(str))  # the suggested way: missing is one more value
    assert check(as_text, "z", k=2, l={"s": 4}).holds
