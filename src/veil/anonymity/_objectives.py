"""Utility objectives of a generalized table (all minimized), on class tables.

``loss``
    Generalization loss / normalized certainty penalty (Iyengar, KDD 2002; Xu et al., KDD
    2006): a cell generalized to label ``g`` costs ``(leaves(g) - 1) / (|domain| - 1)``, a
    suppressed cell costs 1; the mean over all QI cells (0 = original, 1 = all suppressed).
``precision``
    1 - Prec of Sweeney (IJUFKS 2002): mean of ``level / (height - 1)`` over QI cells (a
    suppressed cell counts as the top level).
``entropy``
    Non-uniform entropy (Gionis & Tassa, TKDE 2009): sum over QI cells of
    ``-log2 P(original value | generalized value)`` with the input's frequencies; suppressed
    cells count as generalized to the whole domain.  In bits.
``dm``
    Discernibility metric (Bayardo & Agrawal, ICDE 2005): sum of squared class sizes, plus
    ``|table|`` for every suppressed record.
``dm_star``
    Modified discernibility (El Emam et al., JAMIA 2009): sum of squared class sizes, the
    suppressed records counting as one class.
``aecs``
    Average equivalence class size (LeFevre et al., ICDE 2006): records / classes, suppressed
    records forming one class.

Every objective also gives lower bounds valid for a node *and all its generalizations* (used to
prune the lattice search): a static one for all nodes at once and a dynamic one from the node's
classes.
"""

from __future__ import annotations

import numpy as np

from veil.anonymity._lattice import ClassTable, EncodedTable

__all__ = [
    "Objective",
    "make_objective",
    "all_utilities",
    "original_utilities",
    "size_utilities",
    "OBJECTIVE_NAMES",
]

OBJECTIVE_NAMES = ("loss", "precision", "entropy", "dm", "dm_star", "aecs")


class Objective:
    """An objective bound to an encoded table."""

    name = ""
    separable = False

    def __init__(self, enc: EncodedTable) -> None:
        self.enc = enc
        self.n = enc.n

    def static_lb(self, nodes: np.ndarray) -> np.ndarray:
        """Lower bound of the objective at each node (rows of ``nodes``) and above."""
        return np.zeros(nodes.shape[0])

    def dynamic_lb(self, t: ClassTable) -> float:
        """Lower bound at the node of ``t`` and every generalization of it."""
        return 0.0

    def value(self, t: ClassTable, viol: np.ndarray) -> float:
        """Objective at the node of ``t`` when the classes ``viol`` are suppressed."""
        raise NotImplementedError  # pragma: no cover


class _Separable(Objective):
    """Objectives that are a sum of per-cell costs depending only on the generalized value."""

    separable = True

    def __init__(self, enc: EncodedTable) -> None:
        super().__init__(enc)
        self.cells: list[list[np.ndarray]] = []  # [attr][level] -> cost per label
        self.full: list[float] = []  # cost of a suppressed cell
        self.const = 0.0
        self.norm = 1.0
        self._setup()
        self.full_sum = float(sum(self.full))
        self.tables = []  # [attr] -> total cost of the column at each level (no suppression)
        for a, h in enumerate(enc.hier):
            count0 = enc.value_counts[a]
            tot = [float(count0 @ self.cells[a][lv][h.codes(lv)]) for lv in range(h.height)]
            self.tables.append(np.array(tot))

    def _setup(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def static_lb(self, nodes: np.ndarray) -> np.ndarray:
        s = np.full(nodes.shape[0], self.const)
        for a, tab in enumerate(self.tables):
            s = s + tab[nodes[:, a]]
        return s / self.norm

    def dynamic_lb(self, t: ClassTable) -> float:
        return float(self.static_lb(np.asarray([t.levels]))[0])

    def value(self, t: ClassTable, viol: np.ndarray) -> float:
        # value = static bound (every record generalized) + extra cost of the suppressed cells
        total = self.const + sum(float(tab[lv]) for tab, lv in zip(self.tables, t.levels))
        vi = np.flatnonzero(viol)
        if vi.size:
            sizes = t.sizes[vi].astype(np.float64)
            n_sup = float(sizes.sum())
            cell = np.zeros(vi.size)
            for a, (lv, c) in enumerate(zip(t.levels, t.codes_at(vi))):
                cell += self.cells[a][lv][c]
            total += n_sup * self.full_sum - float(sizes @ cell)
        return total / self.norm


class Loss(_Separable):
    name = "loss"

    def _setup(self) -> None:
        for h in self.enc.hier:
            d = max(len(h) - 1, 1)
            self.cells.append([(h.leaf_counts(lv) - 1) / d for lv in range(h.height)])
            self.full.append(1.0 if len(h) > 1 else 0.0)
        self.norm = float(self.n * len(self.enc.hier))


class Precision(_Separable):
    name = "precision"

    def _setup(self) -> None:
        for h in self.enc.hier:
            top = max(h.height - 1, 1)
            self.cells.append([np.full(h.n_labels(lv), lv / top) for lv in range(h.height)])
            self.full.append(1.0 if h.height > 1 else 0.0)
        self.norm = float(self.n * len(self.enc.hier))


class Entropy(_Separable):
    name = "entropy"

    def _setup(self) -> None:
        n = float(self.n)
        for a, h in enumerate(self.enc.hier):
            count0 = self.enc.value_counts[a]
            cells = []
            for lv in range(h.height):
                f = np.bincount(h.codes(lv), weights=count0, minlength=h.n_labels(lv))
                cells.append(np.log2(np.maximum(f, 1.0)))
            self.cells.append(cells)
            self.full.append(float(np.log2(n)))
            nz = count0[count0 > 0]
            self.const -= float(nz @ np.log2(nz))


class DM(Objective):
    name = "dm"

    def dynamic_lb(self, t: ClassTable) -> float:
        s = t.sizes.astype(np.float64)
        return float(s @ s)

    def value(self, t: ClassTable, viol: np.ndarray) -> float:
        s = t.sizes[~viol].astype(np.float64)
        return float(s @ s) + float(t.sizes[viol].sum()) * self.n


class DMStar(DM):
    name = "dm_star"

    def value(self, t: ClassTable, viol: np.ndarray) -> float:
        s = t.sizes[~viol].astype(np.float64)
        sup = float(t.sizes[viol].sum())
        return float(s @ s) + sup * sup


class AECS(Objective):
    name = "aecs"

    def dynamic_lb(self, t: ClassTable) -> float:
        return self.n / max(t.n_classes, 1)

    def value(self, t: ClassTable, viol: np.ndarray) -> float:
        kept = int(np.count_nonzero(~viol))
        classes = kept + (1 if viol.any() else 0)
        return self.n / max(classes, 1)


_OBJECTIVES: dict[str, type[Objective]] = {
    "loss": Loss,
    "precision": Precision,
    "entropy": Entropy,
    "dm": DM,
    "dm_star": DMStar,
    "aecs": AECS,
}


def make_objective(name: str, enc: EncodedTable) -> Objective:
    """Instantiate the objective ``name`` (a canonical name) for ``enc``."""
    return _OBJECTIVES[name](enc)


def all_utilities(enc: EncodedTable, t: ClassTable, viol: np.ndarray) -> dict[str, float]:
    """Every objective's value at the node of ``t`` (suppressing ``viol``)."""
    return {name: make_objective(name, enc).value(t, viol) for name in OBJECTIVE_NAMES}


def original_utilities(enc: EncodedTable) -> dict[str, float]:
    """Every objective's value for the original table taken as a release (the "before" column).

    The base node (every QI at level 0, nothing suppressed): loss, precision and entropy are 0
    by definition; ``dm``, ``dm_star`` and ``aecs`` are those of the original equivalence
    classes over the quasi-identifiers.
    """
    out = all_utilities(enc, enc.base, np.zeros(enc.base.n_classes, dtype=bool))
    for name in ("loss", "precision", "entropy"):  # 0 at level 0: drop float round-off
        if abs(out[name]) < 1e-6:
            out[name] = 0.0
    return out


def size_utilities(sizes: np.ndarray) -> dict[str, float]:
    """Class-size metrics of a partition without suppression (Mondrian / MDAV, and the
    original classes): ``dm`` = ``dm_star`` = sum of squared class sizes (Bayardo & Agrawal,
    ICDE 2005), ``aecs`` = records / classes (LeFevre et al., ICDE 2006).

    Examples
    --------
    >>> size_utilities(np.array([2, 3]))
    {'dm': 13, 'dm_star': 13, 'aecs': 2.5}
    """
    s = np.asarray(sizes, dtype=np.int64)
    s = s[s > 0]
    dm = int(s @ s)
    return {"dm": dm, "dm_star": dm, "aecs": float(s.sum()) / max(s.size, 1)}
