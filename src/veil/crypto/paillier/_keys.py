"""Paillier key pairs: generation, encryption with fast randomness, CRT decryption.

Paillier, "Public-key cryptosystems based on composite degree residuosity classes",
EUROCRYPT 1999.  Veil uses ``g = n + 1`` (so ``g^m = 1 + m n mod n^2``), decryption with the
Chinese remainder theorem modulo ``p^2`` and ``q^2`` (Paillier, section 7) and the fixed-base
short-exponent randomness of Damgard-Jurik-Nielsen (:mod:`._fixedbase`).
"""

from __future__ import annotations

import hashlib
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from veil._checks import user_stacklevel
from veil.errors import ConfigError

from .._errors import CryptoError, CryptoOverflowError, InsecureKeyWarning
from .._gmp import require_gmpy2
from .._random import random_bits
from ._fixedbase import FixedBaseRandomness

if TYPE_CHECKING:
    from ._number import EncryptedNumber
    from ._vector import EncryptedVector, PackingSpec

__all__ = [
    "PaillierPublicKey",
    "PaillierPrivateKey",
    "generate_paillier_keypair",
    "DEFAULT_KEY_BITS",
    "RECOMMENDED_KEY_BITS",
]

DEFAULT_KEY_BITS = 2048
RECOMMENDED_KEY_BITS = 3072
_MIN_SECURE_BITS = 2048
_MIN_WARN_BITS = 1024
_MIN_INSECURE_BITS = 64
#: After this many encryptions with one key the fixed-base table is built automatically.
_PRECOMPUTE_AFTER = 32


def check_key_length(n_length: int, insecure: bool, error: type[Exception]) -> None:
    """The key-size policy shared by key generation and key loading.

    Below 64 bits: refused.  Below 1024 bits: refused unless ``insecure``.  Below 2048 bits:
    :class:`InsecureKeyWarning` unless ``insecure``.  ``error`` is the exception raised
    (:class:`ConfigError` for a requested length, :class:`CryptoError` for a given key).
    """
    if n_length < _MIN_INSECURE_BITS:
        raise error(f"a Paillier modulus must have at least {_MIN_INSECURE_BITS} bits")
    if n_length < _MIN_SECURE_BITS and not insecure:
        if n_length < _MIN_WARN_BITS:
            raise error(
                f"a {n_length}-bit Paillier key is insecure; use n_length >= 2048 "
                "(3072 recommended) or pass insecure=True for tests"
            )
        warnings.warn(
            f"a {n_length}-bit Paillier key gives less than 112-bit security; use 2048 bits "
            "or more (3072 recommended), or pass insecure=True to silence this warning",
            InsecureKeyWarning,
            stacklevel=user_stacklevel(),
        )


def _random_prime(bits: int) -> Any:
    gmp = require_gmpy2()
    while True:  # uniform over primes with the two top bits set
        cand = gmp.mpz(random_bits(bits)) | (gmp.mpz(3) << (bits - 2)) | 1
        if gmp.is_prime(cand, 40):
            return cand


class PaillierPublicKey:
    """Paillier public key ``n`` (with ``g = n + 1``).

    Parameters
    ----------
    n : int
        The modulus, a product of two large primes.
    insecure : bool, default False
        Accept a modulus shorter than 1024 bits (tests, demos) and do not warn below 2048
        bits: the key-size policy of :func:`generate_paillier_keypair`.

    Raises
    ------
    CryptoError
        ``n`` is not an integer, is even, is shorter than the key-size policy allows, is a
        prime (probabilistic test) or a perfect square: such a modulus gives no secrecy.

    Attributes
    ----------
    n, nsquare : int
        The modulus and its square.
    max_int : int
        Largest plaintext magnitude: integers in ``[-max_int, max_int]`` are encrypted as
        residues modulo ``n`` (negative ones as ``n - |m|``).

    Examples
    --------
    >>> pk, sk = generate_paillier_keypair(n_length=512, insecure=True)
    >>> sk.decrypt(pk.encrypt(5) + pk.encrypt(3))
    8
    """

    def __init__(self, n: int, *, insecure: bool = False) -> None:
        gmp = require_gmpy2()
        if isinstance(n, bool) or not isinstance(n, int) and not isinstance(n, type(gmp.mpz(0))):
            raise CryptoError("a Paillier modulus must be an integer")
        n = gmp.mpz(n)
        if n < 15 or n % 2 == 0:
            raise CryptoError("invalid Paillier modulus (must be an odd composite > 15)")
        check_key_length(int(n.bit_length()), insecure, CryptoError)
        if gmp.is_square(n) or gmp.is_prime(n, 25):
            raise CryptoError(
                "invalid Paillier modulus: n is a prime or a perfect square, so anyone can "
                "decrypt (a Paillier modulus is a product of two distinct primes)"
            )
        self.n = n
        self.nsquare = n * n
        self.g = n + 1
        self.max_int = int((n - 1) // 2)
        self.n_length = int(n.bit_length())
        self._randomness: FixedBaseRandomness | None = None
        self._count = 0

    def __repr__(self) -> str:
        return f"<PaillierPublicKey {self.fingerprint}, {self.n_length} bits>"

    def __getstate__(self) -> dict[str, Any]:
        # the randomness source (fixed base and its table, up to tens of MiB) is a cache
        # rebuilt on demand: a copy or an unpickled key draws its own fresh base
        state = dict(self.__dict__)
        state["_randomness"], state["_count"] = None, 0
        return state  # the default __setstate__ restores it into __dict__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PaillierPublicKey) and other.n == self.n

    def __hash__(self) -> int:
        return hash(("paillier", int(self.n)))

    @property
    def fingerprint(self) -> str:
        """Short public identifier of the key (SHA-256 of ``n``, 16 hex digits)."""
        return hashlib.sha256(str(self.n).encode()).hexdigest()[:16]  # mpz: no digit limit

    def check_ciphertext(self, ciphertext: object) -> Any:
        """Validate a ciphertext given from outside; returns it as an ``mpz``.

        A Paillier ciphertext is a unit modulo ``n^2``: ``0 < c < n^2`` and ``gcd(c, n) = 1``.
        Anything else decrypts to garbage (or, through a factor of ``n``, reveals it) and has
        no inverse for negation.  Ciphertexts produced by this package skip the check.

        Raises
        ------
        CryptoError
            Not an integer, out of range, or not invertible modulo ``n``.
        """
        gmp = require_gmpy2()
        if isinstance(ciphertext, bool) or not isinstance(
            ciphertext, (int, np.integer, type(self.n))
        ):
            raise CryptoError(f"a ciphertext must be an integer, not {type(ciphertext).__name__}")
        c = gmp.mpz(int(ciphertext))
        if not 0 < c < self.nsquare:
            raise CryptoError("ciphertext out of range (must lie in (0, n^2))")
        if gmp.gcd(c, self.n) != 1:
            raise CryptoError("invalid ciphertext (not invertible modulo n)")
        return c

    # -- randomness ---------------------------------------------------------------------------
    def precompute(self) -> None:
        """Build the fixed-base randomness table now (done automatically after a few
        encryptions; about 0.2 s and 16 MiB for a 2048-bit key)."""
        self._obfuscator_source().precompute()

    def _obfuscator_source(self) -> FixedBaseRandomness:
        if self._randomness is None:
            self._randomness = FixedBaseRandomness(self.n)
        return self._randomness

    def random_factor(self) -> Any:
        """A fresh encryption obfuscator ``(h^n)^x mod n^2`` (see :mod:`._fixedbase`)."""
        src = self._obfuscator_source()
        self._count += 1
        if not src.precomputed and self._count > _PRECOMPUTE_AFTER:
            src.precompute()
        return src.sample()

    # -- encryption ---------------------------------------------------------------------------
    def raw_encrypt(self, plaintext: int) -> Any:
        """Encrypt a residue ``0 <= plaintext < n``; returns the ciphertext as an integer."""
        gmp = require_gmpy2()
        m = gmp.mpz(plaintext)
        if not 0 <= m < self.n:
            raise CryptoOverflowError("raw plaintext must lie in [0, n)")
        return (1 + m * self.n) % self.nsquare * self.random_factor() % self.nsquare

    def encrypt(self, value: float, *, frac_bits: int | None = None) -> EncryptedNumber:
        """Encrypt an int or a float.

        Integers are encrypted exactly (scale ``2**0``); floats in fixed point with
        ``frac_bits`` fractional bits (default :data:`FLOAT_FRAC_BITS`).  The scale is public
        and fixed by the caller, never chosen from the value, so it leaks nothing about the
        magnitude (unlike a per-value exponent, phe #110).

        Raises
        ------
        CryptoOverflowError
            ``|value|`` does not fit the plaintext space.
        """
        from ._number import EncryptedNumber, encode_scalar

        m, scale = encode_scalar(value, frac_bits)
        if abs(m) > self.max_int:
            raise CryptoOverflowError(
                f"value does not fit the {self.n_length}-bit plaintext space (|m| > n/2)"
            )
        return EncryptedNumber._trusted(self, self.raw_encrypt(m % self.n), scale, abs(m), True)

    def encrypt_vector(self, values: object, spec: PackingSpec | None = None) -> EncryptedVector:
        """Encrypt a numpy array with slot packing (see :class:`EncryptedVector`)."""
        from ._vector import EncryptedVector

        return EncryptedVector.encrypt(self, values, spec)


class PaillierPrivateKey:
    """Paillier private key: the primes ``p`` and ``q`` with CRT decryption constants.

    The primes never appear in ``repr`` or error messages, and the key refuses to be pickled
    (:class:`CryptoError`): a pickle would carry ``p`` and ``q`` in the clear implicitly (for
    example through :mod:`multiprocessing` or a cache).  Serialize it explicitly with
    :func:`veil.crypto.paillier.dumps`.  ``copy.copy`` and ``copy.deepcopy`` work (nothing is
    written anywhere).

    Examples
    --------
    >>> pk, sk = generate_paillier_keypair(n_length=512, insecure=True)
    >>> sk.decrypt(pk.encrypt(-2.5) * 3)
    -7.5
    """

    def __init__(self, public_key: PaillierPublicKey, p: int, q: int) -> None:
        gmp = require_gmpy2()
        p, q = gmp.mpz(p), gmp.mpz(q)
        if p * q != public_key.n or p == q or p < 3 or q < 3:
            raise CryptoError("the private key does not match the public key")
        if p > q:
            p, q = q, p
        self.public_key = public_key
        self.p, self.q = p, q
        self.psquare, self.qsquare = p * p, q * q
        self.p_inverse = gmp.invert(p, q)
        self.hp = self._h(p, self.psquare)
        self.hq = self._h(q, self.qsquare)

    def _h(self, x: Any, xsquare: Any) -> Any:
        gmp = require_gmpy2()
        lx = (gmp.powmod(self.public_key.g, x - 1, xsquare) - 1) // x
        try:
            return gmp.invert(lx, x)
        except ZeroDivisionError as exc:
            raise CryptoError("invalid private key") from exc

    def __repr__(self) -> str:
        return f"<PaillierPrivateKey for {self.public_key.fingerprint}>"

    def __reduce_ex__(self, protocol: object) -> Any:
        raise CryptoError(
            "a PaillierPrivateKey is not picklable: the pickle would hold the primes p and q "
            "in the clear without saying so; serialize it explicitly with "
            "veil.crypto.paillier.dumps(private_key) (plain JSON: store it as a secret, e.g. "
            "mode 0600 as `veil crypto keygen` does) and load it with loads"
        )

    def __copy__(self) -> PaillierPrivateKey:
        return self  # immutable

    def __deepcopy__(self, memo: dict[int, Any]) -> PaillierPrivateKey:
        from copy import deepcopy

        return PaillierPrivateKey(deepcopy(self.public_key, memo), self.p, self.q)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PaillierPrivateKey) and other.p == self.p and other.q == self.q

    def __hash__(self) -> int:
        return hash(self.public_key)

    def raw_decrypt(self, ciphertext: int) -> Any:
        """Decrypt an integer ciphertext to the residue ``m`` in ``[0, n)`` (CRT).

        The ciphertext is validated first (:meth:`PaillierPublicKey.check_ciphertext`).
        """
        gmp = require_gmpy2()
        c = self.public_key.check_ciphertext(ciphertext)
        mp = (gmp.powmod(c % self.psquare, self.p - 1, self.psquare) - 1) // self.p * self.hp
        mq = (gmp.powmod(c % self.qsquare, self.q - 1, self.qsquare) - 1) // self.q * self.hq
        mp, mq = mp % self.p, mq % self.q
        return mp + ((mq - mp) * self.p_inverse % self.q) * self.p

    def decrypt(self, encrypted: EncryptedNumber) -> int | float:
        """Decrypt an :class:`EncryptedNumber` to an int (scale 0) or a float.

        Raises
        ------
        CryptoError
            The ciphertext belongs to another key, or decrypts outside its tracked bound
            (tampered ciphertext or forged metadata).
        """
        from ._number import EncryptedNumber

        if not isinstance(encrypted, EncryptedNumber):
            raise CryptoError(f"cannot decrypt a {type(encrypted).__name__}")
        if encrypted.public_key != self.public_key:
            raise CryptoError("the ciphertext was encrypted under a different public key")
        return encrypted.decode(self.raw_decrypt(encrypted.ciphertext()))

    def decrypt_vector(self, encrypted: EncryptedVector) -> Any:
        """Decrypt an :class:`EncryptedVector` to a numpy array."""
        return encrypted.decrypt(self)


def generate_paillier_keypair(
    n_length: int = DEFAULT_KEY_BITS, *, insecure: bool = False
) -> tuple[PaillierPublicKey, PaillierPrivateKey]:
    """Generate a Paillier key pair with an ``n_length``-bit modulus.

    Parameters
    ----------
    n_length : int, default 2048
        Bit length of ``n``.  2048 is the minimum considered secure (about 112-bit security);
        3072 is recommended for data that must stay confidential beyond 2030.  Lengths in
        ``[1024, 2048)`` are generated with an :class:`InsecureKeyWarning` (so that phe-style
        code such as ``generate_paillier_keypair(n_length=1024)`` runs) unless
        ``insecure=True`` acknowledges the risk; lengths below 1024 require ``insecure=True``.
    insecure : bool, default False
        Allow short keys (tests, demos) without a warning.

    Returns
    -------
    (PaillierPublicKey, PaillierPrivateKey)

    Examples
    --------
    >>> public_key, private_key = generate_paillier_keypair(n_length=512, insecure=True)
    >>> private_key.decrypt(public_key.encrypt(5) + public_key.encrypt(3))
    8
    """
    if isinstance(n_length, bool) or not isinstance(n_length, int):
        raise ConfigError("n_length must be an integer number of bits")
    if n_length < _MIN_INSECURE_BITS:
        raise ConfigError(f"n_length must be at least {_MIN_INSECURE_BITS} bits")
    check_key_length(n_length, insecure, ConfigError)
    gmp = require_gmpy2()
    p_bits = n_length // 2
    while True:
        p = _random_prime(p_bits)
        q = _random_prime(n_length - p_bits)
        n = p * q
        if p != q and n.bit_length() == n_length and gmp.gcd(n, (p - 1) * (q - 1)) == 1:
            break
    public_key = PaillierPublicKey(n, insecure=True)  # the length was checked above
    return public_key, PaillierPrivateKey(public_key, p, q)
