"""Secrets come from the OS CSPRNG only: no numpy/random-module generators in veil.crypto."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

import veil.crypto
from veil.crypto._random import random_below, random_uint64

SRC = Path(veil.crypto.__file__).resolve().parent


def test_no_seedable_generators_in_crypto_sources() -> None:
    pattern = re.compile(r"np\.random|numpy\.random|default_rng|^import random|from random ", re.M)
    offenders = [str(p) for p in SRC.rglob("*.py") if pattern.search(p.read_text())]
    assert offenders == []


def test_random_below_is_in_range_and_unbiased() -> None:
    assert random_uint64(0).size == 0
    v = random_below(3, 300_000)  # rejection sampling: no modulo bias
    counts = np.bincount(v.astype(np.int64), minlength=3)
    assert counts.size == 3
    expected = 100_000
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 < 27.6  # chi-square(2) quantile at 1 - 1e-6
    assert int(random_below(2**61 - 1, 10_000).max()) < 2**61 - 1
