"""Cryptographically secure, vectorized randomness for differential privacy.

Every noise sample Veil adds for differential privacy comes from :class:`SecureRandom`.

Design
------
* **Generator.** :class:`SecureRandom` is a deterministic random bit generator in the style of
  NIST SP 800-90A ``CTR_DRBG``: the keystream of AES-256 in counter mode (OpenSSL through the
  ``cryptography`` package, AES-NI accelerated).  The 256-bit key and 128-bit initial counter
  come from the operating system's CSPRNG (:func:`os.urandom`).  AES-CTR output is
  indistinguishable from uniform bits to anyone who does not know the key (the PRP/PRF
  security of AES); this is the same construction that ``/dev/urandom`` and most TLS stacks
  rely on.  After every large request, and every refill of the 32 KiB buffer serving small
  requests (served words are zeroed), the generator re-keys itself from its own keystream
  (*backtracking resistance*: a later memory disclosure does not reveal earlier noise) and it
  re-keys from :func:`os.urandom` after a ``fork`` so that parent and child never share noise.
  Producing 8 MB of random bits costs about 4 ms, i.e. hundreds of millions of 64-bit words
  per second, so security costs almost nothing.
* **Why not numpy's PCG64 / Philox?**  They are statistically excellent but *not*
  cryptographically secure: their state can be recovered from a few outputs, after which an
  attacker can subtract the noise.  numpy generators are still accepted through
  :func:`resolve_rng` for reproducible tests, with an :class:`~veil.errors.InsecureRandomWarning`.
* **Reproducibility.** ``resolve_rng(1234)`` returns a :class:`SecureRandom` whose AES key is
  derived from the seed with SHA-256: the same algorithms, bit for bit reproducible, but of
  course not secret.

The samplers built on these bits (exact discrete Laplace / Gaussian, floating-point-safe
continuous Laplace / Gaussian) live in :mod:`veil.dp._samplers`.

Example
-------
>>> from veil.dp._rng import resolve_rng
>>> rng = resolve_rng(None)          # secure generator
>>> rng.random(3).shape
(3,)
"""

from __future__ import annotations

import hashlib
import os
import threading
import warnings
from typing import Any

import numpy as np

from veil.errors import ConfigError, InsecureRandomWarning

__all__ = ["SecureRandom", "NumpyBits", "BitSource", "resolve_rng"]

_CHUNK = 1 << 20  # bytes of zeros encrypted per AES call
_BUFWORDS = 4096  # words of keystream buffered for small requests
_SMALL = 512  # requests up to this many words are served from the buffer


def _aes_ctr(key: bytes, nonce: bytes) -> Any:
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    return Cipher(algorithms.AES(key), modes.CTR(nonce)).encryptor()


class BitSource:
    """Common interface of the bit generators: uniform 64-bit words and derived draws.

    Sub-classes implement :meth:`raw` (``n`` independent uniform ``uint64`` words).  Everything
    else (uniform floats, bounded integers, permutations) is built here, vectorized.
    """

    secure: bool = False

    def raw(self, n: int) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    # ------------------------------------------------------------------ derived draws
    def bytes(self, n: int) -> bytes:
        """``n`` uniform random bytes."""
        words = self.raw((int(n) + 7) // 8)
        return words.tobytes()[: int(n)]

    def random(self, size: int | tuple[int, ...] | None = None) -> Any:
        """Uniform floats on ``[0, 1)`` with 53 random bits (like ``Generator.random``)."""
        n = 1 if size is None else int(np.prod(size))
        out = (self.raw(n) >> np.uint64(11)).astype(np.float64) * 2.0**-53
        return float(out[0]) if size is None else out.reshape(size)

    def integers(
        self, low: int, high: int | None = None, size: int | tuple[int, ...] | None = None
    ) -> Any:
        """Uniform integers on ``[low, high)``, exactly uniform (rejection sampling)."""
        if high is None:
            low, high = 0, low
        span = int(high) - int(low)
        if span <= 0 or span > 2**63:
            raise ConfigError(f"integers: need 0 < high - low <= 2**63, got [{low}, {high})")
        n = 1 if size is None else int(np.prod(size))
        out = uniform_below(self, span, n).astype(np.int64) + np.int64(low)
        return int(out[0]) if size is None else out.reshape(size)

    def permutation(self, x: int | np.ndarray) -> np.ndarray:
        """A uniformly random permutation (of ``range(x)`` or of the array ``x``, copied)."""
        arr = np.arange(x) if isinstance(x, (int, np.integer)) else np.array(x, copy=True)
        n = len(arr)
        if n < 2:
            return arr
        # sort by 64-bit random keys; ties have probability < n^2 / 2^64 and are re-drawn
        while True:
            keys = self.raw(n)
            order = np.argsort(keys, kind="stable")
            sk = keys[order]
            if not np.any(sk[1:] == sk[:-1]):
                return arr[order]

    def shuffle(self, x: np.ndarray) -> None:
        """Shuffle ``x`` in place along its first axis."""
        x[...] = self.permutation(x)

    def choice(self, a: int | np.ndarray, size: int | None = None, replace: bool = True) -> Any:
        """Uniform choice from ``a`` (an int ``n`` means ``range(n)``)."""
        pool = np.arange(a) if isinstance(a, (int, np.integer)) else np.asarray(a)
        n = 1 if size is None else int(size)
        if replace:
            idx = uniform_below(self, len(pool), n).astype(np.int64)
        else:
            if n > len(pool):
                raise ConfigError("choice: cannot take more samples than the population")
            idx = self.permutation(len(pool))[:n]
        out = pool[idx]
        return out[0] if size is None else out

    def numpy(self) -> np.random.Generator:
        """A numpy ``Generator`` seeded from this source, for *non-DP* randomness only.

        Use it for model initialisation or tie-breaking that does not protect privacy; never
        for privacy noise (numpy's bit generators are not cryptographically secure).
        """
        return np.random.Generator(np.random.PCG64(self.raw(4).tolist()))


class SecureRandom(BitSource):
    """AES-256-CTR deterministic random bit generator, keyed from :func:`os.urandom`.

    Parameters
    ----------
    seed : int, bytes or None
        ``None`` (the default and the only secure choice) keys the generator from the
        operating system.  An int or bytes seed derives the key with SHA-256: reproducible,
        for tests only (:func:`resolve_rng` warns).

    Notes
    -----
    Construction after NIST SP 800-90A ``CTR_DRBG`` (Barker & Kelsey, 2015): AES in counter mode
    with re-keying after each request for backtracking resistance, and fork detection.

    Examples
    --------
    >>> rng = SecureRandom()
    >>> int(rng.integers(0, 10)) in range(10)
    True
    """

    def __init__(self, seed: int | bytes | None = None) -> None:
        self._lock = threading.Lock()
        self._seeded = seed is not None
        self.secure = not self._seeded
        if seed is None:
            material = os.urandom(48)
        else:
            if isinstance(seed, (int, np.integer)):
                seed = int(seed).to_bytes(32, "little", signed=True)
            material = hashlib.sha512(b"veil-dp-seed:" + bytes(seed)).digest()[:48]
        self._pid = os.getpid()
        self._buf, self._pos = np.empty(0, dtype=np.uint64), 0
        self._key(material)

    def _key(self, material: bytes) -> None:
        self._enc = _aes_ctr(material[:32], material[32:48])

    def __repr__(self) -> str:  # never show key material
        return f"SecureRandom(secure={self.secure})"

    def raw(self, n: int) -> np.ndarray:
        """``n`` uniform 64-bit words.

        Small requests are served from a 32 KiB buffer of keystream (re-keyed at each refill),
        large ones straight from the cipher (re-keyed after the request).
        """
        n = int(n)
        if n <= 0:
            return np.empty(0, dtype=np.uint64)
        with self._lock:
            if not self._seeded and os.getpid() != self._pid:  # forked: never share noise
                self._pid = os.getpid()
                self._key(os.urandom(48))
                self._buf, self._pos = np.empty(0, dtype=np.uint64), 0
            if n <= _SMALL:
                if self._pos + n > self._buf.size:
                    self._buf, self._pos = self._stream(_BUFWORDS), 0
                out = self._buf[self._pos : self._pos + n].copy()
                self._buf[self._pos : self._pos + n] = 0  # served words are not kept
                self._pos += n
                return out
            return self._stream(n)

    def _stream(self, n: int) -> np.ndarray:
        nbytes = 8 * n
        buf = bytearray(nbytes + 16)  # update_into needs block_size - 1 spare bytes
        view = memoryview(buf)
        zeros = _zeros(min(nbytes, _CHUNK))
        pos = 0
        while pos < nbytes:
            step = min(_CHUNK, nbytes - pos)
            self._enc.update_into(zeros[:step], view[pos : pos + step + 16])
            pos += step
        self._key(self._enc.update(bytes(48)))  # backtracking resistance
        return np.frombuffer(buf, dtype="<u8", count=n)


_ZEROS = memoryview(bytes(_CHUNK))


def _zeros(n: int) -> memoryview:
    return _ZEROS[:n]


class NumpyBits(BitSource):
    """Adapter turning a numpy ``Generator`` / ``RandomState`` into a :class:`BitSource`.

    Reproducible but **not** secure; used only when a caller passes one explicitly.
    """

    def __init__(self, generator: np.random.Generator | np.random.RandomState) -> None:
        self._gen = generator

    def __repr__(self) -> str:
        return f"NumpyBits({type(self._gen).__name__})"

    def raw(self, n: int) -> np.ndarray:
        n = int(n)
        if n <= 0:
            return np.empty(0, dtype=np.uint64)
        return np.frombuffer(bytearray(self._gen.bytes(8 * n)), dtype="<u8")


_DEFAULT: SecureRandom | None = None
_DEFAULT_LOCK = threading.Lock()


def _default() -> SecureRandom:
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None:
            _DEFAULT = SecureRandom()
        return _DEFAULT


def resolve_rng(random_state: Any = None) -> BitSource:
    """Turn a diffprivlib-style ``random_state`` into a bit source.

    Parameters
    ----------
    random_state : None, int, numpy Generator/RandomState or BitSource
        ``None`` gives the process-wide secure generator.  An int seeds a reproducible
        :class:`SecureRandom`; a numpy generator is wrapped.  Both are for tests and emit an
        :class:`~veil.errors.InsecureRandomWarning` (Python shows it once per call site).

    Returns
    -------
    BitSource

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     a = resolve_rng(7).random(2); b = resolve_rng(7).random(2)
    >>> bool((a == b).all())
    True
    """
    if random_state is None:
        return _default()
    if isinstance(random_state, BitSource):
        if not random_state.secure:
            _warn()
        return random_state
    if isinstance(random_state, (bool, np.bool_)):
        raise ConfigError("random_state must be None, an int seed or a numpy generator")
    if isinstance(random_state, (int, np.integer)):
        _warn()
        return SecureRandom(int(random_state))
    if isinstance(random_state, (np.random.Generator, np.random.RandomState)):
        _warn()
        return NumpyBits(random_state)
    raise ConfigError(
        f"random_state must be None, an int seed or a numpy generator, "
        f"not {type(random_state).__name__}"
    )


def _warn() -> None:
    warnings.warn(
        "an explicit random_state makes differential-privacy noise reproducible and therefore "
        "NOT secure; use it for tests only",
        InsecureRandomWarning,
        stacklevel=3,
    )


def _words_below(rng: BitSource, n: int, rem: Any) -> np.ndarray:
    """``n`` raw 64-bit words ``r`` with ``r < 2^64 - rem``, redrawing the others.

    ``rem`` (``2^64 mod m``, a ``uint64`` scalar or one per draw) may be 0: ``r < 2^64 - rem``
    is tested as ``r <= ~rem``, which then keeps every word.
    """
    top = ~rem
    out = rng.raw(n)
    bad = out > top
    while bad.any():
        idx = np.flatnonzero(bad)
        out[idx] = rng.raw(idx.size)
        bad[idx] = out[idx] > (top[idx] if np.ndim(top) else top)
    return out


def uniform_below(rng: BitSource, m: int | np.ndarray, n: int) -> np.ndarray:
    """``n`` exactly uniform integers on ``[0, m)`` as ``uint64`` (``1 <= m <= 2**63``).

    Rejection sampling: a 64-bit word ``r`` is kept when ``r < 2^64 - (2^64 mod m)``, then
    reduced modulo ``m``.  ``m`` may also be an array of ``n`` bounds, one per draw.
    """
    if np.ndim(m):
        mm = np.asarray(m, dtype=np.uint64)
        return _words_below(rng, n, (np.uint64(0) - mm) % mm) % mm  # 2^64 mod m, per draw
    m = int(m)
    if m == 1:
        return np.zeros(n, dtype=np.uint64)
    if m & (m - 1) == 0:  # power of two: take the top bits
        shift = np.uint64(64 - (m.bit_length() - 1))
        return rng.raw(n) >> shift
    return _words_below(rng, n, np.uint64(2**64 % m)) % np.uint64(m)
