"""Fake replacement with Faker: consistent, optionally gender-aware and unique."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from veil.deid._keys import shown
from veil.deid.operators._base import Operator, OperatorContext, register
from veil.deid.operators._util import (
    canonical_str,
    check_column,
    derive_key,
    factorize_cells,
    from_codes,
    keyed_text,
    keyed_uint64,
    replace_column,
    string_dtype_for,
)
from veil.errors import ConfigError, InputError, KeyNotConfiguredError

__all__ = ["Fake"]

_KINDS: dict[str, str] = {
    "name": "name",
    "first_name": "first_name",
    "last_name": "last_name",
    "email": "",
    "phone": "phone_number",
    "city": "city",
    "address": "address",
    "street_address": "street_address",
    "postcode": "postcode",
    "country": "country",
    "company": "company",
    "job": "job",
    "user_name": "user_name",
    "ssn": "ssn",
    "iban": "iban",
    "date": "",
}
_GENDER_DEFAULT = {
    "f": "female",
    "female": "female",
    "w": "female",
    "woman": "female",
    "m": "male",
    "male": "male",
    "man": "male",
}
_MAX_TRIES = 50


@lru_cache(maxsize=16)
def _faker(locale: str) -> Any:
    from faker import Faker

    try:
        return Faker(locale)
    except (AttributeError, ValueError):
        raise ConfigError(f"operator 'fake': unknown Faker locale {shown(locale)}") from None


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def _slug(text: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    parts = re.findall(r"[a-z0-9]+", ascii_text.lower())
    return ".".join(parts) or "user"


def _groups(combo: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Group id of each row and the first row of each group."""
    uniq, first, inverse = np.unique(combo, return_index=True, return_inverse=True)
    return inverse.reshape(-1), first


@register
class Fake(Operator):
    """Replace values by realistic fake ones generated with Faker.

    The same original value always gets the same fake value: per-value seeds are
    HMAC-SHA-256(sub-key, value), the sub-key coming from the operator's ``seed``, else from the
    secret key (``ctx.secret()``), else from the policy seed (``ctx.seed``), else from ``ctx.rng``
    (consistent within the run only).  With a known seed anyone can recompute the mapping and
    test guesses, so prefer a key for identifiers.  Fake values are not anonymization on their
    own: the other columns are untouched.

    Parameters
    ----------
    kind
        name, first_name, last_name, email, phone, city, address, street_address, postcode,
        country, company, job, user_name, ssn, iban or date.
    locale
        Faker locale (default ``ctx.locale``).
    gender_column, gender_map
        Names follow this column: ``gender_map`` maps its values to ``female`` / ``male``
        (default: F/Female/W/Woman and M/Male/Man, any case); other values give neutral names.
        The names tell that column's values: a policy refuses a gender column that the release
        hides or the privacy engine may generalize.
    unique
        Distinct originals get distinct fake values (retries; error when impossible).
    name_column
        For ``kind: email``: build the address from this (already faked) name column, e.g.
        ``mary.jones@example.org``; otherwise from a fake name drawn for the value.  The column
        is read as it is: real names give addresses that spell them out (a policy refuses a
        ``name_column`` that no fake operator listed before replaces).
    start, end
        Date range for ``kind: date`` (ISO dates; default 1940-01-01 .. 2005-12-31).
    choices, probabilities
        Draw from these values (a list with ``probabilities``, or a mapping value -> weight)
        instead of Faker, e.g. cities with given frequencies.
    consistent
        With ``choices``: False draws every row independently (frequencies match the
        probabilities per row); True (default) maps each original value to one draw.
    seed
        Integer making the mapping repeatable without a key.

    Examples
    --------
    >>> import pandas as pd
    >>> from veil.deid.operators import OperatorContext, get_operator
    >>> df = pd.DataFrame({"name": ["Ann Lee", "Bob Ray", "Ann Lee"], "sex": ["F", "M", "F"]})
    >>> op = get_operator("fake", {"kind": "name", "gender_column": "sex", "seed": 7})
    >>> out = op.apply(df, "name", OperatorContext())
    >>> out["name"][0] == out["name"][2] != "Ann Lee"
    True
    """

    name = "fake"
    replaces_values = True

    def __init__(
        self,
        kind: str,
        locale: str | None = None,
        gender_column: str | None = None,
        gender_map: Mapping[str, str] | None = None,
        unique: bool = False,
        name_column: str | None = None,
        start: str = "1940-01-01",
        end: str = "2005-12-31",
        choices: Sequence[Any] | Mapping[Any, float] | None = None,
        probabilities: Sequence[float] | None = None,
        consistent: bool = True,
        seed: int | None = None,
    ) -> None:
        if kind not in _KINDS:
            raise ConfigError(
                f"operator 'fake': unknown kind {shown(kind)}; one of {', '.join(_KINDS)}"
            )
        self.kind = kind
        if locale is not None:
            _faker(locale)
        self.locale = locale
        self.gender_column = gender_column
        gm = dict(_GENDER_DEFAULT)
        if gender_map is not None:
            if not isinstance(gender_map, Mapping):
                raise ConfigError("operator 'fake': gender_map must map values to female/male")
            for k, v in gender_map.items():
                if v not in ("female", "male", "neutral"):
                    raise ConfigError(
                        f"operator 'fake': gender_map value {shown(v)} is not female/male/neutral"
                    )
                gm[str(k).strip().lower()] = v
        self.gender_map = gm
        self.unique = bool(unique)
        self.name_column = name_column
        try:
            self.start, self.end = pd.Timestamp(start).normalize(), pd.Timestamp(end).normalize()
        except (ValueError, TypeError):
            raise ConfigError(
                f"operator 'fake': start/end must be dates, got {shown(start)}, {shown(end)}"
            ) from None
        if self.end < self.start:
            raise ConfigError("operator 'fake': end must not be before start")
        self.choices, self.cdf = self._parse_choices(choices, probabilities)
        self.consistent = bool(consistent)
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise ConfigError(f"operator 'fake': seed must be an integer, got {shown(seed)}")
        self.seed = seed

    @staticmethod
    def _parse_choices(
        choices: Any, probabilities: Any
    ) -> tuple[list[Any] | None, np.ndarray | None]:
        if choices is None:
            if probabilities is not None:
                raise ConfigError("operator 'fake': probabilities need choices")
            return None, None
        if isinstance(choices, Mapping):
            if probabilities is not None:
                raise ConfigError(
                    "operator 'fake': give weights in choices or probabilities, not both"
                )
            vals, w = list(choices), list(choices.values())
        else:
            vals = list(choices)
            w = list(probabilities) if probabilities is not None else [1.0] * len(vals)
        try:
            wa = np.asarray(w, dtype=np.float64)
        except (TypeError, ValueError):
            raise ConfigError("operator 'fake': probabilities must be numbers") from None
        if (
            not vals
            or len(wa) != len(vals)
            or (wa < 0).any()
            or not np.isfinite(wa).all()
            or wa.sum() <= 0
        ):
            raise ConfigError("operator 'fake': choices need one non-negative weight each")
        cdf = np.cumsum(wa / wa.sum())
        cdf[-1] = 1.0
        return vals, cdf

    # ------------------------------------------------------------------ key / seeds
    def _salt(self, ctx: OperatorContext) -> bytes:
        """The secret behind the value -> fake mapping.

        The operator's own ``seed``, else the run's key (a key that was configured but cannot
        be used is an error, never silently replaced), else the policy's seed, else fresh
        randomness (no mapping across runs).  A seed-derived mapping is recomputable by anyone
        who has the policy (a dictionary attack on the fakes): the run's report says so.
        """
        if self.seed is not None:
            self._seed_warning(ctx, "the operator's seed")
            return hashlib.sha256(f"veil/fake/seed:{self.seed}".encode()).digest()
        try:
            return derive_key(ctx.secret(), "fake")
        except KeyNotConfiguredError:
            pass  # no key at all: keyless fakes (other key errors propagate)
        if ctx.seed is not None:
            self._seed_warning(ctx, "the policy's seed")
            return hashlib.sha256(f"veil/fake/seed:{ctx.seed}".encode()).digest()
        return ctx.rng.bytes(32)

    @staticmethod
    def _seed_warning(ctx: OperatorContext, source: str) -> None:
        msg = (
            f"fake replacement is derived from {source}, not from a secret key: anyone with the "
            "policy can recompute the original -> fake mapping (set VEIL_KEY or give a key to "
            "make it keyed)"
        )
        ctx.warn_once(msg)

    def _gender(self, value: Any) -> str:
        if value is None or pd.isna(value):
            return "neutral"
        return self.gender_map.get(canonical_str(value).strip().lower(), "neutral")

    def _one(self, fk: Any, seed: int, gender: str, name: str | None) -> Any:
        fk.seed_instance(seed)
        if self.kind == "date":
            days = (self.end - self.start).days + 1
            return (self.start + pd.Timedelta(days=seed % days)).strftime("%Y-%m-%d")
        if self.kind == "email":
            if name is None:
                first = getattr(fk, f"first_name_{gender}", fk.first_name)()
                name = f"{first} {fk.last_name()}"
            return f"{_slug(name)}@{fk.free_email_domain()}"
        method = _KINDS[self.kind]
        if gender in ("female", "male") and self.kind in ("name", "first_name", "last_name"):
            method = getattr(fk, f"{method}_{gender}", None) and f"{method}_{gender}" or method
        return getattr(fk, method)()

    def _generate(
        self,
        keys: list[str],
        genders: list[str],
        names: list[Any],
        salt: bytes,
        ctx: OperatorContext,
    ) -> list[Any]:
        fk = _faker(self.locale or ctx.locale)
        out: list[Any] = [None] * len(keys)
        seen: dict[Any, int] = {}
        done: dict[str, Any] = {}  # canonically equivalent originals (NFC/NFD): one key, one fake
        for i, key in enumerate(keys):
            if key in done:  # not a collision under unique: true, the same original
                out[i] = done[key]
                continue
            for attempt in range(_MAX_TRIES):
                tag = f"{self.kind}#{attempt}" if attempt else self.kind
                seed = int(keyed_uint64(salt, [key], tag)[0])
                if self.choices is not None:
                    val = self.choices[int(np.searchsorted(self.cdf, seed / 2.0**64, side="right"))]
                else:
                    val = self._one(fk, seed, genders[i], names[i])
                    if attempt and self.kind == "email" and self.unique:
                        local, _, dom = val.partition("@")
                        val = f"{local}{attempt}@{dom}"
                if not self.unique or val not in seen:
                    break
            else:
                raise InputError(
                    f"operator 'fake': cannot find {len(keys)} distinct {self.kind} values "
                    "(too few possibilities for unique: true)"
                )
            seen[val] = i
            out[i] = done[key] = val
        return out

    # ------------------------------------------------------------------ Operator API
    def apply(self, df: pd.DataFrame, column: str | None, ctx: OperatorContext) -> pd.DataFrame:
        col = check_column(df, column, self.name)
        for extra in (self.gender_column, self.name_column):
            if extra is not None:
                check_column(df, extra, self.name)
        s = df[col]
        na = s.isna().to_numpy()
        if self.choices is not None and not self.consistent:
            idx = np.searchsorted(self.cdf, ctx.rng.random(len(s)), side="right")
            return replace_column(
                df, col, from_codes(self.choices, np.where(na, -1, idx), s, self._dtype(s))
            )
        codes, uniques = factorize_cells(s)
        parts = [codes.astype(np.int64)]
        if self.gender_column is not None:
            parts.append(factorize_cells(df[self.gender_column])[0].astype(np.int64))
        if self.name_column is not None and self.kind == "email":
            parts.append(factorize_cells(df[self.name_column])[0].astype(np.int64))
        combo = parts[0]
        for p in parts[1:]:  # re-factorize after each step so the codes stay small
            combo = pd.factorize(combo * (int(p.max(initial=0)) + 2) + (p + 1))[0].astype(np.int64)
        group_of_row, first = _groups(combo)
        keys, genders, names = [], [], []
        gcol = df[self.gender_column].to_numpy(dtype=object) if self.gender_column else None
        ncol = (
            df[self.name_column].to_numpy(dtype=object)
            if self.name_column and self.kind == "email"
            else None
        )
        for r in first:
            c = codes[r]
            g = self._gender(gcol[r]) if gcol is not None else "neutral"
            nm = ncol[r] if ncol is not None else None
            nm = None if nm is None or pd.isna(nm) else canonical_str(nm)
            # canonically equivalent texts (NFC "é" vs NFD "e" + accent) are one original
            keys.append(
                _nfc(keyed_text(uniques[c])) + "\x00" + g + ("\x00" + _nfc(nm) if nm else "")
                if c >= 0
                else ""
            )
            genders.append(g)
            names.append(nm)
        salt = self._salt(ctx)
        valid = [i for i, r in enumerate(first) if codes[r] >= 0]
        generated = self._generate(
            [keys[i] for i in valid],
            [genders[i] for i in valid],
            [names[i] for i in valid],
            salt,
            ctx,
        )
        table = np.empty(len(first), dtype=object)
        table[:] = None
        for i, v in zip(valid, generated):
            table[i] = v
        new = from_codes(table, np.where(na, -1, group_of_row), s, self._dtype(s))
        return replace_column(df, col, new)

    def _dtype(self, like: pd.Series) -> Any:
        if self.choices is not None and not all(isinstance(c, str) for c in self.choices):
            return object
        return string_dtype_for(like)

    def describe(self) -> str:
        extra = f" following {self.gender_column!r}" if self.gender_column else ""
        src = (
            "given choices"
            if self.choices is not None
            else f"Faker ({self.locale or 'policy locale'})"
        )
        return f"replaced by fake {self.kind} values from {src}{extra}, same original -> same fake"

    def params(self) -> dict[str, Any]:
        p: dict[str, Any] = {"kind": self.kind, "unique": self.unique}
        for k in ("locale", "gender_column", "name_column"):
            if getattr(self, k) is not None:
                p[k] = getattr(self, k)
        if self.kind == "date":
            p.update(start=str(self.start.date()), end=str(self.end.date()))
        if self.choices is not None:
            p["choices"] = [str(c) for c in self.choices]
            p["consistent"] = self.consistent
        return p
