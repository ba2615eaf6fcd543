"""Column roles and generalization hierarchies."""

from veil.schema._hierarchy import Hierarchy
from veil.schema._roles import Role

__all__ = ["Hierarchy", "Role"]
