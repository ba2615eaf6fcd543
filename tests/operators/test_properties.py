"""Property tests (hypothesis) for the operators' invariants."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from _helpers import KEY, ctx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veil.deid.operators import (
    detokenize,
    get_operator,
    parse_condition,
    pseudonyms,
    tokenize_values,
)
from veil.deid.operators._bins import interval_labels
from veil.deid.operators._mask import mask_email, mask_partial, mask_phone
from veil.schema import Hierarchy

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# fewer examples where each one runs many operators on a frame
FEW = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
texts = st.text(min_size=0, max_size=30)


@SETTINGS
@given(st.lists(texts, min_size=1, max_size=40))
def test_pseudonyms_consistent_and_distinct(values: list[str]) -> None:
    p = pseudonyms(values, KEY)
    q = pseudonyms(list(reversed(values)), KEY)
    assert p == list(reversed(q))  # consistent
    mapping = dict(zip(values, p))
    assert len(set(mapping.values())) == len(mapping)  # distinct inputs -> distinct pseudonyms


@SETTINGS
@given(
    st.lists(st.one_of(texts, st.integers(-(2**62), 2**62)), min_size=1, max_size=20),
    st.text(max_size=10),
)
def test_tokenize_round_trip(values: list[object], column: str) -> None:
    tokens = tokenize_values(values, KEY, column, prefix="t_")
    assert detokenize(tokens, KEY, column, prefix="t_") == values
    assert all(t.startswith("t_") and "=" not in t for t in tokens)


@SETTINGS
@given(texts, st.integers(0, 5), st.integers(0, 5), st.sampled_from("*#x"))
def test_partial_and_format_masks_keep_length(text: str, a: int, b: int, c: str) -> None:
    assert len(mask_partial(text, a, b, c)) == len(text)
    assert len(mask_email(text, a, c)) == len(text)
    assert len(mask_phone(text, b, c)) == len(text)
    masked = mask_partial(text, a, b, c)
    shown = sum(1 for x, y in zip(text, masked) if x == y and y != c)
    assert shown <= a + b


@SETTINGS
@given(st.lists(st.one_of(st.none(), texts), min_size=1, max_size=30), st.integers(1, 12))
def test_mask_operator_lengths(values: list[str | None], length: int) -> None:
    df = pd.DataFrame({"v": pd.Series(values, dtype=object)})
    full = get_operator("mask").apply(df, "v", ctx())["v"]
    fixed = get_operator("mask", {"length": length}).apply(df, "v", ctx())["v"]
    for orig, f, g in zip(values, full, fixed):
        if orig is None:
            assert pd.isna(f) and pd.isna(g)
        else:
            assert f == "*" * len(orig) and g == "*" * length


frames = st.lists(
    st.tuples(
        st.one_of(st.none(), st.floats(-1e6, 1e6, allow_nan=False)),
        st.integers(0, 120),
        st.sampled_from(["F", "M", "X"]),
        texts,
    ),
    min_size=3,
    max_size=40,
).map(
    lambda rows: pd.DataFrame(rows, columns=["x", "age", "sex", "t"]).set_index(
        pd.Index(np.arange(len(rows)) * 7 + 3)
    )
)

PARAMS = [
    ("mask", {"keep_first": 1}, "t"),
    ("redact", {}, "t"),
    ("pseudonymize", {}, "t"),
    ("tokenize", {}, "sex"),
    ("generalize", {"bins": 3}, "age"),
    ("generalize", {"split": "median"}, "age"),
    ("generalize", {"keep": 1}, "t"),
    ("top_bottom_code", {"top_percentile": 90}, "age"),
    ("noise", {"scale": 0.1, "relative": True}, "x"),
    ("round", {"significant": 2}, "x"),
    ("resample", {}, "sex"),
    ("suppress", {"condition": "age < 30 or sex == 'X'"}, None),
    ("rename_columns", {}, None),
    ("drop", {}, "x"),
    ("fake", {"kind": "city", "seed": 1}, "sex"),
]


@FEW
@given(frames)
def test_input_never_mutated(df: pd.DataFrame) -> None:
    before = df.copy(deep=True)
    for name, params, column in PARAMS:
        out = get_operator(name, params).apply(df, column, ctx())
        pd.testing.assert_frame_equal(df, before)
        if name not in ("suppress",):
            assert len(out) == len(df) and out.index.equals(df.index)


@SETTINGS
@given(
    st.lists(st.floats(0, 120, allow_nan=False), min_size=1, max_size=50),
    st.lists(st.floats(1, 30), min_size=1, max_size=5),
    st.booleans(),
)
def test_generalized_values_come_from_the_bins(
    values: list[float], widths: list[float], right: bool
) -> None:
    edges = np.concatenate([[0.0], np.cumsum(widths)])
    edges[-1] = max(edges[-1], 120.0)
    op = get_operator("generalize", {"bins": edges.tolist(), "right": right})
    out = op.apply(pd.DataFrame({"v": values}), "v", ctx())["v"]
    labels = interval_labels(edges, right)
    assert set(out) <= set(labels)
    idx = out.map(labels.index).to_numpy()
    # each value lies in its interval
    v = np.asarray(values)
    assert ((edges[idx] <= v) & (v <= edges[idx + 1])).all()


AGE_CSV = Path(__file__).resolve().parents[2] / "datasets" / "adult_hierarchies" / "age.csv"
AGE_HIERARCHY = Hierarchy.from_csv(AGE_CSV)


@FEW
@given(
    st.lists(st.sampled_from([int(v) for v in AGE_HIERARCHY.values]), min_size=1, max_size=50),
    st.integers(0, 6),
)
def test_generalized_values_come_from_the_hierarchy(ages: list[int], level: int) -> None:
    out = get_operator("generalize", {"hierarchy": str(AGE_CSV), "level": level}).apply(
        pd.DataFrame({"a": ages}), "a", ctx()
    )["a"]
    frame = AGE_HIERARCHY.to_frame()
    allowed = dict(zip(frame.iloc[:, 0].astype(str), frame.iloc[:, level]))
    assert out.tolist() == [allowed[str(a)] for a in ages]
    assert set(out) <= set(frame.iloc[:, level])


@FEW
@given(frames, st.integers(0, 120), st.sampled_from(["<", "<=", ">", ">=", "==", "!="]))
def test_suppress_matches_pandas_query(df: pd.DataFrame, t: int, op: str) -> None:
    mask = parse_condition(f"age {op} {t} and sex in ['F', 'X']").evaluate(df)
    expected = df.query(f"age {op} {t} and sex in ['F', 'X']").index
    assert df.index[mask].equals(expected)


phone_like = st.text(alphabet="0123456789+-() .x", max_size=25) | st.text(max_size=20)


@SETTINGS
@given(
    st.lists(phone_like, min_size=1, max_size=30),
    st.integers(0, 6),
    st.integers(0, 6),
    st.booleans(),
)
def test_vectorized_masks_equal_scalar_masks(values: list[str], a: int, b: int, cc: bool) -> None:
    from veil.deid.operators._vecmask import partial_matrix, phone_matrix, vectorized

    def part(t: str) -> str:
        return mask_partial(t, a, b, "*")

    def phone(t: str) -> str:
        return mask_phone(t, b, "#", cc)

    got = vectorized(values, lambda m, n: partial_matrix(m, n, a, b, ord("*")), part)
    assert list(got) == [part(v) for v in values]
    got = vectorized(values, lambda m, n: phone_matrix(m, n, b, ord("#"), cc), phone)
    assert list(got) == [phone(v) for v in values]
    # strings without NUL characters and at most 64 long never take the scalar path
    plain = [v for v in values if "\x00" not in v]
    got = vectorized(plain, lambda m, n: phone_matrix(m, n, b, ord("#"), cc), lambda t: "\x00")
    assert list(got) == [phone(v) for v in plain]
