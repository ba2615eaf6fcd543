"""Operator base class, context and registry (Presidio-style: one small class per operator)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

import numpy as np
import pandas as pd

from veil.errors import ConfigError, KeyMissingError

__all__ = [
    "Operator",
    "OperatorContext",
    "register",
    "get_operator",
    "available_operators",
]


@dataclass
class OperatorContext:
    """Everything an operator may need besides its own parameters.

    Attributes
    ----------
    secret_loader
        Zero-argument callable returning the secret key bytes (for keyed pseudonymization and
        tokenization).  Called lazily, only by operators that need a key; the key is never stored
        in reports or logs.
    rng
        Random generator for non-DP randomness (fake data, resampling, noise addition).
    locale
        Faker locale for fake replacement.
    artifacts
        Side outputs an operator wants written next to the release (e.g. the anonymous column-name
        mapping, PCA components).  Maps a file name to a DataFrame or a JSON-able object.
    base_dir
        Directory used to resolve relative paths in operator parameters (the policy's folder).
    hierarchies
        Generalization hierarchies declared for columns (column name -> ``veil.schema.Hierarchy``);
        ``generalize`` with only a ``level`` uses the column's hierarchy from here.
    seed
        The policy's seed, when given: makes keyless fake replacement repeatable across runs.
    """

    secret_loader: Callable[[], bytes] | None = None
    rng: np.random.Generator = field(default_factory=np.random.default_rng)
    locale: str = "en_US"
    artifacts: dict[str, Any] = field(default_factory=dict)
    base_dir: str = "."
    hierarchies: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None

    def secret(self) -> bytes:
        """Return the secret key, or raise :class:`KeyMissingError`."""
        if self.secret_loader is None:
            raise KeyMissingError(
                "this operator needs a secret key: set VEIL_KEY or give key: {env: NAME} "
                "or key: {file: PATH} in the policy"
            )
        return self.secret_loader()


class Operator(ABC):
    """A transformation applied to one column (or, for a few operators, the whole table).

    Subclasses set ``name`` and implement :meth:`apply`.  Parameters are validated in
    ``__init__`` (raise :class:`~veil.errors.ConfigError` with a readable message).
    :meth:`apply` returns a *new* DataFrame and never mutates its input.
    """

    name: ClassVar[str]
    #: True when the operator works on the whole table (drops rows, renames columns, ...).
    table_level: ClassVar[bool] = False

    def __init__(self, **params: Any) -> None:
        if params:
            raise ConfigError(f"operator {self.name!r} got unknown parameter(s): {sorted(params)}")

    @abstractmethod
    def apply(self, df: pd.DataFrame, column: str | None, ctx: OperatorContext) -> pd.DataFrame:
        """Return a transformed copy of ``df`` (``column`` is None for table-level operators)."""

    def describe(self) -> str:
        """One human-readable sentence for the report.  Never includes secrets."""
        return self.name

    def params(self) -> dict[str, Any]:
        """Public (non-secret) parameters, for the JSON report."""
        return {}

    def stats(self) -> dict[str, Any]:
        """Figures from the last :meth:`apply` (rows removed, fitted distribution, ...).

        Empty before the first call.  JSON-able, never secret.
        """
        return {}


_REGISTRY: dict[str, type[Operator]] = {}
T = TypeVar("T", bound=type[Operator])


def register(cls: T) -> T:
    """Class decorator adding an operator to the registry under ``cls.name``."""
    name = cls.name
    prev = _REGISTRY.get(name)
    if prev is not None and prev is not cls:
        # the same class re-imported under another module name (doctest/importlib) is fine
        same = prev.__qualname__ == cls.__qualname__ and (
            prev.__module__.rsplit(".", 1)[-1] == cls.__module__.rsplit(".", 1)[-1]
        )
        if not same:
            raise RuntimeError(f"operator {name!r} registered twice")
        return cls
    _REGISTRY[name] = cls
    return cls


def available_operators() -> list[str]:
    """Names of all registered operators."""
    _load_builtin()
    return sorted(_REGISTRY)


def get_operator(name: str, params: Mapping[str, Any] | None = None) -> Operator:
    """Instantiate the operator registered as ``name`` with ``params``."""
    _load_builtin()
    try:
        cls = _REGISTRY[name]
    except KeyError:
        raise ConfigError(
            f"unknown operator {name!r}; available: {', '.join(sorted(_REGISTRY))}"
        ) from None
    try:
        return cls(**dict(params or {}))
    except TypeError as exc:  # wrong keyword arguments
        raise ConfigError(f"operator {name!r}: {exc}") from None


def _load_builtin() -> None:
    # Importing the package registers the built-in operators.
    import veil.deid.operators  # noqa: F401
