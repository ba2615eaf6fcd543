"""Loading the secret key used by keyed pseudonymization and reversible tokenization.

The key comes from an environment variable (default ``VEIL_KEY``) or a key file.  It is read
lazily, only when an operator needs it, and never printed, logged or written to a report.
Operators derive their own sub-keys from it with HKDF, so the same master key can serve both
pseudonymization and tokenization safely.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import string
from collections.abc import Callable
from pathlib import Path
from typing import Any

from veil.errors import ConfigError, KeyMissingError, KeyNotConfiguredError

__all__ = ["DEFAULT_KEY_ENV", "MIN_KEY_BYTES", "key_loader", "decode_key", "shown"]

DEFAULT_KEY_ENV = "VEIL_KEY"
MIN_KEY_BYTES = 16


#: An environment variable's name as people write them (``VEIL_KEY``, ``PSEUDONYM_KEY_2024``).
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")


def _may_be_key(text: str, plain: Callable[[str], bool]) -> bool:
    """Whether ``text``, given where a variable name or a file path belongs, could be a key.

    A key pasted in place of its name (``--key-env $VEIL_KEY``, ``key: {env: 9f86...}``) would
    otherwise be echoed by the error saying no such variable or file exists.  Shorter than any
    accepted key: shown; the value of an environment variable, hex of key length or
    ``base64:...``: hidden; otherwise shown only when ``plain(text)`` (it reads as a name).
    """
    if len(text.strip()) < MIN_KEY_BYTES:
        return False
    if text in os.environ.values() or text.strip().startswith("base64:"):
        return True
    if len(text.strip()) >= 2 * MIN_KEY_BYTES and all(c in string.hexdigits for c in text.strip()):
        return True
    return not plain(text)


#: A policy setting's name (``k_anonymity``, ``operator``): lower-case snake case.
_SETTING_NAME = re.compile(r"[a-z][a-z0-9_]*")


def shown(value: Any) -> str:
    """``repr(value)`` for an error message, unless it is text that could be a key.

    A key pasted as a setting's value (``seed: 9f86...``, ``length: 9f86...``, a fake's
    ``seed``) would otherwise be echoed by the error saying the value is of the wrong type, on
    stderr and in CI logs.  Judged as :func:`may_be_key_name` judges a setting's name.
    """
    if isinstance(value, str) and may_be_key_name(value):
        return "a value that could be a key (not shown)"
    return repr(value)


#: The end of an error about a setting or parameter whose name :func:`may_be_key_name` hides.
KEY_NAME_HIDDEN = (
    "its name looks like a key itself and is not shown: give the key's variable or file, "
    "not the key"
)


def may_be_key_name(text: str) -> bool:
    """Whether an unknown policy setting's name could be a key (``key: {9f86...}``).

    Hidden then, as a variable's name is: hex of key length, ``base64:...``, another
    variable's value, or 16+ characters that do not read as a lower-case setting name.
    """
    return _may_be_key(text, _SETTING_NAME.fullmatch)


def _env_label(name: str) -> str | None:
    """``name`` when it can be shown in a message, None when it may be the key itself."""
    return None if _may_be_key(name, _ENV_NAME.fullmatch) else name


def file_label(path: Path) -> str | None:
    """``path`` when it can be shown (its file name reads as one: has an extension).

    The whole path is judged, not only its file name: a base64 key contains ``/``, so its
    "file name" may be only its last few characters, short enough to pass, while the message
    would print the whole path -- the key.  Hex and base64 keys never contain a ``.``.
    """
    text = str(path)
    named = _may_be_key(text, lambda t: "." in Path(t).name)
    return None if named or _may_be_key(path.name, lambda n: "." in n) else text


_HIDDEN = "its name looks like a key itself and is not shown: give the name, not the key"
#: The end of an error about a key file whose path :func:`file_label` hides.
KEY_PATH_HIDDEN = _HIDDEN


def decode_key(text: str | bytes, source: str) -> bytes:
    """Decode a key given as hex, base64 or raw text; require at least 16 bytes of material.

    ``source`` names where the key came from (an environment variable or file name) for error
    messages; the key itself never appears in a message.  A key repeating one byte (all zeros)
    is refused as a placeholder; strength cannot be measured, so a guessable text key passes.
    """
    # surrounding whitespace (a newline at the end of a key file) is not part of the key; this
    # also applies to binary key files, as it always has: keys written before must keep
    # giving the same pseudonyms and tokens
    raw = text.strip() if isinstance(text, bytes) else text.strip().encode()
    if not raw:
        raise KeyMissingError(f"the key in {source} is empty")
    key: bytes = raw
    s = raw.decode("ascii", errors="ignore")
    if s and len(s) == len(raw):
        try:
            if len(s) % 2 == 0 and all(c in "0123456789abcdefABCDEF" for c in s):
                key = bytes.fromhex(s)
            elif s.startswith("base64:"):
                key = base64.b64decode(s[7:], validate=True)
        except (ValueError, binascii.Error):
            raise KeyMissingError(f"the key in {source} is not valid hex/base64") from None
    if len(key) < MIN_KEY_BYTES:
        raise KeyMissingError(
            f"the key in {source} is too short: need at least {MIN_KEY_BYTES} bytes "
            "(generate one with: python -c 'import secrets; print(secrets.token_hex(32))')"
        )
    if len(set(key)) == 1:
        raise KeyMissingError(
            f"the key in {source} repeats one byte (a placeholder such as all zeros, not a "
            "secret): generate one with: python -c 'import secrets; print(secrets.token_hex(32))'"
        )
    return key


def key_loader(
    env: str | None = None, file: str | os.PathLike[str] | None = None
) -> Callable[[], bytes]:
    """Return a zero-argument callable that loads the key when first needed.

    Parameters
    ----------
    env
        Name of the environment variable holding the key (hex, ``base64:...`` or text).
    file
        Path of a file holding the key.  Giving both ``env`` and ``file`` is a
        :class:`~veil.errors.ConfigError`; with neither, ``$VEIL_KEY`` is used.

    Examples
    --------
    >>> import os
    >>> os.environ["DOCTEST_KEY"] = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    >>> load = key_loader(env="DOCTEST_KEY")
    >>> len(load())
    32
    """
    if env is not None and file is not None:  # one would be silently ignored
        raise ConfigError("give the key in an environment variable or in a file, not both")
    cache: list[bytes] = []

    def load() -> bytes:
        if cache:
            return cache[0]
        if file is not None:
            path = Path(file)
            label = file_label(path)
            try:
                data = path.read_bytes()
            except OSError as exc:
                if label is None:
                    raise KeyMissingError(
                        f"cannot read the key file ({exc.strerror}): {_HIDDEN}"
                    ) from None
                raise KeyMissingError(f"cannot read key file {label}: {exc.strerror}") from None
            key = decode_key(data, f"key file {path.name}" if label else "the key file")
        else:
            name = env or DEFAULT_KEY_ENV
            label = _env_label(name)
            value = os.environ.get(name)
            if value is None:
                # the default variable unset: no key configured at all; a variable the
                # caller named is a configured key that is missing
                error = KeyNotConfiguredError if env is None else KeyMissingError
                if label is None:
                    raise error(f"no key: the environment variable given is not set; {_HIDDEN}")
                raise error(f"no key: environment variable {label} is not set (or give --key-file)")
            key = decode_key(value, f"${name}" if label else "the environment variable given")
        cache.append(key)
        return key

    return load
