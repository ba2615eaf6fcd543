"""Misuse that used to be accepted silently: the batch off dimension 0, gradients of two
batches accumulated into one step, insecure noise without a seed, fixed-size batches reported
with Poisson accounting, and the Embedding padding row."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402

from veil.errors import ConfigError, InsecureRandomWarning  # noqa: E402
from veil.ml.dpsgd import NoiseSource, make_private  # noqa: E402

pytestmark = pytest.mark.torch


def test_insecure_rng_without_a_seed_is_refused() -> None:
    # it used to fall back to seed 0: every such run drew the same, recomputable noise
    with pytest.raises(ConfigError, match="seed"):
        NoiseSource(secure=False)
    data = TensorDataset(torch.randn(20, 3), torch.randint(0, 2, (20,)))
    model = nn.Linear(3, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(ConfigError, match="seed"):
        make_private(
            model,
            opt,
            DataLoader(data, batch_size=5),
            noise_multiplier=1.0,
            max_grad_norm=1.0,
            secure_rng=False,
        )
    with pytest.warns(InsecureRandomWarning):
        a = NoiseSource(secure=False, seed=1).normal((64,), std=1.0)
    with pytest.warns(InsecureRandomWarning):
        b = NoiseSource(secure=False, seed=2).normal((64,), std=1.0)
    assert not torch.equal(a, b)
