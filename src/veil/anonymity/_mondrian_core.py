"""The Mondrian partitioning loop on integer codes (LeFevre, DeWitt and Ramakrishnan, 2006).

K. LeFevre, D. J. DeWitt and R. Ramakrishnan, "Mondrian Multidimensional K-Anonymity",
ICDE 2006.  Top-down greedy partitioning: a partition is cut on the quasi-identifier with the
widest normalized range at its median, as long as every resulting part satisfies all privacy
models; otherwise the next widest dimension is tried, and a partition that no dimension can cut
becomes an equivalence class.

The loop uses an explicit stack of row-index arrays (no recursion) and only numpy operations
per partition: ``np.partition`` for the median (no sort), boolean masks for the cut, and for
hierarchical dimensions ``np.searchsorted`` on the children's code boundaries (a multiway cut
into the children of the lowest common ancestor, small children pooled together).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from veil.anonymity._mondrian_encode import Dim

__all__ = ["GroupCheck", "partition"]

#: ``check(rows, gid, ngroups) -> bool[ngroups]``: does each candidate part satisfy the models?
#: ``rows`` are the row indices of the parent partition, ``gid[i]`` the part of ``rows[i]``.
GroupCheck = Callable[[np.ndarray, np.ndarray, int], np.ndarray]


def _binary_cut(col: np.ndarray, k: int, relaxed: bool) -> np.ndarray | None:
    """Left-side mask of a median cut of the code column ``col``, or None if no cut exists."""
    m = col.size
    h = (m - 1) // 2
    med = np.partition(col, h)[h]
    lt = col < med
    nlt = int(np.count_nonzero(lt))
    if relaxed:
        # Records equal to the median go to whichever side keeps the halves balanced.
        target = m // 2
        eq = np.flatnonzero(col == med)
        need = target - nlt
        if need > 0:
            lt[eq[:need]] = True
            nlt = target
        left = nlt
        if left < k or m - left < k:
            return None
        return lt
    le = col <= med
    nle = int(np.count_nonzero(le))
    best: tuple[int, np.ndarray] | None = None
    for left, mask in ((nle, le), (nlt, lt)):
        if k <= left <= m - k:
            gap = abs(2 * left - m)
            if best is None or gap < best[0]:
                best = (gap, mask)
    return None if best is None else best[1]


def _set_cut(col: np.ndarray, counts: np.ndarray, lo: int, k: int) -> np.ndarray | None:
    """Left-side mask of the cheapest two-way split of a set column's values, or None.

    With the distinct values sorted by frequency (most frequent first), the left part takes
    the ``i`` most frequent values; ``i`` minimizes the set NCP of the two parts,
    ``n_L (|L| - 1) + n_R (|R| - 1)``, among the splits leaving ``k`` rows on each side.
    """
    if counts.size <= 64:
        # Tiny domains: plain Python beats a dozen numpy calls on 64-element arrays.
        cl = counts.tolist()
        order_l = sorted((c for c in range(len(cl)) if cl[c]), key=lambda c: -cl[c])
        m = len(order_l)
        n = sum(cl)
        best_i, best_cost, acc = -1, None, 0
        for i in range(1, m):
            acc += cl[order_l[i - 1]]
            if acc >= k and n - acc >= k:
                cost = acc * (i - 1) + (n - acc) * (m - i - 1)
                if best_cost is None or cost < best_cost:
                    best_i, best_cost = i, cost
        if best_i < 0:
            return None
        take = np.zeros(counts.size, dtype=bool)
        take[order_l[:best_i]] = True
        return take[col - lo] if lo else take[col]
    present = np.flatnonzero(counts)
    m = present.size
    order = present[np.argsort(-counts[present], kind="stable")]
    n_left = np.cumsum(counts[order])[:-1]
    n = int(n_left[-1] + counts[order[-1]])
    i = np.arange(1, m)
    cost = n_left * (i - 1) + (n - n_left) * (m - i - 1)
    ok = (n_left >= k) & (n - n_left >= k)
    if not ok.any():
        return None
    best = int(np.argmin(np.where(ok, cost, np.iinfo(np.int64).max)))
    take = np.zeros(counts.size, dtype=bool)
    take[order[: best + 1]] = True
    return take[col - lo]


def _hier_groups(dim: Dim, col: np.ndarray, lo: int, hi: int) -> tuple[np.ndarray, int]:
    """Child of the lowest common ancestor that every code of ``col`` falls under."""
    tree = dim.tree
    assert tree is not None
    if tree.lca_table is not None:
        node = int(tree.lca_table[lo, hi])
    else:
        node = int(tree.lca(np.asarray(lo), np.asarray(hi)))
    starts = tree.child_starts[node]
    gid = np.searchsorted(starts, col, side="right") - 1
    return gid, starts.size


def _pool_small(
    rows: np.ndarray, gid: np.ndarray, ngroups: int, k: int, check: GroupCheck | None
) -> tuple[np.ndarray, int] | None:
    """Keep the children that pass the models; pool the others (with the smallest if needed).

    Returns the new part id of every row and the number of parts (>= 2), or None.
    """
    counts = np.bincount(gid, minlength=ngroups).tolist()
    if check is None:
        ok = [c >= k for c in counts]
    else:
        ok = (np.asarray(counts) >= k).tolist()
        if any(ok):
            ok = (np.asarray(ok) & check(rows, gid, ngroups)).tolist()
    good = [i for i in range(ngroups) if ok[i]]
    bad = [i for i in range(ngroups) if counts[i] and not ok[i]]
    if not good or (len(good) == 1 and not bad):
        return None
    remap = np.zeros(ngroups, dtype=np.int16)
    remap[good] = np.arange(len(good))
    n_out = len(good)
    if not bad:
        return remap[gid], n_out
    remap[bad] = n_out
    pooled = remap[gid]
    pooled_n = sum(counts[i] for i in bad)
    if pooled_n >= k and (check is None or check(rows, pooled, n_out + 1)[n_out]):
        return pooled, n_out + 1
    if len(good) == 1:
        return None
    smallest = min(good, key=counts.__getitem__)
    remap[bad] = remap[smallest]
    pooled = remap[gid]
    if check is not None and not check(rows, pooled, n_out)[remap[smallest]]:
        return None
    return pooled, n_out


def partition(
    X: np.ndarray,
    dims: Sequence[Dim],
    k: int,
    *,
    relaxed: bool = False,
    check: GroupCheck | None = None,
    members: list[np.ndarray] | None = None,
) -> tuple[np.ndarray, int]:
    """Partition the rows of the code matrix ``X`` (``n x d``) into Mondrian classes.

    Parameters
    ----------
    X : numpy.ndarray
        Integer codes, one column per dimension of ``dims``.
    dims : sequence of Dim
        The encoded quasi-identifiers.
    k : int
        Minimum class size.
    relaxed : bool
        Relaxed Mondrian: records equal to the median may go to either side, so every cut
        halves the partition exactly (parts may overlap in range).  Strict Mondrian otherwise.
    check : callable, optional
        Extra models (l-diversity, t-closeness, ...) evaluated on candidate parts; k is always
        enforced through the part sizes.
    members : list, optional
        When given, the row indices of each class are appended to it, in class order.

    Returns
    -------
    labels : numpy.ndarray
        Class id of every row (``0 .. n_classes - 1``, in depth-first order).
    n_classes : int
    """
    n, d = X.shape
    labels = np.empty(n, dtype=np.int64)
    n_classes = 0
    # Rows of a partition are kept as a (d, m) code block: per-QI codes are contiguous, so
    # min/max/partition/bincount run on contiguous memory.
    stack: list[tuple[np.ndarray, np.ndarray]] = [(np.arange(n), np.ascontiguousarray(X.T))]
    min_split = 2 * k
    width = [dim.width for dim in dims]
    set_dims = [j for j in range(d) if dims[j].kind == "set"]
    set_sizes = [dims[j].size for j in set_dims]
    set_starts = np.concatenate(([0], np.cumsum(set_sizes)[:-1])).astype(np.int64)
    set_off = set_starts.astype(X.dtype)[:, None]
    set_total = int(sum(set_sizes))
    packed = 0 < set_total <= 4096
    while stack:
        rows, sub = stack.pop()
        if rows.size < min_split:
            labels[rows] = n_classes
            n_classes += 1
            if members is not None:
                members.append(rows)
            continue
        lo = sub.min(axis=1).tolist()
        hi = sub.max(axis=1).tolist()
        widths = [width[j](lo[j], hi[j]) for j in range(d)]
        set_counts: dict[int, tuple[np.ndarray, int]] = {}
        if set_dims and packed:
            # One bincount for all set columns (codes shifted into disjoint ranges).
            allc = np.bincount((sub[set_dims] + set_off).ravel(), minlength=set_total)
            distinct = np.add.reduceat(allc > 0, set_starts).tolist()
            for t, j in enumerate(set_dims):
                if hi[j] > lo[j]:
                    a = set_starts[t]
                    set_counts[j] = (allc[a : a + dims[j].size], 0)
                    widths[j] = (distinct[t] - 1) / (dims[j].size - 1)
        else:
            for j in set_dims:
                if hi[j] > lo[j]:
                    counts = np.bincount(sub[j] - lo[j], minlength=hi[j] - lo[j] + 1)
                    set_counts[j] = (counts, lo[j])
                    widths[j] = (np.count_nonzero(counts) - 1) / (dims[j].size - 1)
        order = sorted((j for j in range(d) if widths[j] > 0), key=lambda j: -widths[j])
        children: list[tuple[np.ndarray, np.ndarray]] | None = None
        for j in order:
            col = sub[j]
            if dims[j].kind == "hier":
                gid, ng = _hier_groups(dims[j], col, lo[j], hi[j])
                pooled = _pool_small(rows, gid, ng, k, check)
                if pooled is None:
                    continue
                gid, ng = pooled
                if ng == 2:
                    mask = gid == 0
                    inv = ~mask
                    children = [(rows[mask], sub[:, mask]), (rows[inv], sub[:, inv])]
                    break
                sort = np.argsort(gid, kind="stable")
                bounds = np.searchsorted(gid[sort], np.arange(1, ng))
                children = [(rows[p], sub[:, p]) for p in np.split(sort, bounds)]
                break
            mask = None
            if j in set_counts:
                # Sets: the split the set NCP rewards first, then the median cut.
                mask = _set_cut(col, set_counts[j][0], set_counts[j][1], k)
                if mask is not None and check is not None:
                    if not check(rows, (~mask).astype(np.int64), 2).all():
                        mask = None
            if mask is None:
                mask = _binary_cut(col, k, relaxed)
                if mask is None:
                    continue
                if check is not None and not check(rows, (~mask).astype(np.int64), 2).all():
                    continue
            inv = ~mask
            children = [(rows[mask], sub[:, mask]), (rows[inv], sub[:, inv])]
            break
        if children is None:
            labels[rows] = n_classes
            n_classes += 1
            if members is not None:
                members.append(rows)
        else:
            stack.extend(reversed(children))
    return labels, n_classes
