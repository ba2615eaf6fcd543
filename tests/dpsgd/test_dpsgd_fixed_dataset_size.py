"""A loader refuses to iterate once its dataset changed size.

make_private(poisson_sampling=False): the accountant's rate q = batch_size / n is fixed when
the triple is built, so a data loader whose dataset then shrank would be charged too little
(each record is in a batch with probability batch_size / n_now > q).  PoissonLoader samples
over the n records it was built for: records added later would never be drawn (and q would be
wrong), withdrawn ones would still be read."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402
from torch.utils.data import DataLoader, Dataset, TensorDataset  # noqa: E402

from veil.errors import ConfigError  # noqa: E402
from veil.ml.dpsgd import NoiseSource, PoissonLoader, make_private  # noqa: E402

pytestmark = [
    pytest.mark.torch,
    pytest.mark.filterwarnings("ignore::veil.errors.InsecureRandomWarning"),
    pytest.mark.filterwarnings("ignore::veil.ml.dpsgd.FixedBatchAccountingWarning"),
]


class _Resizable(Dataset):
    """A map-style dataset whose length the caller changes (records added or withdrawn)."""

    def __init__(self, data: TensorDataset, n: int) -> None:
        self.data, self.n = data, n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int):  # type: ignore[no-untyped-def]
        return self.data[i]


@pytest.mark.parametrize("change", [-150, 50])
def test_fixed_batch_loader_refuses_a_resized_dataset(change: int) -> None:
    g = torch.Generator().manual_seed(0)
    data = _Resizable(TensorDataset(torch.randn(400, 3, generator=g), torch.randn(400, 1)), 300)
    model = nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    _, dp_opt, loader = make_private(
        model,
        opt,
        DataLoader(data, batch_size=30),
        max_grad_norm=1.0,
        noise_multiplier=1.0,
        poisson_sampling=False,
        secure_rng=False,
        seed=1,
    )
    assert dp_opt.sample_rate == pytest.approx(0.1)
    assert sum(1 for _ in loader) == 10
    data.n = 300 + change
    with pytest.raises(ConfigError, match=f"has {300 + change} records but"):
        next(iter(loader))


@pytest.mark.parametrize("change", [-50, 50])
def test_poisson_loader_refuses_a_resized_dataset(change: int) -> None:
    g = torch.Generator().manual_seed(0)
    data = _Resizable(TensorDataset(torch.randn(400, 4, generator=g)), 300)
    loader = PoissonLoader(data, sample_rate=0.1, noise=NoiseSource(secure=False, seed=1))
    assert sum(1 for _ in loader) == 10
    data.n = 300 + change
    with pytest.raises(ConfigError, match=f"has {300 + change} records but this loader was built"):
        next(iter(loader))
