"""Shared helpers for the operator tests."""

from __future__ import annotations

import numpy as np
import pandas as pd

from veil.deid.operators import OperatorContext

KEY = bytes(range(32))


def ctx(seed: int = 0, key: bytes | None = KEY, **kw: object) -> OperatorContext:
    return OperatorContext(
        secret_loader=(lambda: key) if key is not None else None,
        rng=np.random.default_rng(seed),
        **kw,  # type: ignore[arg-type]
    )


def people() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "id": ["A1", "B2", "C3", "A1", None],
            "email": [
                "john.smith@example.com",
                "a@b.org",
                "x@y.co.uk",
                "john.smith@example.com",
                None,
            ],
            "phone": ["+254 712-345-678", "(555) 123 4567", "0712345678", "+254 712-345-678", None],
            "age": [23, 37, 64, 23, 51],
            "income": [1200.5, 5400.0, 98000.0, 1200.5, np.nan],
            "sex": ["F", "M", "F", "F", "M"],
            "zip": ["02139", "02142", "10001", "02139", "94110"],
        },
        index=[10, 11, 12, 13, 14],
    )
