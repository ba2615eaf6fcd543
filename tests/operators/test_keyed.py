"""pseudonymize, tokenize and detokenize."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _helpers import KEY, ctx, people

from veil.deid.operators import (
    detokenize,
    detokenize_frame,
    get_operator,
    pseudonyms,
    tokenize_values,
)
from veil.errors import ConfigError, CryptoError


def test_pseudonyms_consistent_across_frames_and_key_dependent() -> None:
    op = get_operator("pseudonymize", {"prefix": "P-"})
    a = op.apply(people(), "id", ctx())["id"]
    b = op.apply(pd.DataFrame({"other": ["C3", "A1"]}), "other", ctx())["other"]
    assert a.iloc[0] == a.iloc[3] == b.iloc[1] and a.iloc[2] == b.iloc[0]
    assert a.iloc[0].startswith("P-") and len(a.iloc[0]) == 22
    assert pd.isna(a.iloc[4])
    c = op.apply(people(), "id", ctx(key=b"\x01" * 32))["id"]
    assert (a.iloc[:4] != c.iloc[:4]).all()
    assert not any("A1" in str(v) for v in a)


def test_pseudonym_is_hmac_of_canonical_text() -> None:
    import hashlib
    import hmac

    from veil.deid.operators._util import derive_key

    sub = derive_key(KEY, "pseudonymize:")
    expect = hmac.new(sub, b"17", hashlib.sha256).hexdigest()[:20]
    assert pseudonyms([17, 17.0, "17"], KEY) == [expect] * 3


def test_pseudonym_options() -> None:
    p = pseudonyms(
        ["Ann@X.org ", "ann@x.org"], KEY, normalize="lower", encoding="base32", length=26
    )
    assert p[0] == p[1] and len(p[0]) == 26 and p[0].islower()
    assert pseudonyms(["x"], KEY, scope="a") != pseudonyms(["x"], KEY, scope="b")


def test_pseudonym_collision_detected() -> None:
    op = get_operator("pseudonymize", {"length": 8})
    df = pd.DataFrame({"id": [f"u{i}" for i in range(300_000)]})
    # 8 hex chars = 32 bits: 300k values collide with probability ~1 - exp(-10)
    with pytest.raises(CryptoError, match="larger length"):
        op.apply(df, "id", ctx())


@pytest.mark.parametrize(
    "params", [{"length": 4}, {"length": 70}, {"encoding": "b64"}, {"normalize": "x"}]
)
def test_pseudonymize_bad_params(params: dict) -> None:
    with pytest.raises(ConfigError):
        get_operator("pseudonymize", params)


def test_tokenize_round_trip_restores_types() -> None:
    df = pd.DataFrame(
        {"s": ["A1", "B2", "A1", None], "i": [5, 6, 5, 7], "f": [1.5, np.nan, 2.25, 3.0]}
    )
    out = df
    for c in df.columns:
        out = get_operator("tokenize", {"prefix": "t_"}).apply(out, c, ctx())
    assert out["s"].iloc[0] == out["s"].iloc[2] != out["s"].iloc[1]
    assert all(str(v).startswith("t_") for v in out["i"])
    back = detokenize_frame(out, ["s", "i", "f"], KEY, prefix="t_")
    assert back["s"].iloc[:3].tolist() == ["A1", "B2", "A1"] and pd.isna(back["s"].iloc[3])
    assert back["i"].dtype == np.int64 and back["i"].tolist() == [5, 6, 5, 7]
    np.testing.assert_array_equal(back["f"].to_numpy(), df["f"].to_numpy())


def test_tokens_bound_to_column_and_key() -> None:
    toks = tokenize_values(["secret"], KEY, "ssn")
    with pytest.raises(CryptoError, match="'phone': 1 token"):
        detokenize(toks, KEY, "phone")
    with pytest.raises(CryptoError, match="failed authentication"):
        detokenize(toks, b"\x02" * 32, "ssn")


def test_reversing_pseudonyms_says_they_are_one_way() -> None:
    pseudo = get_operator("pseudonymize").apply(people(), "id", ctx())
    with pytest.raises(CryptoError, match="one-way, only tokenize can be reversed"):
        detokenize_frame(pseudo, ["id"], KEY)


def test_tampered_tokens_raise_with_row_count() -> None:
    df = pd.DataFrame({"ssn": ["078-05-1120", "219-09-9999", "078-05-1120"]})
    tok = get_operator("tokenize").apply(df, "ssn", ctx())
    t = tok["ssn"].iloc[0]
    flipped = t[:5] + ("A" if t[5] != "A" else "B") + t[6:]
    bad = tok.assign(ssn=[flipped, tok["ssn"].iloc[1], flipped])
    with pytest.raises(CryptoError, match="'ssn': 2 token"):
        detokenize_frame(bad, ["ssn"], KEY)
    garbage = tok.assign(ssn=["not a token!", tok["ssn"].iloc[1], "%%%"])
    with pytest.raises(CryptoError, match="2 token"):
        detokenize_frame(garbage, ["ssn"], KEY)


def test_token_context_param_and_contexts_mapping() -> None:
    df = pd.DataFrame({"a": ["x", "y"]})
    tok = get_operator("tokenize", {"context": "orig"}).apply(df, "a", ctx())
    with pytest.raises(CryptoError):
        detokenize_frame(tok, ["a"], KEY)
    assert detokenize_frame(tok, ["a"], KEY, contexts={"a": "orig"})["a"].tolist() == ["x", "y"]


def test_dictionary_attack_without_the_key_fails() -> None:
    # small domain (4-digit PINs): unkeyed hashes are reversed by enumeration, pseudonyms are not
    import hashlib

    pins = [f"{i:04d}" for i in range(10_000)]
    released = get_operator("pseudonymize").apply(pd.DataFrame({"pin": pins[:50]}), "pin", ctx())
    for guess_key in (b"", b"\x00" * 32, b"veil"):
        table = set(pseudonyms(pins, guess_key)) if guess_key else set()
        table |= {hashlib.sha256(p.encode()).hexdigest()[:20] for p in pins}
        assert not table & set(released["pin"])
    # the key holder re-links every value
    assert set(pseudonyms(pins, KEY)) >= set(released["pin"])


def test_fake_mapping_with_a_known_seed_is_recomputable() -> None:
    # documented caveat: a public seed lets anyone rebuild the fake mapping and test guesses
    df = pd.DataFrame({"name": ["Ann Lee", "Bob Ray"]})
    op = get_operator("fake", {"kind": "name", "seed": 11})
    released = op.apply(df, "name", ctx())["name"]
    guesses = pd.DataFrame({"name": ["Zed Zo", "Bob Ray", "Ann Lee"]})
    rebuilt = get_operator("fake", {"kind": "name", "seed": 11}).apply(guesses, "name", ctx())
    lookup = dict(zip(rebuilt["name"], guesses["name"]))
    assert [lookup[v] for v in released] == ["Ann Lee", "Bob Ray"]
    # keyed instead: another key holder cannot rebuild it
    keyed = get_operator("fake", {"kind": "name"}).apply(df, "name", ctx())["name"]
    other = get_operator("fake", {"kind": "name"}).apply(guesses, "name", ctx(key=b"\x09" * 32))
    wrong = dict(zip(guesses["name"], other["name"]))
    assert [wrong["Ann Lee"], wrong["Bob Ray"]] != keyed.tolist()


def test_every_other_spelling_of_a_token_fails() -> None:
    # base64 decoders ignore the unused low bits of the last character and characters outside
    # the alphabet: the attacker edits a token without touching its ciphertext bytes
    import string

    values = ["a", "ab", "abc", "078-05-1120", "Ann Lee", 12345]
    tokens = tokenize_values(values, KEY, "ssn")
    alphabet = string.ascii_letters + string.digits + "-_"
    edits = 0
    for tok in tokens:
        variants = {tok[:-1] + ch for ch in alphabet}  # every last character
        variants |= {tok[:3] + junk + tok[3:] for junk in ("!", " ", "=", "+", "/", "\n", ".")}
        variants |= {tok + "=", tok + "==", " " + tok, tok + "A", tok[:-1]}
        variants.discard(tok)
        for v in variants:
            edits += 1
            with pytest.raises(CryptoError, match="1 token"):
                detokenize([v], KEY, "ssn")
    assert edits > 6 * 70
    assert detokenize(tokens, KEY, "ssn") == values


@pytest.mark.parametrize("normalize", ["strip", "lower"])
def test_normalized_pseudonyms_join_canonically_equivalent_text(normalize: str) -> None:
    # one name typed on two systems: precomposed (NFC) and decomposed (NFD, macOS file names)
    import unicodedata

    names = ["José Ñúñez", "Zoë Brontë", "한국", "Ångström"]
    nfc = [unicodedata.normalize("NFC", n) for n in names]
    nfd = [unicodedata.normalize("NFD", n) for n in names]
    assert all(a != b for a, b in zip(nfc, nfd))
    df = pd.DataFrame({"name": nfc + [" " + n for n in nfd]})
    op = get_operator("pseudonymize", {"normalize": normalize})
    out = op.apply(df, "name", ctx())["name"].tolist()
    assert out[:4] == out[4:] and len(set(out[:4])) == 4
    # already-NFC text keeps its pseudonym (earlier releases still join)
    plain = [n.strip().lower() if normalize == "lower" else n.strip() for n in nfc]
    assert out[:4] == pseudonyms(plain, KEY)


def test_unnormalized_pseudonyms_hash_the_exact_text() -> None:
    import unicodedata

    nfc, nfd = (unicodedata.normalize(f, "José") for f in ("NFC", "NFD"))
    assert pseudonyms([nfc], KEY) != pseudonyms([nfd], KEY)


def test_documented_linkability_across_columns_and_releases() -> None:
    # docs/operators.md "Which values can be linked": pinned so the table cannot drift
    df = pd.DataFrame({"mother_id": ["M1", "M2"], "child_id": ["M2", "C9"]})

    def run(op: str, params: dict, frame: pd.DataFrame) -> pd.DataFrame:
        for col in frame.columns:
            frame = get_operator(op, params.get(col, {})).apply(frame, col, ctx())
        return frame

    same = run("pseudonymize", {}, df)
    assert same["mother_id"].iloc[1] == same["child_id"].iloc[0]  # linkable by default
    scoped = run("pseudonymize", {"mother_id": {"scope": "m"}, "child_id": {"scope": "c"}}, df)
    assert not set(scoped["mother_id"]) & set(scoped["child_id"])
    tok = run("tokenize", {}, df)
    assert not set(tok["mother_id"]) & set(tok["child_id"])
    assert run("tokenize", {}, df).equals(tok)  # a second release: same tokens
    # token length follows the UTF-8 byte length exactly
    lengths = [len(t) for t in tokenize_values([9, 10, 99999, 100000, "é", "e"], KEY, "x")]
    assert lengths[0] < lengths[1] < lengths[2] < lengths[3] and lengths[4] > lengths[5]


def test_padded_tokens_hide_the_length_and_round_trip() -> None:
    values = ["", "a", "Ann Lee", "x" * 29, 7, 10**12, -3.25, "é" * 14]
    tokens = tokenize_values(values, KEY, "c", pad=32)
    assert len({len(t) for t in tokens}) == 1  # every value fits in one 32-byte block
    assert detokenize(tokens, KEY, "c") == values
    longer = tokenize_values(["x" * 30, "x" * 61], KEY, "c", pad=32)
    assert len(longer[0]) > len(tokens[0]) and len(longer[0]) == len(longer[1])
    # the operator: same value -> same token, unpadded tokens still decrypt
    df = pd.DataFrame({"inc": [9, 10, 99999, 100000, 9]})
    out = get_operator("tokenize", {"pad": 16}).apply(df, "inc", ctx())["inc"]
    assert out.str.len().nunique() == 1 and out.iloc[0] == out.iloc[4]
    assert detokenize_frame(out.to_frame(), ["inc"], KEY)["inc"].tolist() == df["inc"].tolist()
    assert detokenize(tokenize_values([9], KEY, "inc"), KEY, "inc") == [9]


@pytest.mark.parametrize("plain", [b"p", b"ps7", b"ps7\x80\x01", b"pp\x80\x80", b"pq7\x80\x00"])
def test_malformed_padding_inside_a_valid_ciphertext_is_a_bad_token(plain: bytes) -> None:
    import base64

    from veil.deid.operators._tokenize import _cipher

    ct = _cipher(KEY).encrypt(plain, [b"c"])
    token = base64.urlsafe_b64encode(ct).rstrip(b"=").decode()
    with pytest.raises(CryptoError, match="1 token"):
        detokenize([token], KEY, "c")


@pytest.mark.parametrize("pad", [-1, 1.5, True, 5000, "16"])
def test_bad_pad_is_a_config_error(pad: object) -> None:
    with pytest.raises(ConfigError, match="pad"):
        get_operator("tokenize", {"pad": pad})


def test_distinct_binary_values_get_distinct_pseudonyms() -> None:
    # binary ids (a Parquet binary column): bytes that are not UTF-8 used to decode with
    # replacement characters, so b"\xff\x01" and b"\xfe\x01" silently shared one pseudonym
    ids = [b"\xff\x01", b"\xfe\x01", b"\x80", b"\x81", bytes(range(128, 160))]
    df = pd.DataFrame({"id": ids + [b"A1", "A1"]})
    out = get_operator("pseudonymize").apply(df, "id", ctx())["id"].tolist()
    assert len(set(out[:5])) == 5
    assert out[5] == out[6] == pseudonyms(["A1"], KEY)[0]  # UTF-8 bytes read as their text


def test_tokens_of_integers_beyond_int64_round_trip() -> None:
    # a uint64 column (hash ids): 2**64 - 1 crashed detokenize with a bare OverflowError
    for values in ([2**64 - 1, 0, 5], [2**64 - 1, None, 5], [-(2**70), 3]):
        df = pd.DataFrame(
            {
                "h": pd.Series(
                    values, dtype="uint64" if None not in values and min(values) >= 0 else object
                )
            }
        )
        tok = get_operator("tokenize").apply(df, "h", ctx())
        back = detokenize_frame(tok, ["h"], KEY)["h"].tolist()
        assert [None if pd.isna(v) else int(v) for v in back] == values


def test_a_bool_and_a_number_are_two_values() -> None:
    # True == 1 to Python: pd.factorize merged them, so two people shared one pseudonym, and
    # which one depended on the row order
    for cells in ([1, True, "1", 0, False], [True, 1, False, 0, "True"]):
        df = pd.DataFrame({"v": pd.Series(cells, dtype=object)})
        out = get_operator("pseudonymize").apply(df, "v", ctx())["v"].tolist()
        expect = pseudonyms([str(c) if isinstance(c, bool) else c for c in cells], KEY)
        assert out == expect
        tok = get_operator("tokenize").apply(df, "v", ctx())
        assert detokenize_frame(tok, ["v"], KEY)["v"].tolist() == [
            str(c) if isinstance(c, bool) else c for c in cells
        ]
