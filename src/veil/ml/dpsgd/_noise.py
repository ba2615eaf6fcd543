"""Random bits for DP-SGD: Gaussian gradient noise and Poisson sampling masks.

By default the bits come from a cryptographically secure generator: Veil's DP generator
(:mod:`veil.dp._rng`, AES-256-CTR keyed from :func:`os.urandom`) when it is available, else an
equivalent local AES-256-CTR stream keyed from :func:`os.urandom`.  torch's own generators
(Mersenne Twister on CPU, Philox on GPU) are *not* used for noise: their state can be
recovered from outputs, after which the noise could be subtracted.

Gaussian noise is made from those bits with the Box-Muller transform on 53-bit uniforms, in
float64, then rounded to the parameter dtype.  Residual risk (documented in docs/dpsgd.md):
like every floating-point Gaussian sampler (Opacus included) the rounded result is not on a
fixed grid, so a Mironov-style (2012) analysis of low-order bits is not ruled out formally.

Example
-------
>>> from veil.ml.dpsgd._noise import NoiseSource
>>> src = NoiseSource()
>>> src.normal((2, 3), std=1.0).shape
torch.Size([2, 3])
"""

from __future__ import annotations

import math
import os
import warnings
from typing import Any

import numpy as np
import torch

from veil.errors import ConfigError, InsecureRandomWarning

__all__ = ["NoiseSource"]


class _LocalAesCtr:
    """AES-256-CTR keystream keyed from os.urandom (fallback when veil.dp._rng is absent)."""

    secure = True

    def __init__(self) -> None:
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

        key, nonce = os.urandom(32), os.urandom(16)
        self._enc = Cipher(algorithms.AES(key), modes.CTR(nonce)).encryptor()

    def raw(self, n: int) -> np.ndarray:
        return np.frombuffer(self._enc.update(bytes(8 * int(n))), dtype="<u8")


class _TorchBits:
    """Reproducible, insecure bits from a seeded torch generator (tests only)."""

    secure = False

    def __init__(self, seed: int) -> None:
        self._gen = torch.Generator().manual_seed(int(seed))

    def raw(self, n: int) -> np.ndarray:
        hi = torch.randint(0, 2**32, (int(n),), generator=self._gen, dtype=torch.int64)
        lo = torch.randint(0, 2**32, (int(n),), generator=self._gen, dtype=torch.int64)
        return (hi.numpy().astype(np.uint64) << np.uint64(32)) | lo.numpy().astype(np.uint64)


def _secure_bits() -> Any:
    try:
        from veil.dp._rng import SecureRandom

        return SecureRandom()
    except Exception:  # the DP core is optional here; fall back to the local stream
        return _LocalAesCtr()


class NoiseSource:
    """Gaussian noise and uniform draws for DP-SGD.

    Parameters
    ----------
    secure : bool, default True
        Use a cryptographically secure generator.  ``False`` requires ``seed`` and is for
        reproducible tests only (an :class:`~veil.errors.InsecureRandomWarning` is emitted).
    seed : int, optional
        Seed of the insecure generator; required when ``secure=False``, refused otherwise.

    Raises
    ------
    ConfigError
        ``secure=False`` without ``seed``, or ``seed`` with ``secure=True``.

    Examples
    --------
    >>> NoiseSource()  # the default: secure, not reproducible
    NoiseSource(secure=True)
    >>> a = NoiseSource(secure=False, seed=1).normal((3,), std=2.0)
    >>> b = NoiseSource(secure=False, seed=1).normal((3,), std=2.0)
    >>> torch.equal(a, b)  # a seed reproduces the noise: tests only
    True
    >>> NoiseSource(secure=False)
    Traceback (most recent call last):
    ...
    veil.errors.ConfigError: secure_rng=False needs an explicit seed (it is for reproducible ...
    """

    def __init__(self, secure: bool = True, seed: int | None = None) -> None:
        if secure and seed is not None:
            raise ConfigError("a seed makes the noise reproducible: pass secure_rng=False too")
        if secure:
            self._bits: Any = _secure_bits()
        elif seed is None:
            # a silent default seed would give every "insecure" run the same noise, which
            # anyone could regenerate and subtract
            raise ConfigError(
                "secure_rng=False needs an explicit seed (it is for reproducible tests only); "
                "pass seed=<int>, or keep secure_rng=True"
            )
        else:
            warnings.warn(
                "secure_rng=False: DP-SGD noise and sampling are reproducible and NOT secure; "
                "use this for tests only",
                InsecureRandomWarning,
                stacklevel=3,
            )
            self._bits = _TorchBits(seed)
        self.secure = bool(getattr(self._bits, "secure", False))

    def __repr__(self) -> str:
        return f"NoiseSource(secure={self.secure})"

    def uniform(self, n: int) -> np.ndarray:
        """``n`` float64 uniforms on the open interval (0, 1) with 53 random bits."""
        words = np.asarray(self._bits.raw(int(n)), dtype=np.uint64)
        return ((words >> np.uint64(11)).astype(np.float64) + 0.5) * (2.0**-53)

    def normal(
        self,
        shape: tuple[int, ...] | torch.Size,
        std: float,
        *,
        dtype: torch.dtype = torch.float32,
        device: torch.device | str | None = None,
    ) -> torch.Tensor:
        """A tensor of i.i.d. ``N(0, std^2)`` draws (Box-Muller on secure uniforms)."""
        n = int(math.prod(shape))
        pairs = (n + 1) // 2
        u = torch.from_numpy(self.uniform(2 * pairs))
        r = torch.sqrt(-2.0 * torch.log(u[:pairs]))
        theta = (2.0 * math.pi) * u[pairs:]
        z = torch.cat([r * torch.cos(theta), r * torch.sin(theta)])[:n]
        return (z * float(std)).to(dtype=dtype, device=device).reshape(shape)
