"""Lazy attributes of packages (PEP 562 module ``__getattr__``), so that imports stay fast."""

from __future__ import annotations

import importlib
from collections.abc import Mapping, MutableMapping
from typing import Any


def load_lazy(
    name: str,
    lazy: Mapping[str, tuple[str, str]],
    namespace: MutableMapping[str, Any],
    package: str,
) -> Any:
    """Import the lazy attribute ``name`` of ``package`` and cache it in its namespace.

    Parameters
    ----------
    name : str
        The attribute asked for.
    lazy : mapping
        ``name -> (module, attribute)`` of the package's lazy attributes.
    namespace : mutable mapping
        The package's ``globals()``; the value is stored there so the next access is direct.
    package : str
        The package's name, for the error message.

    Returns
    -------
    object
        The attribute.

    Raises
    ------
    AttributeError
        ``name`` is not a lazy attribute of ``package``.

    Examples
    --------
    >>> ns: dict = {}
    >>> load_lazy("sqrt", {"sqrt": ("math", "sqrt")}, ns, "pkg")(16.0), "sqrt" in ns
    (4.0, True)
    """
    if name in lazy:
        module, attr = lazy[name]
        value = getattr(importlib.import_module(module), attr)
        namespace[name] = value
        return value
    raise AttributeError(f"module '{package}' has no attribute {name!r}")
