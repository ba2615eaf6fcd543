"""Integer-coded table, equivalence-class tables and their roll-up between lattice nodes.

A lattice node is a tuple of generalization levels, one per quasi-identifier.  The table is
reduced once to its *distinct* quasi-identifier tuples (with frequencies and sparse sensitive
value counts); the classes of any node are computed from the classes of any more specific node
already computed ("roll-up", Kohlmayer et al. 2012), so a node check costs O(classes of the
ancestor), never O(rows).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from veil.anonymity._config import AnonymizationConfig
from veil.anonymity._stats import (
    ClassStats,
    SensitiveColumn,
    SensitiveStats,
    factorize_int64,
    group_keys,
)
from veil.errors import ConfigError, InputError
from veil.schema._hierarchy import Hierarchy

__all__ = ["EncodedTable", "ClassTable", "combine_keys"]

_MAX_KEY = 1 << 62
#: Odd 64-bit multiplier (2**64 / golden ratio, Knuth): ``key * _MIX`` is a bijection of the
#: 64-bit integers, ``_UNMIX`` its inverse modulo 2**64.
_MIX = np.uint64(0x9E3779B97F4A7C15)
_UNMIX = np.uint64(pow(0x9E3779B97F4A7C15, -1, 1 << 64))


def factorize_packed(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`factorize_int64` of bit-packed class keys, exactly (same inverse and uniques).

    pandas' int64 hash mostly looks at the low bits, which hold only the first QI's field of a
    packed key; hashing ``key * _MIX`` (a bijection, so equal keys stay equal and distinct
    keys distinct) spreads every field over the high bits, then the uniques are mapped back.
    """
    mixed = np.multiply(key.view(np.uint64), _MIX).view(np.int64)
    inv, uniq = factorize_int64(mixed)
    return inv, np.multiply(uniq.view(np.uint64), _UNMIX).view(np.int64)


def combine_keys(cols: list[np.ndarray], cards: list[int]) -> tuple[np.ndarray, int | None]:
    """Mixed-radix key of integer code columns; ``(key, key_space)`` (space None if hashed)."""
    n = cols[0].shape[0]
    key = np.zeros(n, dtype=np.int64)
    space = 1
    for c, card in zip(cols, cards):
        if space * card >= _MAX_KEY:  # compact what we have so far
            key, g = group_keys(key)
            space = g
            if space * card >= _MAX_KEY:  # pragma: no cover - needs > 2**31 classes
                raise InputError("too many distinct quasi-identifier combinations")
        key = key * card + c
        space *= card
    return key, space


@dataclass
class ClassTable:
    """Equivalence classes of one lattice node.

    Either ``key`` is set (one ``int64`` per class packing the codes of every QI in fixed bit
    fields ``(key >> shifts[a]) & masks[a]`` sized for level 0, so that generalizing one QI is a
    vector update of the key), or ``codes`` (one code array per QI) when the fields would not
    fit in 62 bits.
    """

    levels: tuple[int, ...]
    sizes: np.ndarray  # int64
    sens: dict[str, SensitiveStats]
    key: np.ndarray | None = None
    shifts: np.ndarray | None = None
    masks: np.ndarray | None = None
    population: np.ndarray | None = None
    _codes: list[np.ndarray] | None = None

    @property
    def n_classes(self) -> int:
        return int(self.sizes.shape[0])

    def code(self, a: int, rows: np.ndarray | None = None) -> np.ndarray:
        """Codes (at this node's level) of QI ``a`` for all classes or the classes ``rows``."""
        if self._codes is not None:
            c = self._codes[a]
            return c if rows is None else c[rows]
        assert self.key is not None and self.shifts is not None and self.masks is not None
        k = self.key if rows is None else self.key[rows]
        return (k >> self.shifts[a]) & self.masks[a]

    def codes_at(self, rows: np.ndarray) -> list[np.ndarray]:
        """Codes of every QI for the classes ``rows`` (one gather of the packed keys)."""
        if self._codes is not None:
            return [c[rows] for c in self._codes]
        assert self.key is not None and self.shifts is not None and self.masks is not None
        k = self.key[rows]
        return [(k >> sh) & m for sh, m in zip(self.shifts, self.masks)]

    @property
    def codes(self) -> list[np.ndarray]:
        if self._codes is None:
            self._codes = [self.code(a) for a in range(len(self.levels))]
        return self._codes

    def stats(self) -> ClassStats:
        return ClassStats(self.sizes, self.sens, self.population)


class EncodedTable:
    """A table reduced to hierarchy codes, and the lattice of its generalizations.

    Parameters
    ----------
    df
        The input table (any index).
    config
        Every quasi-identifier must have a hierarchy.
    """

    def __init__(self, df: pd.DataFrame, config: AnonymizationConfig) -> None:
        self.config = config
        self.qi = config.qi_names
        nohier = [c for c in self.qi if config.hierarchy(c) is None]
        if nohier:
            raise ConfigError(
                f"lattice search needs a hierarchy for every quasi-identifier; missing for: "
                f"{nohier} (give one, or use algorithm 'mondrian')"
            )
        self.hier: list[Hierarchy] = [config.hierarchy(c) for c in self.qi]  # type: ignore[misc]
        self.n = len(df)
        self.heights = np.array([h.height for h in self.hier], dtype=np.int64)
        self.row_codes = [h.encode(df[c], column=c) for c, h in zip(self.qi, self.hier)]
        self.sensitive: dict[str, SensitiveColumn] = config.encode_sensitive(df)
        zero = tuple(0 for _ in self.qi)
        bits = np.array([max(int(len(h) - 1).bit_length(), 1) for h in self.hier], dtype=np.int64)
        self.keyed = int(bits.sum()) <= 62
        if self.keyed:
            shifts = np.concatenate(([0], np.cumsum(bits)[:-1])).astype(np.int64)
            masks = (np.int64(1) << bits) - 1
            key = np.zeros(self.n, dtype=np.int64)
            for rc, sh in zip(self.row_codes, shifts):
                key |= rc.astype(np.int64) << sh
            self.row_class, base_key = factorize_int64(key)
            nb = len(base_key)
            self.shifts, self.masks = shifts, masks
            #: The QI whose bit field is the highest (its codes need no mask).
            self._top_field = int(np.argmax(shifts))
        else:
            key, space = combine_keys(self.row_codes, [len(h) for h in self.hier])
            self.row_class, nb = group_keys(key, space)
            codes = []
            for rc in self.row_codes:
                c = np.zeros(nb, dtype=np.int32)
                c[self.row_class] = rc
                codes.append(c)
        stats = ClassStats.from_codes(self.row_class, nb, sensitive=self.sensitive)
        self.population_codes: list[np.ndarray] | None = None
        self.population_counts: np.ndarray | None = None
        pop = self._population_frame()
        if pop is not None:
            pcodes = [h.encode(pop[c], column=c) for c, h in zip(self.qi, self.hier)]
            pkey, pspace = combine_keys(pcodes, [len(h) for h in self.hier])
            pinv, pg = group_keys(pkey, pspace)
            self.population_counts = np.bincount(pinv, minlength=pg).astype(np.int64)
            self.population_codes = []
            for rc in pcodes:
                c = np.zeros(pg, dtype=np.int32)
                c[pinv] = rc
                self.population_codes.append(c)
        self._maps: dict[tuple[int, int, int], np.ndarray] = {}
        self._shifted: dict[tuple[int, int], np.ndarray] = {}
        self._deltas: dict[tuple[int, int, int], np.ndarray] = {}
        n_levels = sum(h.height for h in self.hier)
        self._shift_ok = self.keyed and nb * n_levels * 8 <= 256 << 20
        self._cards = [[h.n_labels(lv) for lv in range(h.height)] for h in self.hier]
        if self.keyed:
            self.base = ClassTable(zero, stats.sizes, stats.sensitive, base_key, shifts, masks)
        else:
            self.base = ClassTable(zero, stats.sizes, stats.sensitive, _codes=codes)
        self.base.population = self._population_sizes(self.base)
        #: Frequency of each level-0 value of each QI in the table.
        self.value_counts = [
            np.bincount(self.base.code(a), weights=self.base.sizes, minlength=len(h))
            for a, h in enumerate(self.hier)
        ]

    def _population_frame(self) -> pd.DataFrame | None:
        pops = [m.population for m in self.config.all_models() if m.name == "k-map"]
        if not pops:
            return None
        pop = pops[0]
        if not isinstance(pop, pd.DataFrame):
            raise ConfigError("k-map population must be a pandas DataFrame")
        miss = [c for c in self.qi if c not in pop.columns]
        if miss:
            raise ConfigError(f"k-map population table lacks quasi-identifier column(s) {miss}")
        return pop

    # ------------------------------------------------------------------ lattice helpers
    @property
    def top(self) -> tuple[int, ...]:
        return tuple(int(h) - 1 for h in self.heights)

    def level_map(self, a: int, src: int, dst: int) -> np.ndarray:
        key = (a, src, dst)
        m = self._maps.get(key)
        if m is None:
            m = self.hier[a].level_map(src, dst)
            self._maps[key] = m
        return m

    def cards(self, levels: tuple[int, ...]) -> list[int]:
        return [c[lv] for c, lv in zip(self._cards, levels)]

    def _population_sizes(self, t: ClassTable) -> np.ndarray | None:
        if self.population_codes is None or self.population_counts is None:
            return None
        gen = [
            self.level_map(a, 0, lv)[pc]
            for a, (pc, lv) in enumerate(zip(self.population_codes, t.levels))
        ]
        cols = [np.concatenate([c, g]) for c, g in zip(t.codes, gen)]
        key, space = combine_keys(cols, self.cards(t.levels))
        inv, g = group_keys(key, space)
        c = t.n_classes
        counts = np.bincount(inv[c:], weights=self.population_counts, minlength=g)
        return np.rint(counts[inv[:c]]).astype(np.int64)

    def rollup(self, src: ClassTable, levels: tuple[int, ...]) -> tuple[ClassTable, np.ndarray]:
        """Classes of node ``levels`` from those of a more specific node ``src``.

        Returns the new table and the class id (in it) of each class of ``src``.
        """
        if any(d < s for s, d in zip(src.levels, levels)):
            raise ValueError("rollup target must be more general than the source")
        changed = [a for a, (s, d) in enumerate(zip(src.levels, levels)) if d != s]
        if src.key is not None:
            # generalizing QI a adds (new code - old code) << shift to its bit field
            key = src.key
            from_base = src is self.base and self._shift_ok
            for i, a in enumerate(changed):
                if from_base:  # cached per base class
                    part = self._base_delta(a, levels[a])
                else:
                    part = self._delta(a, src.levels[a], levels[a])[self._field(src.key, a)]
                if i:
                    key += part
                else:
                    key = key + part
            inv, new_key = factorize_packed(key)
            g = len(new_key)
            codes = None
        else:
            gen = []
            for a, (c, s, d) in enumerate(zip(src.codes, src.levels, levels)):
                gen.append(c if d == s else self.level_map(a, s, d)[c])
            ckey, space = combine_keys(gen, self.cards(levels))
            inv, g = group_keys(ckey, space)
            codes = []
            for c in gen:
                out = np.empty(g, dtype=np.int32)
                out[inv] = c
                codes.append(out)
            new_key = None  # type: ignore[assignment]
        # sums of integers below 2**53 are exact in float64
        sizes = np.bincount(inv, weights=src.sizes, minlength=g).astype(np.int64)
        sens = {
            name: SensitiveStats.from_pairs(ss.column, inv[ss.cls], ss.val, g, ss.cnt)
            for name, ss in src.sens.items()
        }
        t = ClassTable(levels, sizes, sens, new_key, src.shifts, src.masks, _codes=codes)
        if src.population is not None:
            t.population = self._population_sizes(t)
        return t, inv

    def _field(self, key: np.ndarray, a: int) -> np.ndarray:
        """Codes of QI ``a`` in the packed ``key`` (no mask for the top field, no shift at 0)."""
        sh = int(self.shifts[a])
        if a == self._top_field:
            return key >> sh
        return (key >> sh) & self.masks[a] if sh else key & self.masks[a]

    def _delta(self, a: int, src: int, dst: int) -> np.ndarray:
        """Per level-``src`` code of QI ``a``: (level-``dst`` code - code) << its shift."""
        k = (a, src, dst)
        d = self._deltas.get(k)
        if d is None:
            m = self.level_map(a, src, dst).astype(np.int64)
            d = (m - np.arange(m.shape[0], dtype=np.int64)) << self.shifts[a]
            self._deltas[k] = d
        return d

    def _base_delta(self, a: int, level: int) -> np.ndarray:
        """``_delta(a, 0, level)`` of every base class (cached)."""
        k = (a, level)
        arr = self._shifted.get(k)
        if arr is None:
            arr = self._delta(a, 0, level)[self._field(self.base.key, a)]
            self._shifted[k] = arr
        return arr

    def row_classes(self, levels: tuple[int, ...]) -> tuple[ClassTable, np.ndarray]:
        """Classes of node ``levels`` and the class id of every row."""
        t, inv = self.rollup(self.base, levels)
        return t, inv[self.row_class]
