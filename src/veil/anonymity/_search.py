"""Optimal and time-budgeted search of the generalization lattice (full-domain recoding).

The search combines the ideas of OLA (El Emam et al., JAMIA 2009) and Flash (Kohlmayer et
al., PASSAT 2012):

* **predictive tagging** by monotonicity: a node whose monotone privacy models fail tags all its
  predecessors (more specific nodes) as failing; when every model is monotone, an anonymous node
  tags all its successors as anonymous;
* **greedy upward paths**: from the first unresolved node, walk up the lattice through the
  cheapest successor until an anonymous node is found, so one walk resolves many nodes and
  gives an early upper bound on the objective;
* **roll-up**: the classes of a node are computed from the cached classes of a more specific
  node, in time proportional to the number of classes, never rows;
* **best-first order with bounds**: nodes are visited by increasing static lower bound of the
  objective; the search stops when no remaining node can beat the best anonymous node, and a
  node whose dynamic lower bound cannot win prunes all its successors.

Ties are broken deterministically: smaller objective (relative tolerance 1e-9), then smaller sum
of levels, then the lexicographically smallest level vector.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from veil.anonymity._lattice import ClassTable, EncodedTable
from veil.anonymity._models import Evaluation, PrivacyModel
from veil.anonymity._objectives import Objective
from veil.errors import ConfigError, UnsatisfiableError

__all__ = ["SearchOutcome", "LatticeSearch", "MAX_OPTIMAL_NODES"]

MAX_OPTIMAL_NODES = 2_000_000
#: Lattices up to this many nodes get Python-list copies of the node arrays.
_LIST_NODES = 300_000
#: Conservative (low) estimate of the seconds per node and QI spent building the node arrays
#: of :meth:`LatticeSearch.optimal` (about 1.5 s for 1.95M nodes x 9 QIs on a shared 2-core
#: machine, i.e. ~85 ns); under a deadline the search is skipped when this estimate exceeds
#: the time left.
SETUP_SECONDS_PER_CELL = 4e-8
_UNKNOWN, _ANON, _NOT, _PRUNED = 0, 1, -1, 2
_BIG = np.iinfo(np.int64).max


@dataclass
class SearchOutcome:
    """Chosen node of a lattice search."""

    node: tuple[int, ...]
    table: ClassTable
    evaluation: Evaluation
    value: float
    n_checked: int
    n_total: int
    optimal: bool


class _Rows:
    """``rows[i]`` is row ``i`` of a 2-D array as a list (lazy ``tolist``)."""

    def __init__(self, arr: np.ndarray) -> None:
        self.arr = arr

    def __getitem__(self, i: int) -> list[int]:
        return self.arr[i].tolist()


class LatticeSearch:
    """Search the lattice of ``enc`` for the best node satisfying ``models``."""

    def __init__(
        self,
        enc: EncodedTable,
        models: list[PrivacyModel],
        max_suppressed: int,
        objective: Objective,
        cache_budget: int = 2_000_000,
    ) -> None:
        self.enc = enc
        self.models = models
        self.max_sup = int(max_suppressed)
        self.obj = objective
        with_sup = self.max_sup > 0
        self.mono = [(m.monotone_with_suppression if with_sup else m.monotone) for m in models]
        self.all_mono = all(self.mono)
        self._single = models[0] if len(models) == 1 and not models[0].table_level else None
        self.n_checked = 0
        self._cache_levels = np.zeros((4096, len(enc.heights)), dtype=np.int64)
        # levels packed in fields of w bits (top bit of each a guard) when they fit in 62 bits
        w = max(int(h) - 1 for h in enc.heights).bit_length() + 1
        self._lv_shifts = [w * a for a in range(len(enc.heights))]
        fits = w * len(enc.heights) <= 62
        self._guard = sum(1 << (sh + w - 1) for sh in self._lv_shifts) if fits else 0
        self._cache_packed = np.zeros(4096, dtype=np.int64)
        self._cache_classes = np.zeros(4096, dtype=np.int64)
        self._reset_cache()
        #: Most classes (summed over cached nodes) kept for roll-ups, besides the base.
        self.cache_budget = max(cache_budget, 4 * enc.base.n_classes)
        self.n_total = int(np.prod(enc.heights))
        #: Climb from each failing path node to a maximal failing node (Flash-like tagging).
        self.climb = True
        #: Climb past the objective bound when the excess of suppressed records is this many
        #: times the suppression budget.
        self.climb_margin = 1.0
        #: Roll up far nodes through the meet with the previous far node (reusable hubs).
        self.hubs = True
        self._last_base_target: tuple[int, ...] | None = None

    # ------------------------------------------------------------------ node evaluation
    def table(self, levels: tuple[int, ...]) -> ClassTable:
        """Classes of ``levels``, rolled up from the cached ancestor with the fewest classes."""
        t = self.cache.get(levels)
        if t is not None:
            return t
        m = self._cache_n
        if self._guard:  # packed levels: a field keeps its guard bit iff cached <= target
            g = self._guard
            tgt = sum(lv << sh for lv, sh in zip(levels, self._lv_shifts)) + g
            ok = ((tgt - self._cache_packed[:m]) & g) == g
        else:
            ok = (self._cache_levels[:m] <= np.asarray(levels)).all(axis=1)
        i = int(np.argmin(np.where(ok, self._cache_classes[:m], _BIG)))
        src = self._cache_tables[i]
        if i == 0 and self.hubs and sum(levels) >= 3:
            # from the base: go through the meet with the previous such target, a "hub" that
            # later nodes of the same region can roll up from
            last = self._last_base_target
            self._last_base_target = levels
            if last is not None:
                hub = tuple(min(a, b) for a, b in zip(levels, last))
                if sum(hub) >= 2 and hub != levels and hub not in self.cache:
                    src = self._remember(hub, self.enc.rollup(src, hub)[0])
        t, _ = self.enc.rollup(src, levels)
        return self._remember(levels, t)

    def _remember(self, levels: tuple[int, ...], t: ClassTable) -> ClassTable:
        m = self._cache_n
        self._cache_entries += t.n_classes
        if self._cache_entries > self.cache_budget or m == self._cache_levels.shape[0]:
            self._reset_cache()
            m = self._cache_n
        self._cache_levels[m] = levels
        if self._guard:
            self._cache_packed[m] = sum(lv << sh for lv, sh in zip(levels, self._lv_shifts))
        self._cache_classes[m] = t.n_classes
        self._cache_tables.append(t)
        self._cache_n = m + 1
        self.cache[levels] = t
        return t

    def _reset_cache(self) -> None:
        """Forget every cached node but the base."""
        base = self.enc.base
        self.cache = {base.levels: base}
        self._cache_levels[0] = base.levels
        self._cache_packed[0] = 0
        self._cache_classes[0] = base.n_classes
        self._cache_tables = [base]
        self._cache_n = 1
        self._cache_entries = 0

    def evaluate(self, levels: tuple[int, ...]) -> tuple[ClassTable, Evaluation, bool]:
        """Classes, evaluation and whether the monotone models alone already fail."""
        self.n_checked += 1
        t = self.table(levels)
        st = t.stats()
        if self._single is not None:  # fast path: one class-level model (e.g. k-anonymity)
            m = self._single
            v = m.violating(st)
            n_sup = int(t.sizes[v].sum()) if v.any() else 0
            fail = n_sup > self.max_sup
            ev = Evaluation(not fail, v, n_sup, [m.describe()] if fail else [])
            return t, ev, fail and self.mono[0]
        viol = np.zeros(t.n_classes, dtype=bool)
        viol_mono = np.zeros(t.n_classes, dtype=bool)
        failed_models: list[PrivacyModel] = []
        for m, mono in zip(self.models, self.mono):
            if m.table_level:
                continue
            v = m.violating(st)
            if v.any():
                failed_models.append(m)
                viol |= v
                if mono:
                    viol_mono |= v
        n_sup = int(t.sizes[viol].sum()) if failed_models else 0
        mono_fail = int(t.sizes[viol_mono].sum()) > self.max_sup if failed_models else False
        failed = [m.describe() for m in failed_models] if n_sup > self.max_sup else []
        keep = ~viol
        for m, mono in zip(self.models, self.mono):
            if m.table_level and not m.holds(st, keep):
                failed.append(m.describe())
                if mono and self.max_sup == 0:
                    mono_fail = True
        return t, Evaluation(not failed, viol, n_sup, failed), mono_fail

    def check_top(self) -> tuple[ClassTable, Evaluation]:
        t, ev, _ = self.evaluate(self.enc.top)
        if not ev.holds:
            raise UnsatisfiableError(
                "the privacy targets cannot be met even at the top of the lattice "
                f"(every quasi-identifier fully generalized, at most {self.max_sup} records "
                f"suppressed): {'; '.join(ev.failed)} fails"
            )
        return t, ev

    # ------------------------------------------------------------------ optimal search
    def _fallback(self, incumbent: SearchOutcome | None) -> SearchOutcome:
        """The incumbent, else the top node (the search ran out of time before any other)."""
        if incumbent is not None:
            return replace(incumbent, n_checked=self.n_checked, n_total=self.n_total, optimal=False)
        t, ev = self.check_top()
        v = self.obj.value(t, ev.violating)
        return SearchOutcome(self.enc.top, t, ev, v, self.n_checked, self.n_total, False)

    def optimal(
        self, deadline: float | None = None, incumbent: SearchOutcome | None = None
    ) -> SearchOutcome:
        """Best-first search with predictive tagging; optimal unless ``deadline`` passes.

        ``incumbent`` (e.g. the node of :meth:`greedy`) is the first upper bound on the
        objective; when the deadline passes, the best node found so far (the incumbent at
        worst, else the top node) is returned with ``optimal=False``.  Building the node
        arrays costs ``O(nodes x QIs)``; the deadline is checked between those steps, and the
        search is skipped when that cost clearly exceeds the time left.
        """
        enc = self.enc
        if self.n_total > MAX_OPTIMAL_NODES:
            if deadline is not None:
                return incumbent if incumbent is not None else self.greedy(deadline)
            raise ConfigError(
                f"the lattice has {self.n_total:,} nodes, too many for the optimal search "
                f"(limit {MAX_OPTIMAL_NODES:,}); use algorithm 'heuristic' with a time_limit"
            )
        q = len(enc.heights)

        def late() -> bool:
            return deadline is not None and time.perf_counter() > deadline

        if deadline is not None and self.n_total * q * SETUP_SECONDS_PER_CELL > max(
            deadline - time.perf_counter(), 0.0
        ):
            return self._fallback(incumbent)
        # nodes in C order, i.e. lexicographic order of their level vectors
        nodes = np.indices(tuple(int(h) for h in enc.heights), dtype=np.int64).reshape(q, -1).T
        nodes = np.ascontiguousarray(nodes)
        strides = np.ones(q, dtype=np.int64)
        for a in range(q - 2, -1, -1):
            strides[a] = strides[a + 1] * enc.heights[a + 1]
        sums = nodes.sum(axis=1)
        lb = self.obj.static_lb(nodes)
        if late():
            return self._fallback(incumbent)
        tie = np.empty(len(nodes), dtype=np.int64)  # rank by (sum of levels, lexicographic)
        tie[np.argsort(sums, kind="stable")] = np.arange(len(nodes))
        order = np.lexsort((tie, lb))
        if late():
            return self._fallback(incumbent)
        # ge[a][v]: nodes whose level of QI a is >= v (le: <= v); successors = AND over QIs
        ge = [[nodes[:, a] >= v for v in range(int(h))] for a, h in enumerate(enc.heights)]
        le = [[nodes[:, a] <= v for v in range(int(h))] for a, h in enumerate(enc.heights)]
        if late():
            return self._fallback(incumbent)

        strides_l = [int(x) for x in strides]
        tops = [int(h) - 1 for h in enc.heights]
        rank = np.empty(len(nodes), dtype=np.int64)  # position of each node in ``order``
        rank[order] = np.arange(len(nodes))
        if len(nodes) <= _LIST_NODES:  # Python lists: fast scalar access in the path loops
            nodes_l: Any = nodes.tolist()
            rank_l: Any = rank.tolist()
            order_l: Any = order.tolist()
        else:  # converting millions of rows costs seconds; index the arrays instead
            nodes_l, rank_l, order_l = _Rows(nodes), rank, order

        def successors(idx: int) -> np.ndarray:
            lv = nodes_l[idx]
            m = ge[0][lv[0]].copy()
            for a in range(1, q):
                m &= ge[a][lv[a]]
            return m

        def predecessors(idx: int) -> np.ndarray:
            lv = nodes_l[idx]
            m = le[0][lv[0]].copy()
            for a in range(1, q):
                m &= le[a][lv[a]]
            return m

        status = np.zeros(len(nodes), dtype=np.int8)
        visited = np.zeros(len(nodes), dtype=bool)
        dyn = np.zeros(len(nodes))  # best dynamic lower bound inherited from predecessors
        holds = np.zeros(len(nodes), dtype=bool)
        mono_fail_at = np.zeros(len(nodes), dtype=bool)
        excess = np.zeros(len(nodes), dtype=np.int64)  # records over the suppression budget

        if incumbent is not None:
            best_idx = int(np.dot(np.asarray(incumbent.node, dtype=np.int64), strides))
            best_val = incumbent.value
            best = (incumbent.table, incumbent.evaluation)
        else:
            top_t, top_ev = self.check_top()
            best_idx = len(nodes) - 1
            best_val = self.obj.value(top_t, top_ev.violating)
            best = (top_t, top_ev)

        def tol(v: float) -> float:
            return 1e-9 * max(1.0, abs(v))

        def better(v: float, idx: int) -> bool:
            if v < best_val - tol(best_val):
                return True
            return v <= best_val + tol(best_val) and tie[idx] < tie[best_idx]

        def can_win(bound: float, idx: int) -> bool:
            """Whether a node at or above ``idx`` with lower bound ``bound`` may still win."""
            if bound < best_val - tol(best_val):
                return True
            return bound <= best_val + tol(best_val) and tie[idx] < tie[best_idx]

        def visit(idx: int) -> bool:
            """Evaluate a node; returns whether it satisfies the models."""
            nonlocal best_idx, best_val, best
            if visited[idx]:
                return bool(holds[idx])
            visited[idx] = True
            levels = tuple(nodes_l[idx])
            t, ev, mono_fail = self.evaluate(levels)
            if ev.holds:
                if self.all_mono:
                    succ = successors(idx)
                    status[succ & (status == _UNKNOWN)] = _ANON
                status[idx] = _ANON
                v = self.obj.value(t, ev.violating)
                if better(v, idx):
                    best_idx, best_val, best = idx, v, (t, ev)
            else:
                status[idx] = _NOT
                mono_fail_at[idx] = mono_fail
                excess[idx] = ev.n_suppressed - self.max_sup
                if mono_fail:
                    pred = predecessors(idx)
                    status[pred] = _NOT
            # separable objectives: the static bound already orders successors; nothing to add
            d = 0.0 if self.obj.separable else self.obj.dynamic_lb(t)
            if d > 0:
                succ = successors(idx)
                np.maximum(dyn, np.where(succ, d, 0.0), out=dyn)
                if not can_win(d, idx):
                    succ[idx] = False
                    status[succ & (status != _NOT)] = _PRUNED
            holds[idx] = ev.holds
            return ev.holds

        optimal = True
        for idx in order:
            if deadline is not None and time.perf_counter() > deadline:
                optimal = False
                break
            if lb[idx] > best_val + tol(best_val):
                break
            st = status[idx]
            if st == _NOT or st == _PRUNED or visited[idx]:
                continue
            if not can_win(max(lb[idx], dyn[idx]), idx):
                continue
            if st == _ANON:
                if not (self.obj.separable and self.max_sup == 0):
                    visit(idx)
                elif better(float(lb[idx]), idx):  # the value equals the static bound
                    t, ev, _ = self.evaluate(tuple(int(x) for x in nodes[idx]))
                    best_idx, best_val, best = idx, self.obj.value(t, ev.violating), (t, ev)
                continue
            # Flash-style: build a greedy path upward through the cheapest successors that are
            # not known to be anonymous, then binary-search it for the anonymity boundary.
            path = [int(idx)]
            cur = int(idx)
            while True:
                lv = nodes_l[cur]
                # cheapest by (lb, tie), i.e. first in ``order``
                r = min(
                    (
                        rank_l[cur + strides_l[a]]
                        for a in range(q)
                        if lv[a] < tops[a] and status[cur + strides_l[a]] != _ANON
                    ),
                    default=-1,
                )
                if r < 0:
                    break
                cur = int(order_l[r])
                path.append(cur)
            lo, hi = -1, len(path)  # path[lo] fails (monotone part), path[hi] holds
            for i, p in enumerate(path):
                if status[p] == _NOT:
                    lo = i
            while hi - lo > 1:
                if deadline is not None and time.perf_counter() > deadline:
                    break
                mid = (lo + hi) // 2
                p = path[mid]
                if status[p] == _NOT:
                    lo = mid
                    continue
                if visit(p):
                    hi = mid
                else:
                    lo = mid
            if self.climb and lo >= 0 and mono_fail_at[path[lo]]:
                # climb from the highest failing node to a maximal failing node: each failing
                # successor tags a larger set of predecessors
                cur = path[lo]
                moved = True
                while moved and (deadline is None or time.perf_counter() <= deadline):
                    moved = False
                    for a in range(q):
                        if nodes_l[cur][a] >= tops[a]:
                            continue
                        nxt = cur + strides_l[a]
                        # beyond the bound only when the failure is large enough that the
                        # successor probably fails too (then it tags many more nodes)
                        if (
                            status[nxt] in (_UNKNOWN, _PRUNED)
                            and not visited[nxt]
                            and (
                                excess[cur] > self.climb_margin * max(self.max_sup, 1)
                                or can_win(max(lb[nxt], dyn[nxt]), nxt)
                            )
                        ):
                            if not visit(nxt) and mono_fail_at[nxt]:
                                cur, moved = nxt, True
                                break
            if status[idx] == _UNKNOWN:
                visit(idx)
        t, ev = best
        levels = tuple(int(x) for x in nodes[best_idx])
        return SearchOutcome(levels, t, ev, best_val, self.n_checked, self.n_total, optimal)

    # ------------------------------------------------------------------ greedy heuristic
    def greedy(self, deadline: float, refine_deadline: float | None = None) -> SearchOutcome:
        """Greedy bottom-up climb, then top-down refinement, within ``deadline``.

        The refinement stops at ``refine_deadline`` when given (earlier than ``deadline``:
        the climb, which finds the first anonymous node, may use the whole budget).
        """
        enc = self.enc
        heights = [int(h) for h in enc.heights]
        top_t, top_ev = self.check_top()
        best_levels = enc.top
        best = (top_t, top_ev)
        best_val = self.obj.value(top_t, top_ev.violating)

        def slb(levels: tuple[int, ...]) -> float:
            return float(self.obj.static_lb(np.asarray([levels]))[0])

        cur = tuple(0 for _ in heights)
        t, ev, _ = self.evaluate(cur)
        while not ev.holds and time.perf_counter() < deadline:
            cands = []
            for a in range(len(heights)):
                if cur[a] + 1 < heights[a]:
                    nxt = cur[:a] + (cur[a] + 1,) + cur[a + 1 :]
                    tn, en, _ = self.evaluate(nxt)
                    score = (
                        0 if en.holds else 1,
                        self.obj.value(tn, en.violating) if en.holds else en.n_suppressed,
                        slb(nxt),
                        nxt,
                    )
                    cands.append((score, nxt, tn, en))
            if not cands:
                break
            _, cur, t, ev = min(cands, key=lambda c: c[0])
        if ev.holds:
            v = self.obj.value(t, ev.violating)
            if v <= best_val:
                best_levels, best, best_val = cur, (t, ev), v
        end = deadline if refine_deadline is None else min(deadline, refine_deadline)
        improved = True
        while improved and time.perf_counter() < end:
            improved = False
            cur = best_levels
            for a in range(len(heights)):
                if cur[a] == 0 or time.perf_counter() >= end:
                    continue
                prv = cur[:a] + (cur[a] - 1,) + cur[a + 1 :]
                tp, ep, _ = self.evaluate(prv)
                if ep.holds:
                    v = self.obj.value(tp, ep.violating)
                    if v < best_val - 1e-9 * max(1.0, abs(best_val)):
                        best_levels, best, best_val, improved = prv, (tp, ep), v, True
        t, ev = best
        return SearchOutcome(best_levels, t, ev, best_val, self.n_checked, self.n_total, False)
