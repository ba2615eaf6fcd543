"""The seed examples run and compute the right results."""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from veil.crypto import CryptoError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"veil_example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_election_tally_is_exact_and_shares_hide_votes() -> None:
    election = _load("election")
    choices = [0, 2, 2, 1, 2, 0, 2]
    tally = election.run_election(choices, 3)
    counts = Counter(choices)
    assert tally.tolist() == [counts[0], counts[1], counts[2]]
    # a single authority's share of one ballot says nothing: two ballots for different
    # candidates give share values that are both uniform field elements, not 0/1 patterns
    shares = election.cast(1, 3, 5, 3)
    assert not set(shares[0].values.tolist()) <= {0, 1}


def test_election_cheating_authority_is_named() -> None:
    election = _load("election")
    published = election.publish_sums([0, 1, 1, 2], 3)
    assert election.audited_tally(published).tolist() == [1, 2, 1]
    for bad in range(5):
        vals = published[bad].values.copy()
        vals[1] = vals[1] + np.uint64(1)  # the authority adds one vote for candidate 1
        forged = dataclasses.replace(published[bad], values=vals)
        mixed = [forged if i == bad else s for i, s in enumerate(published)]
        with pytest.raises(CryptoError, match=f"share {bad + 1} is corrupted"):
            election.audited_tally(mixed)


def test_election_main_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert _load("election").main() == 0
    out = capsys.readouterr().out
    assert "tally verified" in out and "share 4 is corrupted" in out


def test_paillier_weights_example() -> None:
    example = _load("paillier_weights")
    mean, expected = example.run(bits=512, n_weights=200)
    assert mean.shape == (200,) and np.max(np.abs(mean - expected)) <= 2.0**-32
    assert example.main(["--bits", "512", "--weights", "50"]) == 0
