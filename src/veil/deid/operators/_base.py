"""Operator base class, context and registry (Presidio-style: one small class per operator)."""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

import numpy as np
import pandas as pd

from veil.deid._keys import KEY_NAME_HIDDEN, may_be_key_name, shown
from veil.errors import ConfigError, KeyNotConfiguredError

__all__ = [
    "Operator",
    "OperatorContext",
    "register",
    "get_operator",
    "available_operators",
    "operator_parameters",
    "OperatorParameterError",
]


class OperatorParameterError(ConfigError):
    """An operator was given an unknown keyword parameter or lacks a required one.

    ``param`` names the offending parameter, so a policy loader can point at its line.
    """

    def __init__(self, message: str, *, operator: str, param: str) -> None:
        super().__init__(message)
        self.operator = operator
        self.param = param


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
    warnings
        Messages an operator wants in the run's report (``report["warnings"]``).
    keep_labels
        Set by ``veil.apply``: table-level operators keep the rows' index labels (a
        ``suppress`` operator's ``reset_index`` is then done on the release), since the report
        and the target check match released records to input rows by label.

    Examples
    --------
    A keyed operator reads the key from the context, only when it runs:

    >>> from veil.deid.operators import get_operator
    >>> df = pd.DataFrame({"name": ["ann", "bob", "ann"]})
    >>> ctx = OperatorContext(secret_loader=lambda: b"a 32-byte key for this example..")
    >>> out = get_operator("pseudonymize").apply(df, "name", ctx)
    >>> out["name"][0] == out["name"][2] != out["name"][1]  # same name, same pseudonym
    True
    >>> get_operator("pseudonymize").apply(df, "name", OperatorContext())
    Traceback (most recent call last):
    ...
    veil.errors.KeyNotConfiguredError: this operator needs a secret key: set VEIL_KEY or ...
    """

    secret_loader: Callable[[], bytes] | None = None
    rng: np.random.Generator = field(default_factory=np.random.default_rng)
    locale: str = "en_US"
    artifacts: dict[str, Any] = field(default_factory=dict)
    base_dir: str = "."
    hierarchies: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None
    warnings: list[str] = field(default_factory=list)
    keep_labels: bool = False
    #: Position in ``warnings`` of the messages given with a ``key`` (see :meth:`amend`).
    _keyed: dict[Any, int] = field(default_factory=dict, init=False, repr=False)

    def warn_once(self, message: str, key: Any = None) -> None:
        """Add ``message`` to the run's report warnings (once, however often it is raised).

        ``key`` (hashable) names the message for :meth:`amend`: an operator that publishes
        something taken from the data gives ``data_derived_key(self, column)``, so that the
        run's later note about the same operator and column extends this warning instead of
        repeating the concern in a second one.
        """
        if message not in self.warnings:
            self.warnings.append(message)
        if key is not None:
            self._keyed.setdefault(key, self.warnings.index(message))

    def amend(self, key: Any, text: str) -> bool:
        """Append ``text`` to the warning given with ``key``; False when there is none."""
        i = self._keyed.get(key)
        if i is None:
            return False
        self.warnings[i] += text
        return True

    def secret(self) -> bytes:
        """Return the secret key, or raise :class:`KeyMissingError`."""
        if self.secret_loader is None:
            raise KeyNotConfiguredError(
                "this operator needs a secret key: set VEIL_KEY or give key: {env: NAME} "
                "or key: {file: PATH} in the policy"
            )
        return self.secret_loader()


def data_derived_key(op: object, column: str) -> tuple[str, int, str]:
    """The :meth:`OperatorContext.warn_once` key of ``op``'s warning that what it publishes
    for ``column`` (bin edges, percentile codes) is taken from the data."""
    return ("data-derived", id(op), str(column))


class Operator(ABC):
    """A transformation applied to one column (or, for a few operators, the whole table).

    Subclasses set ``name`` and implement :meth:`apply`.  Parameters are validated in
    ``__init__`` (raise :class:`~veil.errors.ConfigError` with a readable message).
    :meth:`apply` returns a *new* DataFrame and never mutates its input.

    Examples
    --------
    >>> class Uppercase(Operator):
    ...     name = "uppercase"
    ...
    ...     def apply(self, df, column, ctx):
    ...         out = df.copy()
    ...         out[column] = out[column].str.upper()
    ...         return out
    >>> df = pd.DataFrame({"city": ["oslo", "rome"]})
    >>> Uppercase().apply(df, "city", OperatorContext())["city"].tolist(), df["city"][0]
    (['OSLO', 'ROME'], 'oslo')

    :func:`register` makes such a class usable by name in policies.
    """

    name: ClassVar[str]
    #: True when the operator works on the whole table (drops rows, renames columns, ...).
    table_level: ClassVar[bool] = False
    #: True when the operator replaces each value by an image of it (a pseudonym, a token, a
    #: fake, a mask): the release keeps the input's frequencies, so the report withholds the
    #: column's input distribution (its counts beside the release's would give the mapping).
    replaces_values: ClassVar[bool] = False

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

    def fitted_columns(self, column: str | None) -> list[str]:
        """Input columns from which this operator computes and publishes an aggregate of the
        rows it is given (a mean split, a relative noise scale, fitted parameters, bin edges).

        ``veil.apply`` leaves those columns' *before* mean and std out of the report when
        records are removed or masked after the operator ran: the aggregate (over more
        records) and the before figure (over the released ones) would, by difference, give
        the removed records' values.  Empty for operators with fixed parameters.
        """
        return []

    def stats(self) -> dict[str, Any]:
        """Figures from the last :meth:`apply` (rows removed, fitted distribution, ...).

        Empty before the first call.  JSON-able, never secret.
        """
        return {}


_REGISTRY: dict[str, type[Operator]] = {}
T = TypeVar("T", bound=type[Operator])


def register(cls: T) -> T:
    """Class decorator adding an operator to the registry under ``cls.name``.

    Examples
    --------
    >>> from veil.deid import apply
    >>> @register
    ... class Uppercase(Operator):
    ...     name = "uppercase"
    ...
    ...     def apply(self, df, column, ctx):
    ...         out = df.copy()
    ...         out[column] = out[column].str.upper()
    ...         return out
    >>> df = pd.DataFrame({"city": ["oslo", "rome"], "age": [34, 51]})
    >>> policy = {"columns": {"city": {"role": "quasi", "operator": "uppercase"}, "age": "quasi"}}
    >>> release, report = apply(df, policy)
    >>> release["city"].tolist()
    ['OSLO', 'ROME']
    >>> del _REGISTRY["uppercase"]  # only to leave the registry as it was
    """
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
    """Names of all registered operators.

    Examples
    --------
    >>> names = available_operators()
    >>> {"drop", "mask", "pseudonymize", "generalize", "suppress"} <= set(names)
    True
    >>> names == sorted(names)
    True
    """
    _load_builtin()
    return sorted(_REGISTRY)


def operator_parameters(operator: str | type[Operator]) -> tuple[list[str], list[str]]:
    """``(required, optional)`` keyword parameters accepted by an operator (name or class).

    Read from the signature of its ``__init__``; an operator that keeps the base class's
    ``__init__`` accepts no parameters.

    Examples
    --------
    >>> from veil.deid.operators import operator_parameters
    >>> operator_parameters("noise")
    (['scale'], ['distribution', 'relative', 'clip', 'keep_integer'])
    """
    if isinstance(operator, str):
        _load_builtin()
        if operator not in _REGISTRY:
            raise ConfigError(f"unknown operator {shown(operator)}")
        operator = _REGISTRY[operator]
    required, optional, _ = _init_parameters(operator)
    return required, optional


def _init_parameters(cls: type[Operator]) -> tuple[list[str], list[str], bool]:
    """``(required, optional, takes **kwargs)`` from one reading of ``cls.__init__``."""
    if cls.__init__ is Operator.__init__:
        return [], [], False
    required: list[str] = []
    optional: list[str] = []
    takes_any = False
    for i, (pname, p) in enumerate(inspect.signature(cls.__init__).parameters.items()):
        takes_any = takes_any or p.kind is p.VAR_KEYWORD
        if i == 0 or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.POSITIONAL_ONLY):
            continue
        (required if p.default is p.empty else optional).append(pname)
    return required, optional, takes_any


def _check_parameters(name: str, cls: type[Operator], params: Mapping[str, Any]) -> None:
    required, optional, takes_any = _init_parameters(cls)
    accepted = required + optional
    if not takes_any:
        unknown = [str(k) for k in params if k not in accepted]
        if unknown:
            listed = ", ".join(accepted) if accepted else "none"
            if may_be_key_name(unknown[0]):  # `{name: pseudonymize, 9f86...}`: the key itself
                raise OperatorParameterError(
                    f"operator {name!r}: unknown parameter (accepted: {listed}); {KEY_NAME_HIDDEN}",
                    operator=name,
                    param="",
                )
            raise OperatorParameterError(
                f"operator {name!r}: unknown parameter {unknown[0]!r} (accepted: {listed})",
                operator=name,
                param=unknown[0],
            )
    missing = [r for r in required if r not in params]
    if missing:
        raise OperatorParameterError(
            f"operator {name!r}: missing required parameter {missing[0]!r}",
            operator=name,
            param=missing[0],
        )


def get_operator(name: str, params: Mapping[str, Any] | None = None) -> Operator:
    """Instantiate the operator registered as ``name`` with ``params``.

    Raises
    ------
    ConfigError
        For an unknown operator name, an unknown or missing keyword parameter
        (:class:`OperatorParameterError`, one line naming the parameter and the accepted ones)
        or a parameter value the operator rejects.

    Examples
    --------
    >>> from veil.deid.operators import get_operator
    >>> try:
    ...     get_operator("noise", {"sigma": 1})
    ... except ConfigError as exc:
    ...     print(exc)
    operator 'noise': unknown parameter 'sigma' (accepted: scale, distribution, relative, clip, keep_integer)
    """
    _load_builtin()
    if not isinstance(name, str) or name not in _REGISTRY:
        raise ConfigError(
            f"unknown operator {shown(name)}; available: {', '.join(sorted(_REGISTRY))}"
        ) from None
    cls = _REGISTRY[name]
    kwargs = dict(params or {})
    _check_parameters(name, cls, kwargs)
    try:
        return cls(**kwargs)
    except TypeError as exc:  # a signature the check above could not see (should not happen)
        raise ConfigError(f"operator {name!r}: invalid parameters ({exc})") from None


def _load_builtin() -> None:
    # Importing the package registers the built-in operators.
    import veil.deid.operators  # noqa: F401
