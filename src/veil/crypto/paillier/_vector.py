"""Packed encrypted vectors: many fixed-point slots per Paillier ciphertext.

A value ``x`` is encoded as ``v = round(x * 2**frac_bits)`` with ``|v| < 2**(int_bits +
frac_bits)`` and stored with a public offset as ``u = v + 2**(int_bits + frac_bits)``, a
non-negative integer of ``value_bits = int_bits + frac_bits + 1`` bits.  A slot is ``value_bits
+ ceil(log2(max_parties))`` bits wide, so the sum of up to ``max_parties`` vectors never carries
into the next slot; ``floor((|n| - 1) / slot_bits)`` slots fit one plaintext (31 to 35 for a
2048-bit key with the defaults), dividing the number of encryptions and decryptions by that
factor compared with one ciphertext per value.  The number of vectors summed is tracked and
checked at every addition (never wrapped), and the offsets are removed at decryption.
This is the batching idea of e.g. Ge and Zhou ("Efficient packing for Paillier-based secure
aggregation") and BatchCrypt (Zhang et al., USENIX ATC 2020), with an exact offset encoding.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from veil.errors import ConfigError, InputError

from .._errors import CryptoError, CryptoOverflowError
from .._gmp import require_gmpy2

if TYPE_CHECKING:
    from ._keys import PaillierPrivateKey, PaillierPublicKey

__all__ = ["PackingSpec", "EncryptedVector"]


@dataclass(frozen=True)
class PackingSpec:
    """Public layout of a packed vector.

    Parameters
    ----------
    frac_bits : int, default 32
        Fixed-point fractional bits (resolution ``2**-frac_bits``; ints: use 0).
    int_bits : int, default 20
        Values must satisfy ``|x| < 2**int_bits``.
    max_parties : int, default 16
        How many vectors may be added together (headroom per slot).

    Examples
    --------
    >>> spec = PackingSpec(frac_bits=32, int_bits=20, max_parties=16)
    >>> spec.slot_bits, spec.slots(2048)
    (57, 35)
    """

    frac_bits: int = 32
    int_bits: int = 20
    max_parties: int = 16

    def __post_init__(self) -> None:
        for name in ("frac_bits", "int_bits", "max_parties"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ConfigError(f"PackingSpec.{name} must be a non-negative integer")
        if self.max_parties < 1:
            raise ConfigError("PackingSpec.max_parties must be at least 1")
        if self.int_bits + self.frac_bits > 62:
            raise ConfigError("PackingSpec needs int_bits + frac_bits <= 62")

    @property
    def value_bits(self) -> int:
        """Bits of one offset-encoded value."""
        return self.int_bits + self.frac_bits + 1

    @property
    def slot_bits(self) -> int:
        """Bits of one slot (value plus headroom for ``max_parties`` additions)."""
        return self.value_bits + math.ceil(math.log2(self.max_parties))

    def slots(self, n_length: int) -> int:
        """Slots per ciphertext for an ``n_length``-bit modulus."""
        k = (n_length - 1) // self.slot_bits
        if k < 1:
            raise ConfigError(f"a {n_length}-bit key cannot hold a {self.slot_bits}-bit slot")
        return k

    def encode(self, values: object) -> tuple[np.ndarray, tuple[int, ...]]:
        """Offset-encode an array: returns (``uint64`` values ``u``, original shape).

        The encoding is exact integer arithmetic: integer (and boolean) arrays are shifted
        by ``frac_bits`` without passing through float64, and floats are scaled by the power
        of two ``2**frac_bits`` (exact in float64) and rounded half-to-even with
        :func:`numpy.rint`, an exact integer that is converted to ``int64`` exactly because
        ``|v| < 2**62``.  The offset is added in ``int64``.
        """
        arr = np.asarray(values)
        if arr.dtype.kind not in "biuf":
            raise InputError("encrypt_vector needs a numeric array")
        shape = tuple(int(s) for s in arr.shape)
        bits = self.int_bits + self.frac_bits
        flat = arr.reshape(-1)
        if flat.dtype.kind in "bu":
            too_big = flat.size and int(flat.max()) >= 1 << self.int_bits
            v = None if too_big else flat.astype(np.int64) << self.frac_bits
        elif flat.dtype.kind == "i":
            lo, hi = (int(flat.min()), int(flat.max())) if flat.size else (0, 0)
            too_big = max(-lo, hi) >= 1 << self.int_bits
            v = None if too_big else flat.astype(np.int64) << self.frac_bits
        else:
            flat = flat.astype(np.float64)
            if not np.all(np.isfinite(flat)):
                raise InputError("cannot encrypt NaN or infinite values")
            scaled = np.rint(flat * float(1 << self.frac_bits))  # exact: a power-of-two scale
            too_big = scaled.size and float(np.max(np.abs(scaled))) >= float(1 << bits)
            v = None if too_big else scaled.astype(np.int64)
        if v is None:
            raise CryptoOverflowError(
                f"values must satisfy |x| < 2**{self.int_bits} for this PackingSpec; "
                "increase int_bits"
            )
        return (v + np.int64(1 << bits)).astype(np.uint64), shape

    def decode(self, values: list[int], shape: tuple[int, ...]) -> np.ndarray:
        """Turn exact slot sums (offsets removed) into the output array.

        ``frac_bits == 0``: an ``int64`` array, or an ``object`` array of Python ints when a
        sum does not fit ``int64`` (possible only for ``int_bits`` close to 62 with several
        terms).  Otherwise ``float64``, each value the nearest double to ``v / 2**frac_bits``.
        """
        fits = not values or (-(1 << 63) <= min(values) and max(values) < 1 << 63)
        if self.frac_bits == 0:
            out = np.array(values, dtype=np.int64 if fits else object)
        elif fits:
            out = np.array(values, dtype=np.int64).astype(np.float64) / float(1 << self.frac_bits)
        else:  # Python int -> float is correctly rounded; the power-of-two division is exact
            scale = float(1 << self.frac_bits)
            out = np.array([float(v) / scale for v in values], dtype=np.float64)
        return out.reshape(shape)


class EncryptedVector:
    """A numpy array encrypted as packed Paillier ciphertexts.

    Create with :meth:`encrypt` (or ``public_key.encrypt_vector``); add with ``+`` (another
    encrypted vector or a plaintext array) and multiply by a non-negative integer weight;
    decrypt with ``private_key.decrypt_vector``.  Ciphertexts given to the constructor are
    validated one by one (``0 < c < n^2``, ``gcd(c, n) = 1``, else :class:`CryptoError`);
    those produced by encryption and homomorphic operations are not re-checked.

    Examples
    --------
    >>> import numpy as np
    >>> from veil.crypto.paillier import generate_paillier_keypair
    >>> pk, sk = generate_paillier_keypair(n_length=512, insecure=True)
    >>> a = pk.encrypt_vector(np.array([1.5, -2.0, 3.25]))
    >>> b = pk.encrypt_vector(np.array([0.5, 0.5, -0.25]))
    >>> sk.decrypt_vector(a + b).tolist()
    [2.0, -1.5, 3.0]
    """

    #: make ``ndarray + EncryptedVector`` call our ``__radd__`` instead of broadcasting
    __array_ufunc__ = None

    def __init__(
        self,
        public_key: PaillierPublicKey,
        ciphertexts: Sequence[Any],
        shape: tuple[int, ...],
        spec: PackingSpec,
        n_terms: int = 1,
        *,
        obfuscated: bool = True,
    ) -> None:
        check = public_key.check_ciphertext
        self._setup(public_key, [check(c) for c in ciphertexts], shape, spec, n_terms, obfuscated)

    @classmethod
    def _trusted(
        cls,
        public_key: PaillierPublicKey,
        ciphertexts: list[Any],
        shape: tuple[int, ...],
        spec: PackingSpec,
        n_terms: int,
        obfuscated: bool,
    ) -> EncryptedVector:
        """Wrap ciphertexts produced by this package (units mod ``n^2``): no per-item check."""
        obj = cls.__new__(cls)
        obj._setup(public_key, ciphertexts, shape, spec, n_terms, obfuscated)
        return obj

    def _setup(
        self,
        public_key: PaillierPublicKey,
        ciphertexts: list[Any],
        shape: tuple[int, ...],
        spec: PackingSpec,
        n_terms: int,
        obfuscated: bool,
    ) -> None:
        self.public_key = public_key
        self.ciphertexts = ciphertexts
        self.shape = tuple(shape)
        self.spec = spec
        self.n_terms = int(n_terms)
        self._obfuscated = obfuscated
        expected = -(-self.size // spec.slots(public_key.n_length)) if self.size else 0
        if len(self.ciphertexts) != expected:
            raise CryptoError(
                f"an encrypted vector of {self.size} values needs {expected} ciphertexts, "
                f"got {len(self.ciphertexts)}"
            )
        if not 1 <= self.n_terms <= spec.max_parties:
            raise CryptoError(f"n_terms must lie in [1, {spec.max_parties}]")

    def __getstate__(self) -> dict[str, Any]:
        # like dumps: derived ciphertexts are re-randomized before they leave the process
        # (pickled c^k next to c would give away a small integer weight k)
        if not self._obfuscated:
            self.obfuscate()
        return dict(self.__dict__)

    @property
    def size(self) -> int:
        """Number of values."""
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1

    def __repr__(self) -> str:
        return (
            f"<EncryptedVector shape={self.shape} ciphertexts={len(self.ciphertexts)} "
            f"terms={self.n_terms} key={self.public_key.fingerprint}>"
        )

    # -- packing ------------------------------------------------------------------------------
    @staticmethod
    def _pack(u: np.ndarray, slots: int, width: int) -> list[int]:
        vals = u.tolist()
        out = []
        for start in range(0, len(vals), slots):
            m = 0
            for v in reversed(vals[start : start + slots]):
                m = (m << width) | v
            out.append(m)
        return out

    @classmethod
    def encrypt(
        cls, public_key: PaillierPublicKey, values: object, spec: PackingSpec | None = None
    ) -> EncryptedVector:
        """Encrypt an array (any shape) under ``public_key`` with the packing ``spec``."""
        spec = spec or PackingSpec()
        u, shape = spec.encode(values)
        plains = cls._pack(u, spec.slots(public_key.n_length), spec.slot_bits)
        if len(plains) > 8:
            public_key.precompute()
        cts = [public_key.raw_encrypt(m) for m in plains]
        return cls._trusted(public_key, cts, shape, spec, 1, True)

    # -- homomorphic operations ---------------------------------------------------------------
    def _check(self, other: EncryptedVector) -> None:
        if other.public_key != self.public_key:
            raise CryptoError("cannot add vectors encrypted under different public keys")
        if other.spec != self.spec:
            raise CryptoError(f"packing specs differ ({self.spec} vs {other.spec})")
        if other.shape != self.shape:
            raise CryptoError(f"shapes differ ({self.shape} vs {other.shape})")

    def _terms(self, n_terms: int) -> int:
        if n_terms > self.spec.max_parties:
            raise CryptoOverflowError(
                f"adding {n_terms} vectors exceeds the packing headroom "
                f"max_parties={self.spec.max_parties}; slots would overflow into each other"
            )
        return n_terms

    def __add__(self, other: object) -> EncryptedVector:
        nsq = self.public_key.nsquare
        if isinstance(other, EncryptedVector):
            self._check(other)
            terms = self._terms(self.n_terms + other.n_terms)
            cts = [a * b % nsq for a, b in zip(self.ciphertexts, other.ciphertexts)]
        elif isinstance(other, (np.ndarray, list, tuple)):
            arr = np.asarray(other)
            if arr.shape != self.shape:
                raise CryptoError(f"shapes differ ({self.shape} vs {arr.shape})")
            terms = self._terms(self.n_terms + 1)
            u, _ = self.spec.encode(arr)
            n = self.public_key.n
            plains = self._pack(u, self.spec.slots(self.public_key.n_length), self.spec.slot_bits)
            cts = [c * ((1 + m * n) % nsq) % nsq for c, m in zip(self.ciphertexts, plains)]
        else:
            return NotImplemented
        return EncryptedVector._trusted(self.public_key, cts, self.shape, self.spec, terms, False)

    __radd__ = __add__

    def __mul__(self, k: object) -> EncryptedVector:
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or k < 1:
            raise CryptoError("a packed vector can only be multiplied by a positive integer weight")
        terms = self._terms(self.n_terms * int(k))
        gmp = require_gmpy2()
        nsq = self.public_key.nsquare
        cts = [gmp.powmod(c, int(k), nsq) for c in self.ciphertexts]
        return EncryptedVector._trusted(self.public_key, cts, self.shape, self.spec, terms, False)

    __rmul__ = __mul__

    def obfuscate(self) -> None:
        """Re-randomize every ciphertext (done before serialization of derived vectors)."""
        pk = self.public_key
        if len(self.ciphertexts) > 8:
            pk.precompute()
        self.ciphertexts = [c * pk.random_factor() % pk.nsquare for c in self.ciphertexts]
        self._obfuscated = True

    # -- decryption ---------------------------------------------------------------------------
    def decrypt(self, private_key: PaillierPrivateKey) -> np.ndarray:
        """Decrypt to a ``float64`` array (integers when ``frac_bits == 0``) of ``shape``.

        The slot sums are exact integers; see :meth:`PackingSpec.decode` for the output type.

        Raises
        ------
        CryptoError
            Wrong key, or a plaintext that cannot come from this layout (tampering).
        """
        if private_key.public_key != self.public_key:
            raise CryptoError("the vector was encrypted under a different public key")
        spec = self.spec
        width, slots = spec.slot_bits, spec.slots(self.public_key.n_length)
        mask = (1 << width) - 1
        top = 1 << (width * slots)
        offset = self.n_terms << (spec.int_bits + spec.frac_bits)
        vmax = self.n_terms * ((1 << (spec.int_bits + spec.frac_bits + 1)) - 1)
        out: list[int] = []
        remaining = self.size
        for c in self.ciphertexts:
            m = int(private_key.raw_decrypt(c))
            if m >= top:
                raise CryptoError("a ciphertext decrypts outside the packing layout (tampered)")
            for _ in range(min(slots, remaining)):
                v = m & mask
                if not self.n_terms <= v <= vmax:
                    raise CryptoError("a slot exceeds its headroom (tampered ciphertext)")
                out.append(v - offset)
                m >>= width
            remaining -= slots
            if remaining <= 0 and m:
                raise CryptoError("unused slots are not empty (tampered ciphertext or shape)")
        return spec.decode(out, self.shape)
