"""Attacks on the DP-SGD engine (session 9): each test failed before its fix.

* a parameter frozen when ``make_private`` ran and unfrozen later was stepped with its raw
  batch gradient (no clipping, no noise);
* ``make_private`` took ``q = batch_size / len(dataset)`` from a loader whose sampler draws
  from a subset (so its records were sampled at ``batch_size / m > q``, or the left-out
  records trained on by Poisson sampling) or with replacement (one record twice per batch);
* two noisy steps on the same Poisson batch were each accounted as an independently
  sampled batch: the same batch released twice is the sampled Gaussian mechanism at
  ``sigma / sqrt(2)`` (Mironov, Talwar & Zhang 2019), whose tight (PLD) epsilon exceeds
  the reported one.

Plus end-to-end checks of the claims: the per-example norms the optimizer clipped equal a
naive per-example autograd loop on a model mixing every supported layer type, and noise of
standard deviation ``sigma * C`` reaches every trainable parameter (and only those).
"""

from __future__ import annotations

import warnings

import pytest

torch = pytest.importorskip("torch")

from scipy import stats  # noqa: E402
from torch import nn  # noqa: E402
from torch.utils.data import (  # noqa: E402
    DataLoader,
    RandomSampler,
    SubsetRandomSampler,
    TensorDataset,
)

from veil.dp._pld import PLDAccountant  # noqa: E402
from veil.dp._rdp import RDPAccountant  # noqa: E402
from veil.errors import ConfigError  # noqa: E402
from veil.ml.dpsgd import make_private  # noqa: E402

ALPHA = 1e-3


def _private(net: nn.Module, data: TensorDataset, **kw: object) -> tuple:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return make_private(
            net,
            torch.optim.SGD([p for p in net.parameters()], lr=0.1),
            DataLoader(data, batch_size=kw.pop("batch_size", 10), **kw.pop("dl", {})),
            max_grad_norm=kw.pop("max_grad_norm", 1.0),
            noise_multiplier=kw.pop("noise_multiplier", 1.0),
            secure_rng=False,
            seed=7,
            **kw,
        )


def _data(n: int = 40) -> TensorDataset:
    g = torch.Generator().manual_seed(0)
    return TensorDataset(torch.randn(n, 3, generator=g), torch.randint(0, 2, (n,), generator=g))


@pytest.mark.parametrize("first", ["linear", "layernorm-weight"])
def test_a_parameter_unfrozen_after_make_private_is_not_stepped_unnoised(first: str) -> None:
    layer = nn.Linear(3, 3) if first == "linear" else nn.LayerNorm(3)
    net = nn.Sequential(layer, nn.Linear(3, 2))
    frozen = net[0].parameters() if first == "linear" else [net[0].weight]
    for p in frozen:
        p.requires_grad_(False)
    model, opt, _ = _private(net, _data())
    net[0].weight.requires_grad_(True)  # fine-tuning schedule: unfreeze it
    before = net[0].weight.detach().clone()
    x, y = _data().tensors
    opt.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    with pytest.raises(ConfigError, match="no per-sample"):
        opt.step()
    assert torch.equal(net[0].weight, before)
    assert opt.steps == 0


@pytest.mark.parametrize("poisson", [True, False])
def test_make_private_refuses_a_subset_sampler(poisson: bool) -> None:
    # 10 of 40 records, batch 10: the sampler puts each of them in every batch (rate 1),
    # the accountant would have charged q = 10 / 40
    data = _data()
    dl = {"sampler": SubsetRandomSampler(range(10))}
    with pytest.raises(ConfigError, match="SubsetRandomSampler"):
        _private(nn.Linear(3, 2), data, dl=dl, poisson_sampling=poisson)


def test_make_private_refuses_fixed_batches_drawn_with_replacement() -> None:
    data = _data()
    dl = {"sampler": RandomSampler(data, replacement=True)}
    with pytest.raises(ConfigError, match="with replacement"):
        _private(nn.Linear(3, 2), data, dl=dl, poisson_sampling=False)
    _private(nn.Linear(3, 2), data, dl={"shuffle": True}, poisson_sampling=False)  # fine


def test_make_private_refuses_a_random_sampler_drawing_more_than_the_dataset() -> None:
    # RandomSampler(num_samples > n) without replacement chains permutations: a batch across
    # two of them can hold one record twice (sensitivity 2 C), as replacement=True can
    data = _data()
    dl = {"sampler": RandomSampler(data, num_samples=2 * len(data))}
    with pytest.raises(ConfigError, match="num_samples"):
        _private(nn.Linear(3, 2), data, dl=dl, poisson_sampling=False)
    same = {"sampler": RandomSampler(data, num_samples=len(data))}  # one permutation: fine
    _private(nn.Linear(3, 2), data, dl=same, poisson_sampling=False)


def test_two_steps_on_one_poisson_batch_would_exceed_the_reported_epsilon() -> None:
    # why it must be refused: two releases of one Poisson batch at sigma are one release at
    # sigma / sqrt(2); its tight PLD epsilon (slack <= 0.05) is above the RDP epsilon the
    # accountant would report for two independent steps.
    q, sigma, batches = 0.01, 1.1, 1000
    reported = RDPAccountant()
    reported.step(noise_multiplier=sigma, sample_rate=q, steps=2 * batches)
    true = PLDAccountant()
    true.step(noise_multiplier=sigma / 2**0.5, sample_rate=q, steps=batches)
    assert true.get_epsilon(1e-5) - 0.05 > reported.get_epsilon(1e-5)

    net = nn.Linear(3, 2)
    model, opt, loader = _private(net, _data())
    for x, y in loader:
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
        before = net.weight.detach().clone()
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        with pytest.raises(ConfigError, match="already used"):
            opt.step()
        assert torch.equal(net.weight, before)
        break
    assert opt.steps == 1
    for x, y in loader:  # the following batches step as usual
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    assert opt.steps == 1 + len(loader)


class _Mixed(nn.Module):
    """Embedding (repeated ids), Conv1d, GroupNorm, LSTM, LayerNorm, a Linear used twice,
    a frozen Linear and a buffer."""

    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(5, 4)
        self.conv = nn.Conv1d(4, 4, 2, padding=1)
        self.gn = nn.GroupNorm(2, 4)
        self.rnn = nn.LSTM(4, 4, batch_first=True)
        self.ln = nn.LayerNorm(4)
        self.twice = nn.Linear(4, 4)
        self.frozen = nn.Linear(4, 4)
        self.frozen.requires_grad_(False)
        self.head = nn.Linear(4, 2)
        self.register_buffer("shift", torch.full((4,), 0.5))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        h = self.emb(ids)  # (B, T, 4)
        h = self.gn(self.conv(h.transpose(1, 2)))[:, :, : ids.shape[1]].transpose(1, 2)
        h, _ = self.rnn(h)
        h = self.ln(h[:, -1] + self.shift)
        h = self.twice(torch.tanh(self.twice(h)))
        return self.head(self.frozen(h))


@pytest.mark.parametrize("clipping", ["ghost", "flat"])
def test_norms_the_optimizer_clipped_match_a_per_example_autograd_loop(clipping: str) -> None:
    torch.manual_seed(1)
    ids = torch.tensor([[1, 1, 1, 2], [3, 3, 0, 3], [4, 2, 4, 2], [0, 1, 2, 3]])
    y = torch.tensor([0, 1, 1, 0])
    net = _Mixed()
    twin = _Mixed()
    twin.load_state_dict(net.state_dict())
    data = TensorDataset(ids, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model, opt, _ = make_private(
            net,
            torch.optim.SGD(net.parameters(), lr=0.0),
            DataLoader(data, batch_size=4),
            max_grad_norm=1e-3,
            noise_multiplier=1.0,
            poisson_sampling=False,
            clipping=clipping,
            secure_rng=False,
            seed=3,
        )
    opt.zero_grad()
    nn.functional.cross_entropy(model(ids), y).backward()
    opt.step()
    naive = []
    for i in range(len(ids)):
        twin.zero_grad()
        nn.functional.cross_entropy(twin(ids[i : i + 1]), y[i : i + 1]).backward()
        grads = [p.grad.flatten() for p in twin.parameters() if p.requires_grad]
        naive.append(torch.cat(grads).norm())
    assert opt.last_norms is not None
    torch.testing.assert_close(opt.last_norms.float(), torch.stack(naive), rtol=1e-4, atol=1e-6)


def test_noise_of_std_sigma_c_reaches_every_trainable_parameter_only() -> None:
    net = _Mixed()
    frozen = [p.detach().clone() for p in net.frozen.parameters()]
    sigma, clip, bsz = 1.5, 2.0, 4
    ids = torch.zeros((bsz, 3), dtype=torch.long)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model, opt, _ = make_private(
            net,
            torch.optim.SGD(net.parameters(), lr=0.0),
            DataLoader(TensorDataset(ids, torch.zeros(bsz, dtype=torch.long)), batch_size=bsz),
            max_grad_norm=clip,
            noise_multiplier=sigma,
            poisson_sampling=False,
            secure_rng=False,
            seed=11,
        )
    draws: dict[str, list] = {n: [] for n, p in net.named_parameters() if p.requires_grad}
    for _ in range(60):
        opt.zero_grad()
        (model(ids) * 0.0).sum().backward()  # zero gradients: p.grad * batch = the noise
        opt.step()
        for n, p in net.named_parameters():
            if p.requires_grad:
                draws[n].append(p.grad.detach().flatten() * bsz)
            else:
                assert p.grad is None
    for n, d in draws.items():
        z = torch.cat(d).double().numpy()
        assert stats.kstest(z, stats.norm(scale=sigma * clip).cdf).pvalue > ALPHA, n
    for a, b in zip(frozen, net.frozen.parameters()):
        assert torch.equal(a, b)


def test_make_private_warns_when_steps_are_not_fed_by_its_poisson_loader() -> None:
    from veil.ml.dpsgd import FixedBatchAccountingWarning

    data = _data()
    net = nn.Linear(3, 2)
    mine = DataLoader(data, batch_size=10, shuffle=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model, opt, loader = make_private(
            net,
            torch.optim.SGD(net.parameters(), lr=0.1),
            mine,
            max_grad_norm=1.0,
            noise_multiplier=1.0,
            max_physical_batch_size=4,  # virtual steps: one step per chunk is fed
            secure_rng=False,
            seed=2,
        )
    # the caller's own (fixed, shuffled) batches are not what the Poisson bound covers
    with pytest.warns(FixedBatchAccountingWarning, match="not fed the next batch") as rec:
        for x, y in mine:
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
    fixed = [w for w in rec if w.category is FixedBatchAccountingWarning]
    assert len(fixed) == 1  # once
    assert fixed[0].filename == __file__  # points at the caller's opt.step()
    steps = opt.steps
    with warnings.catch_warnings():
        warnings.simplefilter("error", FixedBatchAccountingWarning)
        for x, y in loader:
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
    assert opt.steps == steps + len(loader)


def test_a_step_that_fails_in_the_wrapped_optimizer_is_still_accounted() -> None:
    class Failing(torch.optim.SGD):
        def step(self, closure: object = None) -> None:  # type: ignore[override]
            raise RuntimeError("disk full")

    net = nn.Linear(3, 2)
    data = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model, opt, loader = make_private(
            net,
            Failing(net.parameters(), lr=0.1),
            DataLoader(data, batch_size=10),
            max_grad_norm=1.0,
            noise_multiplier=1.0,
            secure_rng=False,
            seed=4,
        )
    x, y = next(iter(loader))
    nn.functional.cross_entropy(model(x), y).backward()
    with pytest.raises(RuntimeError, match="disk full"):
        opt.step()
    assert net.weight.grad is not None  # the noisy gradient was released to the caller ...
    assert len(opt.accountant.history) == 1 and opt.get_epsilon(1e-5) > 0  # ... and charged


@pytest.mark.parametrize(("sigma", "steps"), [(0.25, 300), (1.0, 10), (5.0, 1)])
def test_pld_without_subsampling_bounds_the_exact_gaussian_epsilon(
    sigma: float, steps: int
) -> None:
    # q = 1: the composed mechanism is one Gaussian with mu = sqrt(steps) / sigma, whose exact
    # curve is delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (Balle & Wang
    # 2018).  The wide loss range of (0.25, 300) made the PLD conversion overflow (crash).
    import math

    from scipy.optimize import brentq

    delta, mu = 1e-5, math.sqrt(steps) / sigma

    def gap(eps: float) -> float:
        tail = stats.norm.cdf(-eps / mu + mu / 2)
        return tail - math.exp(eps + stats.norm.logcdf(-eps / mu - mu / 2)) - delta

    exact = brentq(gap, 0.0, mu * mu + 20 * mu, xtol=1e-10)
    h = 1e-3  # grid width: rounding up adds at most steps * h
    acc = PLDAccountant(value_discretization=h)
    acc.step(noise_multiplier=sigma, sample_rate=1.0, steps=steps)
    assert exact <= acc.get_epsilon(delta) <= exact + steps * h + 1e-6
