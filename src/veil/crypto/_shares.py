"""The :class:`Share` object shared by the linear schemes (additive and Shamir).

Shares of the same sharing (or of sharings combined by the same operations) support local
homomorphic operations: ``share_a + share_b`` is a share of ``secret_a + secret_b``,
``k * share`` a share of ``k * secret`` for a public integer ``k``, ``-share`` a share of the
negated secret.  Operands are checked to belong to the same scheme, modulus, threshold,
party index, encoding and shape; the public magnitude bound is tracked so that a result that
could wrap around the modulus raises :class:`CryptoOverflowError` instead of reconstructing
garbage.
"""

from __future__ import annotations

import hashlib
import hmac
import math
from dataclasses import dataclass, replace

import numpy as np

from veil.errors import ConfigError

from ._encoding import RING64, capacity
from ._errors import CryptoError, CryptoOverflowError
from ._field import PrimeField

__all__ = ["Share", "check_mac_key", "combine_ids", "exact_values"]


_ID_SPACE = 1 << 128
#: Shortest HMAC key accepted (128 bits): an empty or short key makes every tag forgeable.
MIN_MAC_KEY_BYTES = 16


def check_mac_key(mac_key: object) -> bytes:
    """Return ``mac_key`` as bytes, refusing anything but a bytes-like key of 16+ bytes.

    Parameters
    ----------
    mac_key : bytes
        The dealer's HMAC-SHA256 key (e.g. ``secrets.token_bytes(32)``).

    Returns
    -------
    bytes
        The key.

    Raises
    ------
    ConfigError
        Text, a number, or fewer than :data:`MIN_MAC_KEY_BYTES` bytes: with ``b""`` (an unset
        variable, say) anyone could compute valid tags for forged shares.

    Examples
    --------
    >>> len(check_mac_key(bytes(32)))
    32
    """
    if not isinstance(mac_key, (bytes, bytearray, memoryview)):
        raise ConfigError(
            f"mac_key must be bytes (e.g. secrets.token_bytes(32)), got {type(mac_key).__name__}"
        )
    key = bytes(mac_key)
    if len(key) < MIN_MAC_KEY_BYTES:
        raise ConfigError(
            f"mac_key must be at least {MIN_MAC_KEY_BYTES} bytes, got {len(key)}: a short key "
            "lets anyone forge share tags"
        )
    return key


def combine_ids(*terms: tuple[bytes, int]) -> bytes:
    """Identifier of the sharing ``sum_j c_j * (sharing j)`` derived from the dealings' ids.

    Ids are read as integers modulo ``2**128`` and combined linearly, so the identifier
    depends on the linear combination only, not on the order or grouping of the operations:
    parties that add the same shares in different orders hold shares of one sharing.

    Examples
    --------
    >>> a, b = bytes(15) + b"\x01", bytes(15) + b"\x02"
    >>> combine_ids((a, 1), (b, 3)) == combine_ids((b, 3), (a, 1)) == bytes(15) + b"\x07"
    True
    """
    total = sum(c * int.from_bytes(sid, "big") for sid, c in terms)
    return (total % _ID_SPACE).to_bytes(16, "big")


def exact_values(share: Share) -> Share:
    """``share`` with its values as an exact ``uint64`` residue array, or a :class:`CryptoError`.

    Shares that went through another representation (JSON, a list, pandas) come back as
    Python ints, ``int64`` or ``object`` arrays -- converted exactly here -- or as floats, text,
    negative or out-of-range numbers, or the wrong number of values, which field arithmetic
    would otherwise turn into a wrong secret without any error.

    Parameters
    ----------
    share : Share
        A share to reconstruct from.

    Returns
    -------
    Share
        The same share, its ``values`` a flat ``uint64`` array (the object itself when they
        already are one).

    Raises
    ------
    CryptoError
        Values that are not integers in ``[0, modulus)``, or not one per secret element.
    """
    values = share.values
    size = math.prod(share.shape)
    if not (isinstance(values, np.ndarray) and values.dtype == np.uint64):
        # a list of Python ints stays exact as objects (numpy would make mixed big ints float)
        arr = (
            values if isinstance(values, np.ndarray) else np.array(values, dtype=object)
        ).reshape(-1)
        if arr.dtype.kind == "O":  # Python ints, possibly above 2**63
            flat = arr.tolist()
            if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in flat):
                raise CryptoError(f"share {share.index} values are not integers")
            if any(v < 0 or v >= share.modulus for v in flat):
                raise CryptoError(f"share {share.index} has values outside [0, modulus)")
            arr = np.array(flat, dtype=np.uint64)
        elif arr.dtype.kind not in "iu":
            raise CryptoError(f"share {share.index} values are not integers ({arr.dtype})")
        elif arr.size and int(arr.min()) < 0:
            raise CryptoError(f"share {share.index} has values outside [0, modulus)")
        values = arr.astype(np.uint64)
    if values.ndim != 1 or values.size != size:
        raise CryptoError(f"share {share.index} has the wrong length")
    if share.modulus != RING64 and values.size and int(values.max()) >= share.modulus:
        raise CryptoError(f"share {share.index} has values outside [0, modulus)")
    return share if values is share.values else replace(share, values=values)


@dataclass(frozen=True, eq=False)
class Share:
    """One party's share of a (possibly vector-valued) secret.

    Attributes
    ----------
    scheme : str
        ``"additive"`` or ``"shamir"``.
    index : int
        The party index (1-based); for Shamir the evaluation point ``x``.
    threshold : int
        Shares needed to reconstruct (``n`` for additive sharing).
    n : int
        Number of shares dealt.
    modulus : int
        The prime ``p`` or ``2**64`` for the ring ``Z_{2**64}``.
    values : numpy.ndarray
        Flattened ``uint64`` residues.
    shape : tuple of int
        Shape of the secret array.
    frac_bits : int or None
        Fixed-point fractional bits (``None`` for integer secrets).
    bound : int
        Public upper bound on the magnitude of each encoded secret integer.
    sharing_id : bytes
        Random identifier of the dealing; homomorphic operations combine ids linearly (see
        :func:`combine_ids`), so the same combination computed in any order has one id.
    tag : bytes or None
        HMAC-SHA256 authentication tag set by the dealer when a ``mac_key`` was given.

    Examples
    --------
    >>> import numpy as np
    >>> from veil.crypto import shamir_share, shamir_reconstruct
    >>> a = shamir_share(np.array([1, 2]), threshold=2, n=3)
    >>> b = shamir_share(np.array([10, 20]), threshold=2, n=3)
    >>> total = [x + 3 * y for x, y in zip(a, b)]
    >>> shamir_reconstruct(total[1:]).tolist()
    [31, 62]
    """

    scheme: str
    index: int
    threshold: int
    n: int
    modulus: int
    values: np.ndarray
    shape: tuple[int, ...]
    frac_bits: int | None
    bound: int
    sharing_id: bytes
    tag: bytes | None = None

    def __repr__(self) -> str:  # never show share values
        return (
            f"Share(scheme={self.scheme!r}, index={self.index}, threshold={self.threshold}, "
            f"n={self.n}, shape={self.shape}, frac_bits={self.frac_bits})"
        )

    # -- authentication ---------------------------------------------------------------------
    def header(self) -> bytes:
        """Public metadata bound into the authentication tag."""
        meta = (
            f"veil-share|{self.scheme}|{self.index}|{self.threshold}|{self.n}|{self.modulus}|"
            f"{self.shape}|{self.frac_bits}|{self.bound}|"
        )
        return meta.encode() + self.sharing_id

    def compute_tag(self, mac_key: bytes) -> bytes:
        """HMAC-SHA256 of the header and the share values under ``mac_key``."""
        mac = hmac.new(bytes(mac_key), self.header(), hashlib.sha256)
        mac.update(np.ascontiguousarray(self.values, dtype="<u8").tobytes())
        return mac.digest()

    def verify(self, mac_key: bytes) -> bool:
        """Return whether the share's tag is present and valid under ``mac_key``."""
        return self.tag is not None and hmac.compare_digest(self.tag, self.compute_tag(mac_key))

    # -- homomorphic operations -------------------------------------------------------------
    def _check_compatible(self, other: Share) -> None:
        for attr in ("scheme", "index", "threshold", "n", "modulus", "shape", "frac_bits"):
            mine, theirs = getattr(self, attr), getattr(other, attr)
            if mine != theirs:
                raise CryptoError(
                    f"cannot combine shares with different {attr} ({mine!r} vs {theirs!r})"
                )

    def _arith(self) -> PrimeField | None:
        return None if self.modulus == RING64 else PrimeField(self.modulus)

    def _with(self, values: np.ndarray, bound: int, sharing_id: bytes) -> Share:
        if bound > capacity(self.modulus):
            raise CryptoOverflowError(
                f"the result could exceed the largest representable magnitude "
                f"{capacity(self.modulus)} (public bound {bound}); share smaller values or "
                "use a larger field"
            )
        return replace(self, values=values, bound=bound, sharing_id=sharing_id, tag=None)

    def __add__(self, other: object) -> Share:
        if not isinstance(other, Share):
            return NotImplemented
        self._check_compatible(other)
        field = self._arith()
        vals = self.values + other.values if field is None else field.add(self.values, other.values)
        sid = combine_ids((self.sharing_id, 1), (other.sharing_id, 1))
        return self._with(vals, self.bound + other.bound, sid)

    def __neg__(self) -> Share:
        field = self._arith()
        vals = (np.uint64(0) - self.values) if field is None else field.neg(self.values)
        return self._with(vals, self.bound, combine_ids((self.sharing_id, -1)))

    def __sub__(self, other: object) -> Share:
        if not isinstance(other, Share):
            return NotImplemented
        return self + (-other)

    def __mul__(self, k: object) -> Share:
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
            return NotImplemented
        k = int(k)
        field = self._arith()
        if field is None:
            vals = self.values * np.uint64(k % RING64)
        else:
            vals = field.mul(self.values, k % self.modulus)
        sid = combine_ids((self.sharing_id, k))
        return self._with(vals, self.bound * abs(k), sid)

    __rmul__ = __mul__
