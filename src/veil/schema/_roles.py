"""Column roles, as in ARX: what a column is to a re-identification attacker."""

from __future__ import annotations

from enum import Enum

from veil.errors import PolicyError


class Role(str, Enum):
    """The role of a column in a release.

    identifier
        Directly identifies a person (name, e-mail, ID number).  Must be removed or transformed.
    quasi
        Identifies in combination with other columns (age, postcode, gender).
    sensitive
        What must not be learned about a person (diagnosis, income).
    insensitive
        Everything else.

    Examples
    --------
    >>> Role.parse("QI"), Role.parse("direct-identifier"), Role("sensitive")
    (<Role.QUASI: 'quasi'>, <Role.IDENTIFIER: 'identifier'>, <Role.SENSITIVE: 'sensitive'>)
    >>> Role.QUASI == "quasi"  # a str enum: compares with its YAML spelling
    True
    >>> Role.parse("secret")
    Traceback (most recent call last):
    ...
    veil.errors.PolicyError: unknown role 'secret'; expected one of: identifier, quasi, ...
    """

    IDENTIFIER = "identifier"
    QUASI = "quasi"
    SENSITIVE = "sensitive"
    INSENSITIVE = "insensitive"

    @classmethod
    def parse(cls, value: str | Role) -> Role:
        """Parse a role name (case-insensitive, a few synonyms accepted)."""
        if isinstance(value, Role):
            return value
        key = str(value).strip().lower().replace("-", "_")
        synonyms = {
            "direct": cls.IDENTIFIER,
            "direct_identifier": cls.IDENTIFIER,
            "id": cls.IDENTIFIER,
            "identifying": cls.IDENTIFIER,
            "quasi_identifier": cls.QUASI,
            "qi": cls.QUASI,
            "quasi_identifying": cls.QUASI,
            "other": cls.INSENSITIVE,
            "none": cls.INSENSITIVE,
        }
        if key in synonyms:
            return synonyms[key]
        try:
            return cls(key)
        except ValueError:
            allowed = ", ".join(r.value for r in cls)
            raise PolicyError(f"unknown role {value!r}; expected one of: {allowed}") from None
