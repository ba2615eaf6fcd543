"""Integer encoding of quasi-identifiers for Mondrian (numeric, hierarchical, set-valued).

Every quasi-identifier becomes one column of small non-negative integer codes:

* **numeric** columns: the rank of the value among the sorted distinct values, so that a
  median of codes is a median of values and ``vals[hi] - vals[lo]`` is the range of a partition;
* **hierarchical** categorical columns: the position of the leaf in a depth-first order of the
  generalization tree, so that the leaves under any node form one contiguous code range, the
  lowest common ancestor of a partition is the lowest common ancestor of its smallest and largest
  code, and the children of a node split that range at known boundaries;
* **set** categorical columns (no hierarchy): the rank of the value as a string, split like a
  numeric column and rendered as the set ``{a,b}`` of the values a partition holds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from veil.errors import ConfigError, InputError
from veil.schema._hierarchy import (
    Hierarchy,
    as_str_values,
    lookup_texts,
    missing_from_hierarchy,
)

__all__ = ["Dim", "HierTree", "encode_qis", "numeric_offsets", "tree_from_hierarchy"]

Kind = Literal["numeric", "hier", "set"]


@dataclass
class HierTree:
    """A generalization hierarchy as a tree whose leaves have contiguous codes.

    Attributes
    ----------
    leaves : list of str
        Leaf labels in code (depth-first) order.
    labels : list of str
        Label of every node (leaves are nodes ``0 .. L-1``).
    nleaves : numpy.ndarray
        Number of leaves under every node.
    child_starts : list of numpy.ndarray
        For every node, the first leaf code of each child (sorted); empty for leaves.
    node_at : numpy.ndarray
        ``(depth + 1, L)``: node id of every leaf's ancestor at each level (level 0: itself).
    lca_table : numpy.ndarray or None
        ``(L, L)`` lowest common ancestors, precomputed when ``L <= 1024``.
    """

    leaves: list[str]
    labels: list[str]
    nleaves: np.ndarray
    child_starts: list[np.ndarray]
    node_at: np.ndarray
    lca_table: np.ndarray | None = None
    code_of: dict[str, int] = field(default_factory=dict)

    def lca(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Node ids of the lowest common ancestors of the leaf codes ``lo`` and ``hi``."""
        if self.lca_table is not None:
            return self.lca_table[lo, hi]
        out = np.full(np.shape(lo), self.node_at[-1, 0], dtype=np.int64)
        for lvl in range(self.node_at.shape[0] - 1, -1, -1):
            row = self.node_at[lvl]
            same = row[lo] == row[hi]
            out = np.where(same, row[lo], out)
        return out


def _leaf_paths(hierarchy: Any) -> tuple[list[str], list[list[str]]]:
    """Return the leaves and, per leaf, its ancestors from level 1 to the top."""
    if isinstance(hierarchy, Mapping):
        hierarchy = Hierarchy.from_mapping(hierarchy)
    elif isinstance(hierarchy, (str, Path)):
        hierarchy = Hierarchy.from_file(hierarchy)
    if not all(hasattr(hierarchy, a) for a in ("values", "height", "generalize")):
        raise ConfigError(
            f"a hierarchy must be a veil.schema.Hierarchy, a CSV path or a mapping, "
            f"not {type(hierarchy).__name__}"
        )
    leaves = [str(v) for v in hierarchy.values]
    levels = [
        [str(x) for x in hierarchy.generalize(leaves, lvl)] for lvl in range(1, hierarchy.height)
    ]
    paths = [[lv[i] for lv in levels] for i in range(len(leaves))]
    return leaves, paths


def tree_from_hierarchy(hierarchy: Any, name: str = "") -> HierTree:
    """Build a :class:`HierTree` from a Hierarchy, a CSV path or a ``{leaf: [ancestors]}`` mapping.

    Nodes are identified by their full path from the top, so equal labels under different
    parents stay distinct.  Children keep the order in which they first appear.  A virtual
    root ``*`` is added when the top level has several nodes.
    """
    leaves, paths = _leaf_paths(hierarchy)
    if not leaves:
        raise ConfigError(f"the hierarchy of {name!r} is empty")
    if len(set(leaves)) != len(leaves):
        raise ConfigError(f"the hierarchy of {name!r} lists a value twice")
    depth = max((len(p) for p in paths), default=0)
    # Pad ragged paths by repeating their top, then add a virtual root when needed.
    full = [list(p) + [p[-1] if p else leaf] * (depth - len(p)) for leaf, p in zip(leaves, paths)]
    tops = {f[-1] for f in full} if depth else set(leaves)
    if depth == 0 or len(tops) > 1:
        full = [f + ["*"] for f in full]
        depth += 1
    # Node keys: tuple of labels from the top down to that level; leaves keyed by themselves.
    first_seen: dict[tuple[str, ...], int] = {}
    sort_keys = []
    for i, f in enumerate(full):
        key_parts = []
        for lvl in range(depth - 1, -1, -1):
            node_key = tuple(f[lvl:][::-1])
            first_seen.setdefault(node_key, len(first_seen))
            key_parts.append(first_seen[node_key])
        key_parts.append(i)
        sort_keys.append(tuple(key_parts))
    order = sorted(range(len(leaves)), key=sort_keys.__getitem__)
    leaves = [leaves[i] for i in order]
    full = [full[i] for i in order]
    n_leaves = len(leaves)

    labels = list(leaves)
    nleaves = [1] * n_leaves
    starts = [np.empty(0, dtype=np.int64) for _ in range(n_leaves)]
    # node id per level per leaf; level 0 = the leaf itself.
    node_at = np.empty((depth + 1, n_leaves), dtype=np.int64)
    node_at[0] = np.arange(n_leaves)
    for lvl in range(1, depth + 1):
        ids: dict[tuple[str, ...], int] = {}
        for i, f in enumerate(full):
            key = tuple(f[lvl - 1 :][::-1])
            if key not in ids:
                ids[key] = len(labels)
                labels.append(f[lvl - 1])
                nleaves.append(0)
                starts.append(np.empty(0, dtype=np.int64))
            node_at[lvl, i] = ids[key]
        # Leaves are in depth-first order: every node's leaves are one contiguous run, and
        # each child starts where its level-(lvl-1) node id first appears.
        row = node_at[lvl]
        _, first, count = np.unique(row, return_index=True, return_counts=True)
        for f0, c0 in zip(first.tolist(), count.tolist()):
            nleaves[int(row[f0])] = c0
        below = node_at[lvl - 1]
        child_first = np.flatnonzero(np.r_[True, below[1:] != below[:-1]])
        parents = row[child_first]
        bounds = np.flatnonzero(np.r_[True, parents[1:] != parents[:-1]])
        for chunk in np.split(child_first, bounds[1:]):
            starts[int(row[chunk[0]])] = chunk.astype(np.int64)
    tree = HierTree(
        leaves=leaves,
        labels=labels,
        nleaves=np.asarray(nleaves, dtype=np.int64),
        child_starts=starts,
        node_at=node_at,
        code_of={v: i for i, v in enumerate(leaves)},
    )
    if n_leaves <= 1024:
        grid = np.arange(n_leaves)
        tree.lca_table = tree.lca(grid[:, None], grid[None, :])
    return tree


@dataclass
class Dim:
    """One encoded quasi-identifier.

    ``width(lo, hi)`` is the normalized certainty penalty of a partition whose smallest and
    largest codes are ``lo`` and ``hi`` (for ``set`` columns an upper bound: the code range).
    """

    name: str
    kind: Kind
    values: np.ndarray  # numeric: sorted distinct values; categorical: labels in code order
    norm: list[float] = field(default_factory=list)  # numeric: normalized position per code
    tree: HierTree | None = None
    wtable: np.ndarray | None = None  # hier: (L, L) NCP of the LCA of two leaves, if small
    integral: bool = False
    size: int = field(init=False)  # number of codes (distinct values, or hierarchy leaves)
    _wlist: list[list[float]] | None = field(init=False, default=None, repr=False)

    def __post_init__(self) -> None:
        self.size = len(self.values)
        if self.wtable is not None and self.size <= 256:
            self._wlist = self.wtable.tolist()

    def width(self, lo: int, hi: int) -> float:
        """Normalized width of the code range ``[lo, hi]``."""
        if self.kind == "numeric":
            return self.norm[hi] - self.norm[lo]
        if self.kind == "hier":
            if self._wlist is not None:
                return self._wlist[lo][hi]
            if self.wtable is not None:
                return float(self.wtable[lo, hi])
            tree = self.tree
            node = int(tree.lca(np.asarray(lo), np.asarray(hi)))  # type: ignore[union-attr]
            return (int(tree.nleaves[node]) - 1) / max(len(tree.leaves) - 1, 1)  # type: ignore[union-attr]
        return (hi - lo) / (self.size - 1) if self.size > 1 else 0.0


def _is_numeric(s: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)


def numeric_offsets(vals: np.ndarray) -> np.ndarray:
    """Distances ``vals - vals[0]`` of sorted distinct values, finite and scaled by ``2**-s``.

    NCP only uses ratios of these distances, so any common power-of-two factor is harmless
    (and exact).  Integers: the difference is taken modulo ``2**64`` in ``uint64``, which is
    exact for every ``int64`` / ``uint64`` pair (``2**63 - 1 - (-2**63)`` wrapped around in
    ``int64``).  Floats: ``vals - vals[0]`` overflows to ``inf`` when the values span more than
    the largest double (``-1e308`` and ``1e308``); then ``vals / 2 - vals[0] / 2`` is used,
    which equals the rounded true difference halved (halving is exact above the subnormals,
    and rounding commutes with a power-of-two scaling), so ratios are those of the exact
    distances, rounded once, whatever the magnitude of the data.

    Examples
    --------
    >>> numeric_offsets(np.array([-1e308, 0.0, 1e308])).tolist()
    [0.0, 5e+307, 1e+308]
    >>> numeric_offsets(np.array([-(2**63), 2**63 - 1], dtype=np.int64)).tolist()
    [0.0, 1.8446744073709552e+19]
    """
    if vals.size == 0:
        return np.zeros(0, dtype=np.float64)
    if vals.dtype.kind in "iu":
        u = vals.view(np.uint64) if vals.dtype.kind == "i" else vals.astype(np.uint64)
        return (u - u[0]).astype(np.float64)
    v = np.asarray(vals, dtype=np.float64)
    with np.errstate(over="ignore"):
        off = v - v[0]
    if not np.isfinite(off[-1]):
        off = v * 0.5 - v[0] * 0.5  # |v| <= max double: the halves differ by at most that
    return off


def _encode_numeric(name: str, s: pd.Series) -> tuple[Dim, np.ndarray]:
    if s.isna().any():
        raise InputError(f"quasi-identifier {name!r} has missing values")
    if pd.api.types.is_complex_dtype(s.dtype):
        raise InputError(
            f"quasi-identifier {name!r} is complex: Mondrian needs real numbers (or text)"
        )
    if pd.api.types.is_unsigned_integer_dtype(s.dtype):
        arr = s.to_numpy(dtype=np.uint64)  # exact; as int64, values >= 2**63 turned negative
        exact_int = True
    elif pd.api.types.is_integer_dtype(s.dtype):
        arr = s.to_numpy(dtype=np.int64)  # exact, even beyond 2**53
        exact_int = True
    else:
        exact_int = False
        arr = s.to_numpy(dtype=np.float64)
        if not np.all(np.isfinite(arr)):
            bad = "NaN" if np.isnan(arr).any() else "infinite"
            raise InputError(
                f"quasi-identifier {name!r} has {bad} values: Mondrian needs finite numbers"
            )
    vals, codes = np.unique(arr, return_inverse=True)
    # Offsets from the minimum first (exact for large integers, no overflow), then normalize.
    offsets = numeric_offsets(vals)
    span = float(offsets[-1])
    norm = (offsets / span).tolist() if span > 0 else [0.0] * vals.size
    integral = exact_int or bool(np.all(vals == np.round(vals)))
    dim = Dim(name, "numeric", vals, norm=norm, integral=integral)
    return dim, codes.reshape(-1).astype(np.int32)


def _encode_categorical(name: str, s: pd.Series, hierarchy: Any) -> tuple[Dim, np.ndarray]:
    if s.isna().any():
        raise InputError(f"quasi-identifier {name!r} has missing values")
    # Strings of the distinct values (True and 1 are two: factorize_typed), by the hierarchy's
    # matching rule (17.0 -> "17"); distinct values with the same string (17 and "17") become
    # one value, as the release writes them.
    raw_codes, ustr_arr = as_str_values(s)
    ustr = [str(u) for u in ustr_arr]
    if hierarchy is None:
        order = np.argsort(np.asarray(ustr, dtype=object), kind="stable")
        rank = np.empty(len(ustr), dtype=np.int32)
        rank[order] = np.arange(len(ustr), dtype=np.int32)
        values = np.asarray([ustr[i] for i in order], dtype=object)
        return Dim(name, "set", values), rank[raw_codes]
    tree = hierarchy if isinstance(hierarchy, HierTree) else tree_from_hierarchy(hierarchy, name)
    # leaf codes matched as the lattice search matches (Hierarchy.encode); the release
    # writes the leaf's label
    codes, _ = lookup_texts(tree.code_of, ustr)
    missing = [u for u, c in zip(ustr, codes, strict=True) if c < 0]
    if missing:
        raise InputError(missing_from_hierarchy(missing, name))
    lut = np.asarray(codes, dtype=np.int32)
    n_leaves = len(tree.leaves)
    denom = max(n_leaves - 1, 1)
    wtable = None
    if tree.lca_table is not None:
        wtable = (tree.nleaves[tree.lca_table] - 1) / denom
    dim = Dim(name, "hier", np.asarray(tree.leaves, dtype=object), tree=tree, wtable=wtable)
    return dim, lut[raw_codes]


def encode_qis(
    df: pd.DataFrame,
    qis: Sequence[str],
    hierarchies: Mapping[str, Any] | None = None,
) -> tuple[list[Dim], np.ndarray]:
    """Encode the quasi-identifiers of ``df``.

    A column with a hierarchy is hierarchical categorical; otherwise a numeric column gets
    intervals and any other column a set of values.  Hierarchies of columns that are not
    quasi-identifiers are ignored.  Returns the dimensions and an ``(n, d)``
    C-contiguous ``int32`` code matrix.
    """
    hierarchies = dict(hierarchies or {})  # hierarchies of other columns are ignored
    dims: list[Dim] = []
    cols: list[np.ndarray] = []
    for name in qis:
        s = df[name]
        h = hierarchies.get(name)
        if h is None and _is_numeric(s):
            dim, codes = _encode_numeric(name, s)
        else:
            dim, codes = _encode_categorical(name, s, h)
        dims.append(dim)
        cols.append(codes)
    X = np.ascontiguousarray(np.column_stack(cols).astype(np.int32, copy=False))
    return dims, X
