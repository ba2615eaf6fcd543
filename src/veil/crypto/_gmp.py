"""Import :mod:`gmpy2` (GMP big-integer arithmetic) with a clear message when it is missing."""

from __future__ import annotations

from typing import Any

from veil.errors import CryptoError

try:  # pragma: no cover - exercised only where gmpy2 is absent
    import gmpy2 as _gmpy2
except ImportError:  # pragma: no cover
    _gmpy2 = None

__all__ = ["gmpy2", "require_gmpy2"]

gmpy2: Any = _gmpy2


def require_gmpy2() -> Any:
    """Return the :mod:`gmpy2` module or raise a :class:`CryptoError` explaining how to get it.

    Examples
    --------
    >>> require_gmpy2().mpz(5) + 3
    mpz(8)
    """
    if _gmpy2 is None:  # pragma: no cover
        raise CryptoError(
            "veil.crypto needs gmpy2 for big-integer arithmetic (Paillier, Feldman VSS); "
            "install it with `pip install gmpy2` (it is a declared dependency of veil)"
        )
    return _gmpy2
