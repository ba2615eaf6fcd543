"""Signed integer and fixed-point encoding of numpy arrays into ``Z_p`` or ``Z_{2**64}``.

A float ``x`` is encoded as the integer ``round(x * 2**frac_bits)``; ``frac_bits`` is a public
parameter chosen by the caller, never derived from the data.  Negative integers are stored as
``p - |v|`` in a prime field and in two's complement in ``Z_{2**64}``.  Every encoded array
carries a public *bound* on ``|v|``; operations update the bound and refuse (with
:class:`CryptoOverflowError`) any result whose bound would reach the wrap-around point.
"""

from __future__ import annotations

import math

import numpy as np

from veil.errors import ConfigError, InputError

from ._errors import CryptoOverflowError

__all__ = ["capacity", "default_bound", "encode", "decode", "RING64"]

#: Modulus value that designates the ring ``Z_{2**64}``.
RING64 = 1 << 64


def capacity(modulus: int) -> int:
    """Largest ``|v|`` representable without ambiguity modulo ``modulus``."""
    return (modulus - 1) // 2


def default_bound(modulus: int) -> int:
    """Default public bound on encoded values: ``2**16`` additions of headroom in fields of at
    least 41 bits (``2**61 - 1``, ``2**64``), the whole capacity in smaller ones."""
    cap = capacity(modulus)
    return cap >> 16 if cap >= 1 << 40 else cap


def encode(
    values: object, modulus: int, frac_bits: int | None, max_abs: float | None
) -> tuple[np.ndarray, tuple[int, ...], int]:
    """Encode ``values`` as residues modulo ``modulus``.

    Returns ``(residues, shape, bound)``: flattened ``uint64`` residues, the original shape and
    the public bound on ``|encoded integer|``.
    """
    arr = np.asarray(values)
    shape = tuple(int(s) for s in arr.shape)
    cap = capacity(modulus)
    if frac_bits is not None and (int(frac_bits) != frac_bits or not 0 <= frac_bits <= 52):
        raise ConfigError("frac_bits must be an integer in [0, 52]")
    scale = 1 << (frac_bits or 0)
    if max_abs is None:
        bound = default_bound(modulus)
    else:
        if not (isinstance(max_abs, (int, float, np.number)) and math.isfinite(max_abs)):
            raise ConfigError("max_abs must be a finite number")
        bound = math.ceil(float(max_abs) * scale) if frac_bits else int(max_abs)
        if bound <= 0 or bound > cap:
            raise ConfigError(
                f"max_abs={max_abs} does not fit the modulus (largest encodable magnitude "
                f"{cap / scale:.6g})"
            )
    if arr.dtype == bool:
        arr = arr.astype(np.int64)
    if frac_bits is None:
        if arr.dtype.kind not in "iu":
            raise InputError(
                "integer sharing needs an integer array; pass frac_bits=... to share floats"
            )
        flat = arr.reshape(-1)
        if flat.size and (int(flat.max()) > bound or int(flat.min()) < -bound):
            raise CryptoOverflowError(
                f"values exceed the public bound {bound}; pass a larger max_abs (at most {cap})"
            )
        ints = flat.astype(np.int64)
    else:
        if arr.dtype.kind not in "iuf":
            raise InputError("fixed-point sharing needs a numeric array")
        flat = arr.reshape(-1).astype(np.float64)
        if not np.all(np.isfinite(flat)):
            raise InputError("cannot share NaN or infinite values")
        scaled = np.rint(flat * scale)
        if scaled.size and max(float(scaled.max()), -float(scaled.min())) > bound:
            raise CryptoOverflowError(
                f"values exceed the public bound max_abs={bound / scale:.6g}; pass a larger "
                f"max_abs (at most {cap / scale:.6g})"
            )
        ints = scaled.astype(np.int64)
    if modulus == RING64:
        return ints.view(np.uint64).copy(), shape, bound
    res = ints.astype(np.uint64)  # negative v -> 2**64 + v; adding p wraps to p + v
    np.add(res, np.uint64(modulus), out=res, where=ints < 0)
    return res, shape, bound


def decode(
    residues: np.ndarray, modulus: int, frac_bits: int | None, shape: tuple[int, ...]
) -> np.ndarray:
    """Invert :func:`encode`: residues -> signed ``int64`` (or ``float64`` when fixed-point)."""
    if modulus == RING64:
        ints = residues.view(np.int64).copy()
    else:
        half = np.uint64(modulus // 2)
        neg = residues > half
        ints = residues.astype(np.int64)
        ints[neg] = -(np.uint64(modulus) - residues[neg]).astype(np.int64)
    if frac_bits is None:
        return ints.reshape(shape)
    return (ints.astype(np.float64) / float(1 << frac_bits)).reshape(shape)
