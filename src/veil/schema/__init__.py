"""Column roles and generalization hierarchies."""

from veil.schema._roles import Role

__all__ = ["Role"]
