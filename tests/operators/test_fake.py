"""fake: consistency, gender, uniqueness, e-mails from names, dates, weighted choices."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _helpers import ctx, people
from faker.providers.person.en_US import Provider as EnPerson
from scipy import stats

from veil.deid.operators import OperatorContext, get_operator
from veil.errors import ConfigError, InputError


def test_same_original_same_fake_within_and_across_runs() -> None:
    df = people()
    op = get_operator("fake", {"kind": "name"})
    a = op.apply(df, "id", ctx(seed=1))["id"]
    assert a.iloc[0] == a.iloc[3] and len(set(a.iloc[:3])) == 3 and pd.isna(a.iloc[4])
    # with the same key: same mapping in another run and another file
    b = op.apply(pd.DataFrame({"x": ["C3", "A1"]}), "x", ctx(seed=99))["x"]
    assert b.tolist() == [a.iloc[2], a.iloc[0]]
    # another key: another mapping
    c = op.apply(df, "id", ctx(key=b"\x05" * 32))["id"]
    assert c.iloc[0] != a.iloc[0]
    # no key: consistent within the run; repeatable across runs with the policy seed
    d1 = op.apply(df, "id", ctx(key=None, seed=1))["id"]
    assert d1.iloc[0] == d1.iloc[3]
    p1 = op.apply(df, "id", OperatorContext(seed=42))["id"]
    p2 = op.apply(df, "id", OperatorContext(seed=42))["id"]
    p3 = op.apply(df, "id", OperatorContext(seed=43))["id"]
    assert p1.equals(p2) and not p1.equals(p3)


def test_names_follow_gender_column() -> None:
    n = 300
    sexes = np.where(np.arange(n) % 2 == 0, "Female", "Male")
    df = pd.DataFrame({"first": [f"person{i}" for i in range(n)], "sex": sexes})
    out = get_operator("fake", {"kind": "first_name", "gender_column": "sex", "seed": 3}).apply(
        df, "first", ctx()
    )
    female, male = set(EnPerson.first_names_female), set(EnPerson.first_names_male)
    assert all(v in female for v in out["first"][sexes == "Female"])
    assert all(v in male for v in out["first"][sexes == "Male"])
    mapped = get_operator(
        "fake",
        {
            "kind": "name",
            "gender_column": "g",
            "gender_map": {"1": "female", "2": "male"},
            "seed": 1,
        },
    )
    out = mapped.apply(pd.DataFrame({"n": ["a", "b"], "g": [1, 2]}), "n", ctx())
    assert out["n"].iloc[0].split()[0] in female or out["n"].iloc[0].split()[1] in female


def test_unique_first_names_exhaust_the_pool() -> None:
    # en_US has ~690 distinct first names: 2000 distinct ones cannot exist
    df = pd.DataFrame({"n": [f"p{i}" for i in range(2000)]})
    with pytest.raises(InputError, match="distinct first_name"):
        get_operator("fake", {"kind": "first_name", "unique": True, "seed": 1}).apply(
            df, "n", ctx()
        )


def test_unique_values_possible_and_impossible() -> None:
    df = pd.DataFrame({"n": [f"p{i}" for i in range(300)]})
    out = get_operator("fake", {"kind": "name", "unique": True, "seed": 1}).apply(df, "n", ctx())
    assert out["n"].nunique() == 300
    small = pd.DataFrame({"c": ["a", "b", "c"]})
    with pytest.raises(InputError, match="distinct"):
        get_operator(
            "fake", {"kind": "city", "choices": ["X", "Y"], "unique": True, "seed": 1}
        ).apply(small, "c", ctx())


def test_email_built_from_fake_name() -> None:
    df = pd.DataFrame(
        {"name": ["Ann Lee", "Bob Ray", "Ann Lee"], "mail": ["a@x.org", "b@x.org", "a@x.org"]}
    )
    df = get_operator("fake", {"kind": "name", "seed": 2}).apply(df, "name", ctx())
    out = get_operator("fake", {"kind": "email", "name_column": "name", "seed": 2}).apply(
        df, "mail", ctx()
    )
    for name, mail in zip(out["name"], out["mail"]):
        local, domain = mail.split("@")
        assert (
            local == ".".join(name.lower().replace("-", " ").replace("'", " ").split())
            and "." in domain
        )
    solo = get_operator("fake", {"kind": "email", "seed": 2}).apply(df, "mail", ctx())["mail"]
    assert solo.iloc[0] == solo.iloc[2] and solo.str.fullmatch(r"[a-z0-9.]+@[a-z0-9.]+").all()


def test_dates_in_range() -> None:
    df = pd.DataFrame({"dob": [f"d{i}" for i in range(500)]})
    op = get_operator(
        "fake", {"kind": "date", "start": "1990-01-01", "end": "1990-12-31", "seed": 1}
    )
    out = pd.to_datetime(op.apply(df, "dob", ctx())["dob"])
    assert out.min() >= pd.Timestamp("1990-01-01") and out.max() <= pd.Timestamp("1990-12-31")
    assert out.nunique() > 200


def test_cities_with_given_probabilities_per_row() -> None:
    n = 100_000
    df = pd.DataFrame({"city": ["same"] * n})
    probs = {"Nairobi": 0.5, "Mombasa": 0.3, "Kisumu": 0.2}
    op = get_operator("fake", {"kind": "city", "choices": probs, "consistent": False})
    out = op.apply(df, "city", ctx(seed=8))["city"]
    counts = out.value_counts().reindex(list(probs)).to_numpy()
    assert stats.chisquare(counts, np.array(list(probs.values())) * n).pvalue > 1e-6


def test_consistent_choices_per_original() -> None:
    m = 20_000
    df = pd.DataFrame({"town": [f"t{i}" for i in range(m)] * 2})
    op = get_operator(
        "fake", {"kind": "city", "choices": ["A", "B"], "probabilities": [0.8, 0.2], "seed": 4}
    )
    out = op.apply(df, "town", ctx())["town"]
    assert (out.iloc[:m].to_numpy() == out.iloc[m:].to_numpy()).all()
    k = int((out.iloc[:m] == "A").sum())
    assert stats.binomtest(k, m, 0.8).pvalue > 1e-6


def test_locale() -> None:
    df = pd.DataFrame({"c": ["x", "y"]})
    out = get_operator("fake", {"kind": "city", "locale": "de_DE", "seed": 1}).apply(df, "c", ctx())
    from faker.providers.address.de_DE import Provider as DeAddress

    assert set(out["c"]) <= set(DeAddress.cities)


@pytest.mark.parametrize(
    "params",
    [
        {"kind": "spaceship"},
        {"kind": "name", "locale": "xx_XX"},
        {"kind": "city", "choices": ["a"], "probabilities": [0.5, 0.5]},
        {"kind": "city", "choices": {"a": -1}},
        {"kind": "date", "start": "2000-01-01", "end": "1999-01-01"},
        {"kind": "name", "gender_map": {"x": "other"}},
        {"kind": "name", "seed": "abc"},
    ],
)
def test_bad_params(params: dict) -> None:
    with pytest.raises(ConfigError):
        get_operator("fake", params)


def test_a_configured_key_that_cannot_be_used_is_an_error_not_a_seed_fallback(
    tmp_path, monkeypatch
) -> None:
    """A too-short key file used to be swallowed: the fakes then came from the policy's seed,
    which anyone holding the policy can recompute (a dictionary attack on the fakes)."""
    from veil.deid import apply
    from veil.errors import KeyMissingError

    df = pd.DataFrame({"name": ["Alice Smith", "Bob Jones"]})
    policy = {"seed": 42, "columns": {"name": {"role": "identifier",
              "operator": {"name": "fake", "kind": "name"}}}}  # fmt: skip
    short = tmp_path / "short.key"
    short.write_text("shortkey123")
    with pytest.raises(KeyMissingError, match="too short"):
        apply(df, policy, key_file=short)
    monkeypatch.delenv("VEIL_KEY", raising=False)
    with pytest.raises(KeyMissingError, match="MY_KEY"):  # a named variable that is unset
        apply(df, {**policy, "key": {"env": "MY_KEY"}})
    # no key configured at all: seed-derived fakes, and the report says they are recomputable
    release, report = apply(df, policy)
    assert any("recompute" in w for w in report["warnings"])
    again, _ = apply(df, policy)
    assert release["name"].tolist() == again["name"].tolist()
    good = tmp_path / "good.key"
    good.write_text("ab12" * 16)
    keyed, report = apply(df, policy, key_file=good)
    assert keyed["name"].tolist() != release["name"].tolist()
    assert not any("recompute" in w for w in report["warnings"])


def test_fakes_are_not_join_keys_as_documented() -> None:
    # docs/operators.md "Fakes are not join keys": pinned with the figures quoted there
    def c() -> OperatorContext:
        return OperatorContext(secret_loader=lambda: bytes(range(32)))

    vals = [f"person{i}" for i in range(3000)]
    shared = get_operator("fake", {"kind": "first_name"}).apply(pd.DataFrame({"n": vals}), "n", c())
    assert shared["n"].nunique() < len(vals) / 2  # many people per fake first name
    op = get_operator("fake", {"kind": "name", "unique": True})
    full = op.apply(pd.DataFrame({"n": vals}), "n", c())["n"].tolist()
    half = op.apply(pd.DataFrame({"n": vals[1500:]}), "n", c())["n"].tolist()
    assert len(set(full)) == len(vals)
    assert any(x != y for x, y in zip(full[1500:], half))  # same original, another fake


def test_canonically_equivalent_originals_get_one_fake() -> None:
    # one person written precomposed (NFC) in one file and decomposed (NFD) in another
    import unicodedata

    names = ["José Ñúñez", "Zoë Brontë", "Ångström"]
    nfc = [unicodedata.normalize("NFC", n) for n in names]
    nfd = [unicodedata.normalize("NFD", n) for n in names]
    op = get_operator("fake", {"kind": "name"})
    a = op.apply(pd.DataFrame({"n": nfc}), "n", ctx())["n"].tolist()
    b = op.apply(pd.DataFrame({"n": nfd}), "n", ctx())["n"].tolist()
    assert a == b and len(set(a)) == 3


def test_distinct_binary_originals_get_distinct_fakes() -> None:
    # a Parquet binary id column: bytes that are not UTF-8 went through errors='replace',
    # so b'\xff\x01' and b'\xfe\x01' became one text and two people one fake name
    cells = [b"\xff\x01", b"\xfe\x01", b"\xfd\x01", b"\xff\x01"]
    op = get_operator("fake", {"kind": "name"})
    out = op.apply(pd.DataFrame({"n": pd.Series(cells, dtype=object)}), "n", ctx())["n"].tolist()
    assert out[0] == out[3] and len({out[0], out[1], out[2]}) == 3
    # bytes that are UTF-8 keep the fake of their text
    same = op.apply(pd.DataFrame({"n": pd.Series([b"Ann", "Ann"], dtype=object)}), "n", ctx())
    assert same["n"][0] == same["n"][1]


def test_canonically_equivalent_originals_in_one_file_share_a_unique_fake() -> None:
    # unique: true took the NFD form's fake (equal to the NFC form's) for a collision and
    # drew another: one person, written both ways in one file, became two fake people
    import unicodedata

    names = [
        unicodedata.normalize("NFC", n) for n in ["José Ñúñez", "Zoë Brontë", "Ångström", "Ann"]
    ]
    cells = names + [unicodedata.normalize("NFD", n) for n in names[:3]]
    op = get_operator("fake", {"kind": "name", "unique": True})
    out = op.apply(pd.DataFrame({"n": cells}), "n", ctx())["n"].tolist()
    assert out[4:] == out[:3] and len(set(out)) == 4
