"""The hierarchy tree behind Mondrian's categorical cuts, against brute force."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.anonymity._mondrian import mondrian
from veil.anonymity._mondrian_encode import tree_from_hierarchy
from veil.schema import Hierarchy


@st.composite
def hierarchies(draw):
    n = draw(st.integers(1, 25))
    mapping = {}
    for i in range(n):
        mid = draw(st.sampled_from("abcd"))
        top = draw(st.sampled_from("XY"))
        # Parent labels are functions of the child (a tree): mid depends on top too.
        mapping[f"v{i}"] = [f"{top}{mid}", top]
    return mapping


@settings(max_examples=40, deadline=None)
@given(mapping=hierarchies(), data=st.data())
def test_tree_matches_brute_force(mapping, data):
    tree = tree_from_hierarchy(mapping)
    leaves = tree.leaves
    assert sorted(leaves) == sorted(mapping)
    paths = {v: [*mapping[v], "*"] for v in leaves}
    tops = {p[1] for p in mapping.values()}
    for i in range(len(leaves)):
        j = data.draw(st.integers(0, len(leaves) - 1))
        a, b = paths[leaves[i]], paths[leaves[j]]
        if i == j:
            expect, members = leaves[i], [leaves[i]]
        elif a[0] == b[0]:
            expect, members = a[0], [v for v in leaves if paths[v][0] == a[0]]
        elif a[1] == b[1]:
            expect, members = a[1], [v for v in leaves if paths[v][1] == a[1]]
        else:
            expect, members = "*", list(leaves)
        node = int(tree.lca(np.array(min(i, j)), np.array(max(i, j))))
        if expect == "*" and len(tops) == 1:
            expect = a[1]  # the single top is the root
        assert tree.labels[node] == expect
        assert tree.nleaves[node] == len(members)
        # Leaves under a node are one contiguous code range.
        codes = sorted(leaves.index(v) for v in members)
        assert codes == list(range(codes[0], codes[0] + len(codes)))


def test_virtual_root_for_several_tops():
    h = Hierarchy.from_mapping({"a": ["X"], "b": ["X"], "c": ["Y"], "d": ["Y"]})
    df = pd.DataFrame({"c": ["a", "b", "c", "d"] * 2, "n": range(8)})
    res = mondrian(df, ["c"], 4, hierarchies={"c": h})
    assert res.data["c"].tolist() == ["X", "X", "Y", "Y"] * 2
    res8 = mondrian(df, ["c"], 8, hierarchies={"c": h})
    assert set(res8.data["c"]) == {"*"}  # the added root above X and Y
