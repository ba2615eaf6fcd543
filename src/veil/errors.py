"""Typed exceptions and warnings shared by every Veil package.

Every error a *user* can cause (bad input, bad policy, bad parameters, an exhausted
budget) derives from :class:`VeilError`.  The CLI prints such errors as a single line
and exits with status 2; ``--debug`` shows the traceback.  Anything else is a bug (the CLI
prints one line naming its type, without its text, and exits with status 70).

Messages never quote a cell value of the user's data: they name columns, counts, row
positions, shapes and the parameters the user gave (errors end up in logs and tickets).
"""

from __future__ import annotations

__all__ = [
    "VeilError",
    "InputError",
    "PolicyError",
    "ConfigError",
    "NoiseScaleError",
    "KeyMissingError",
    "UnsatisfiableError",
    "BudgetError",
    "PrivacyLeakWarning",
    "DiffprivlibCompatibilityWarning",
    "InsecureRandomWarning",
    "AccuracyWarning",
    "CryptoError",
]


class VeilError(Exception):
    """Base class of every user-facing Veil error."""


class InputError(VeilError, ValueError):
    """A file or table cannot be read or is unusable (missing, undecodable, empty, ...)."""


class PolicyError(VeilError, ValueError):
    """A policy file is invalid.  The message names the key and, when known, the line."""


class ConfigError(VeilError, ValueError):
    """Invalid parameters for an operator, model, mechanism or command."""


class NoiseScaleError(ConfigError):
    """The noise a release needs is beyond what the exact samplers can draw: epsilon too small
    for the sensitivity (a noise scale above 2^52), or, with ``too_large`` set, so large that
    the scale falls below 2^-900."""

    def __init__(self, message: str, *, too_large: bool = False) -> None:
        super().__init__(message)
        self.too_large = too_large


class KeyMissingError(VeilError):
    """A secret key needed for pseudonymization/tokenization/decryption is not available."""


class KeyNotConfiguredError(KeyMissingError):
    """No key was configured at all (no key file, no policy ``key``, ``$VEIL_KEY`` unset).

    Distinct from a key that was configured but cannot be used (unreadable, too short, an
    explicitly named environment variable that is unset): operators that can work without a
    key (keyless fake replacement) fall back only in this case, never on a broken key.
    """


class UnsatisfiableError(VeilError):
    """The requested privacy targets cannot be met by any allowed transformation."""


class BudgetError(VeilError, ValueError):
    """A differential-privacy query asks for more budget than remains (diffprivlib-compatible)."""


class CryptoError(VeilError, ValueError):
    """Malformed, tampered or mismatched cryptographic material (keys, shares, ciphertexts)."""


class PrivacyLeakWarning(RuntimeWarning):
    """A computation may leak privacy, e.g. bounds read from the data (diffprivlib-compatible)."""


class DiffprivlibCompatibilityWarning(RuntimeWarning):
    """A diffprivlib argument is accepted for compatibility but ignored."""


class InsecureRandomWarning(RuntimeWarning):
    """An explicit seed replaced the cryptographically secure generator (tests only)."""


class AccuracyWarning(UserWarning):
    """A released private statistic is dominated by its noise (its confidence interval is wider
    than the value itself); the release is still private, just not informative."""
