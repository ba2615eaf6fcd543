"""De-identification operators, one small class each, registered by name."""

from veil.deid.operators._base import (
    Operator,
    OperatorContext,
    available_operators,
    get_operator,
    register,
)

__all__ = ["Operator", "OperatorContext", "available_operators", "get_operator", "register"]
