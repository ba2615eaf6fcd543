"""One noisy sum holds the chunks of one Poisson batch, each once.

With virtual steps (``max_physical_batch_size``) the optimizer adds the clipped gradients of
the chunks of a logical batch and releases them, noised, after the last chunk.  A loop left in
the middle of a logical batch, two iterators drawn in turn or a chunk stepped twice would put
records of two batches (or one chunk twice) into one release, so that one record could move
it by ``2 C`` while the accountant assumes ``C``.  Such steps must be refused.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402
from torch.utils.data import DataLoader, SubsetRandomSampler, TensorDataset  # noqa: E402

from veil.errors import ConfigError  # noqa: E402
from veil.ml.dpsgd import NoiseSource, PoissonLoader, dp_optimizer, make_private  # noqa: E402

pytestmark = [
    pytest.mark.torch,
    pytest.mark.filterwarnings("ignore::veil.errors.InsecureRandomWarning"),  # seeded tests
]


def _setup(seed: int = 1):  # type: ignore[no-untyped-def]
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(120, 4, generator=g)
    data = TensorDataset(x, (x[:, 0] > 0).long())
    model = nn.Linear(4, 2)
    loader = PoissonLoader(data, 0.5, max_physical_batch_size=8,
                           noise=NoiseSource(secure=False, seed=seed))  # fmt: skip
    opt = dp_optimizer(model, l2_norm_clip=1.0, noise_multiplier=1.0, data_loader=loader)
    return model, opt


def _step(model: nn.Module, opt, batch) -> None:  # type: ignore[no-untyped-def]
    x, y = batch
    opt.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    opt.step()


def _params(model: nn.Module) -> list:
    return [p.detach().clone() for p in model.parameters()]


def test_a_loop_left_inside_a_logical_batch_does_not_leak_into_the_next() -> None:
    model, opt = _setup()
    for batch in opt.data_loader:
        _step(model, opt, batch)  # first chunk of ~60 records: accumulated, not released
        break
    assert not opt.signal.last_chunk and opt.steps == 0
    before = _params(model)
    with pytest.raises(ConfigError, match="chunk"):
        for batch in opt.data_loader:  # the next epoch: its first chunk must not be added
            _step(model, opt, batch)
    assert opt.steps == 0 and len(opt.accountant) == 0
    assert all(torch.equal(b, p) for b, p in zip(before, model.parameters()))
    assert opt._units == 0  # the unfinished batch's partial sum was discarded
    for batch in opt.data_loader:  # a fresh epoch trains normally
        _step(model, opt, batch)
    assert opt.steps == len(opt.data_loader)


def test_two_iterators_in_turn_are_refused() -> None:
    model, opt = _setup(2)
    it1, it2 = iter(opt.data_loader), iter(opt.data_loader)
    _step(model, opt, next(it1))
    with pytest.raises(ConfigError, match="another logical batch"):
        _step(model, opt, next(it2))
    assert opt.steps == 0


def _private(seed: int):  # type: ignore[no-untyped-def]
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(120, 4, generator=g)
    data = TensorDataset(x, (x[:, 0] > 0).long())
    model = nn.Linear(4, 2)
    sgd = torch.optim.SGD(model.parameters(), lr=0.1)
    return make_private(
        model, sgd, DataLoader(data, batch_size=60), max_grad_norm=1.0,
        noise_multiplier=1.0, secure_rng=False, seed=seed, max_physical_batch_size=8,
    )  # fmt: skip


def test_make_private_refuses_a_chunk_stepped_twice() -> None:
    pmodel, opt, loader = _private(3)
    batch = next(iter(loader))
    _step(pmodel, opt, batch)
    with pytest.raises(ConfigError, match="chunk 0 of the same"):
        _step(pmodel, opt, batch)  # the same records twice in one sum
    assert opt.steps == 0


def test_make_private_virtual_steps_keep_chunks_together() -> None:
    pmodel, opt, loader = _private(4)
    for batch in loader:
        _step(pmodel, opt, batch)
        break
    with pytest.raises(ConfigError, match="chunk"):
        for batch in loader:
            _step(pmodel, opt, batch)
    assert opt.steps == 0
    for batch in loader:
        _step(pmodel, opt, batch)
    assert opt.steps == len(loader)


def test_a_data_loader_with_a_subset_sampler_is_refused() -> None:
    # Poisson sampling draws from the whole dataset: the records the sampler leaves out (a
    # held-out split, withdrawn consent) would be trained on.
    data = TensorDataset(torch.randn(100, 4), torch.zeros(100, dtype=torch.long))
    loader = DataLoader(data, batch_size=10, sampler=SubsetRandomSampler(range(50)))
    with pytest.raises(ConfigError, match="SubsetRandomSampler"):
        PoissonLoader.from_data_loader(loader)
    with pytest.raises(ConfigError, match="SubsetRandomSampler"):
        dp_optimizer(nn.Linear(4, 2), l2_norm_clip=1.0, noise_multiplier=1.0, data_loader=loader)
    for shuffle in (False, True):  # the plain samplers stand for the whole dataset
        plain = PoissonLoader.from_data_loader(DataLoader(data, batch_size=10, shuffle=shuffle))
        assert plain.n == 100


def test_changing_the_loaders_sample_rate_is_refused() -> None:
    # The accountant keeps the rate the optimizer was built with: a loader switched to sample
    # more would spend more privacy than get_epsilon reports.
    model, opt = _setup(5)
    opt.data_loader.sample_rate = 0.9
    with pytest.raises(ConfigError, match="samples at 0.9"):
        _step(model, opt, next(iter(opt.data_loader)))
    assert opt.steps == 0 and len(opt.accountant) == 0
