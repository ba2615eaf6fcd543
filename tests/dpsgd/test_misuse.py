"""Misuse that used to be accepted silently: the batch off dimension 0, gradients of two
batches accumulated into one step, insecure noise without a seed, fixed-size batches reported
with Poisson accounting, and the Embedding padding row."""

from __future__ import annotations

import warnings

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402

from veil.errors import (  # noqa: E402
    ConfigError,
    InputError,
    InsecureRandomWarning,
    PrivacyLeakWarning,
)
from veil.ml.dpsgd import (  # noqa: E402
    FixedBatchAccountingWarning,
    NoiseSource,
    PerSampleGrads,
    dp_optimizer,
    make_private,
    validate_module,
)

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


class _TimeMajorHead(nn.Module):
    """(B, T, 3) -> transposed to (T, B, 3) -> Linear: the batch is not dimension 0."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(3, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x.transpose(0, 1)).sum(0)


class _Flattened(nn.Module):
    """(B, T, 3) -> (B*T, 3) -> Linear: the batch is merged with time."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(3, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x.reshape(-1, 3)).reshape(x.shape[0], -1).sum(1)


class _TimeMajorNorm(nn.Module):
    """The torch.func path: LayerNorm on a (T, B, 3) tensor."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.LayerNorm(3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x.transpose(0, 1)).sum(0)


class _GruHead(nn.Module):
    def __init__(self, batch_first: bool) -> None:
        super().__init__()
        self.gru = nn.GRU(3, 5, batch_first=batch_first)
        self.head = nn.Linear(5, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.gru(x)
        return self.head(out).mean(1 if self.gru.batch_first else 0)


@pytest.mark.parametrize("model_cls", [_TimeMajorHead, _Flattened, _TimeMajorNorm])
@pytest.mark.parametrize("clipping", ["ghost", "flat"])
def test_batch_moved_off_dimension_zero_is_refused(model_cls: type, clipping: str) -> None:
    # B = 4 samples, T = 6 steps: the engine used to clip 6 (or 24) "units" instead of 4
    # samples, so one sample's influence on the clipped sum was not bounded by C
    model = model_cls()
    psg = PerSampleGrads(model, clipping=clipping)
    try:
        with pytest.raises(InputError, match=r"lin .*dimension 0"):
            model(torch.randn(4, 6, 3)).sum().backward()
    finally:
        psg.remove()


def test_batch_first_false_recurrent_layers_are_refused() -> None:
    # T = B = 4 was accepted silently (per-time-step clipping); T != B only failed by luck
    with pytest.raises(ConfigError, match="batch_first=True"):
        validate_module(_GruHead(batch_first=False))
    with pytest.raises(ConfigError, match="batch_first=True"):
        PerSampleGrads(_GruHead(batch_first=False))
    for lstm in (nn.LSTM(3, 4), nn.RNN(3, 4, num_layers=2)):
        with pytest.raises(ConfigError, match="batch_first"):
            validate_module(lstm)
    validate_module(_GruHead(batch_first=True))


def test_layer_called_outside_the_model_is_refused() -> None:
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    psg = PerSampleGrads(model)
    try:
        with pytest.raises(InputError, match="batch size is unknown"):
            model[0](torch.randn(5, 3)).sum().backward()
        model(torch.randn(5, 3)).sum().backward()  # through the model: fine
        assert psg.batch_size() == 5
    finally:
        psg.remove()


def _clipped_sum(model: nn.Module, x: object, clip: float) -> dict:
    psg = PerSampleGrads(model)
    try:
        model(x).square().sum().backward()
        sums, _, _ = psg.clipped_sum(clip, scale=1.0)
        return {p: v.detach().clone() for p, v in sums.items()}
    finally:
        psg.remove()


def test_batch_size_is_taken_from_tuple_and_dict_inputs_and_clipping_is_per_sample() -> None:
    class DictModel(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.gru = nn.GRU(3, 5, batch_first=True)
            self.head = nn.Linear(5, 2)

        def forward(self, batch: dict) -> torch.Tensor:
            out, _ = self.gru(batch["x"])
            return self.head(out[:, -1]) * batch["w"].unsqueeze(1)

    torch.manual_seed(0)
    model = DictModel().double()
    x = torch.randn(4, 4, 3, dtype=torch.float64) * 5  # T = B = 4
    w = torch.rand(4, dtype=torch.float64) + 0.5
    clip = 0.1
    full = _clipped_sum(model, {"x": x, "w": w}, clip)
    # sensitivity: removing any one sample moves the clipped sum by at most C
    for i in range(4):
        keep = [j for j in range(4) if j != i]
        part = _clipped_sum(model, {"x": x[keep], "w": w[keep]}, clip)
        diff = torch.sqrt(sum((full[p] - part[p]).square().sum() for p in full))
        assert float(diff) <= clip * (1 + 1e-6)

    class PairModel(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = nn.Linear(3, 2)

        def forward(self, pair: tuple) -> torch.Tensor:
            return self.lin(pair[0]) + pair[1]

    pair_model = PairModel()
    psg = PerSampleGrads(pair_model)
    try:
        pair_model((torch.randn(7, 3), torch.randn(7, 2))).sum().backward()
        assert psg.batch_size() == 7
    finally:
        psg.remove()


def _insecure_private(
    model: nn.Module, data: TensorDataset, batch_size: int, **kw: object
) -> tuple:
    """``make_private`` of ``model`` with SGD (lr 0.1) over ``data`` in batches of
    ``batch_size``, ``noise_multiplier=1``, ``max_grad_norm=1`` and seeded insecure noise (the
    :class:`InsecureRandomWarning` is asserted); ``kw`` adds or overrides the rest."""
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    conf = {"noise_multiplier": 1.0, "max_grad_norm": 1.0, "secure_rng": False, "seed": 0, **kw}
    with pytest.warns(InsecureRandomWarning):
        return make_private(model, opt, DataLoader(data, batch_size=batch_size), **conf)


def _two_batches() -> tuple:
    g = torch.Generator().manual_seed(0)
    xs = [torch.randn(8, 4, generator=g) for _ in range(2)]
    ys = [torch.randint(0, 2, (8,), generator=g) for _ in range(2)]
    return xs, ys


@pytest.mark.parametrize("middle", [nn.LayerNorm, nn.Tanh])  # torch.func leaf or none
def test_accumulating_two_batches_before_step_is_refused(middle: type) -> None:
    # two 8-sample backward passes used to make one step where sample i of batch 1 was
    # clipped together with sample i of batch 2 (and accounted as one sample)
    model = nn.Sequential(nn.Linear(4, 4), middle(4) if middle is nn.LayerNorm else middle())
    model.append(nn.Linear(4, 2))
    data = TensorDataset(torch.randn(64, 4), torch.randint(0, 2, (64,)))
    model, opt, _ = _insecure_private(model, data, 8)
    xs, ys = _two_batches()
    opt.zero_grad()
    for x, y in zip(xs, ys):
        nn.functional.cross_entropy(model(x), y).backward()
    with pytest.raises(ConfigError, match="max_physical_batch_size"):
        opt.step()
    assert opt.steps == 0 and opt.accountant.history == []
    # the usual loop still works after zero_grad(), as does a forward that is never
    # back-propagated (evaluation with gradients enabled)
    for x, y in zip(xs, ys):
        opt.zero_grad()
        model(x)
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    assert opt.steps == 2
    with pytest.warns(InsecureRandomWarning):
        tf_opt = dp_optimizer(
            nn.Linear(4, 2),
            l2_norm_clip=1.0,
            noise_multiplier=1.0,
            sample_rate=0.1,
            secure_rng=False,
            seed=0,
        )
    tf_model = tf_opt.grads.module
    for x, y in zip(xs, ys):
        nn.functional.cross_entropy(tf_model(x), y).backward()
    with pytest.raises(ConfigError, match="2 forward/backward passes"):
        tf_opt.step()


def test_virtual_steps_still_accumulate_chunks_into_one_step() -> None:
    g = torch.Generator().manual_seed(1)
    data = TensorDataset(torch.randn(120, 4, generator=g), torch.randint(0, 2, (120,), generator=g))
    model = nn.Sequential(nn.Linear(4, 4), nn.LayerNorm(4), nn.Linear(4, 2))
    model, opt, loader = _insecure_private(model, data, 60, max_physical_batch_size=16)
    chunks = 0
    for x, y in loader:
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
        chunks += 1
    assert opt.steps == len(loader) == 2
    assert chunks >= 2 * 3  # ~60 samples per logical batch in chunks of <= 16


def _fixed_batch_warnings(fn: object) -> list:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()  # type: ignore[operator]
    return [w for w in caught if issubclass(w.category, FixedBatchAccountingWarning)]


def test_fixed_size_batches_warn_that_epsilon_is_an_approximation() -> None:
    data = TensorDataset(torch.randn(40, 3), torch.randint(0, 2, (40,)))

    def build(poisson: bool) -> None:
        model = nn.Linear(3, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        make_private(
            model,
            opt,
            DataLoader(data, batch_size=8, shuffle=True),
            noise_multiplier=1.0,
            max_grad_norm=1.0,
            poisson_sampling=poisson,
        )

    fixed = _fixed_batch_warnings(lambda: build(False))
    assert len(fixed) == 1
    assert issubclass(fixed[0].category, PrivacyLeakWarning)
    assert "NOT a proven bound" in str(fixed[0].message)
    assert "replace-one" in str(fixed[0].message)
    assert fixed[0].filename == __file__  # points at the caller's line
    assert _fixed_batch_warnings(lambda: build(True)) == []
    tf = _fixed_batch_warnings(
        lambda: dp_optimizer(
            nn.Linear(3, 2), l2_norm_clip=1.0, noise_multiplier=1.0, sample_rate=0.2
        )
    )
    assert len(tf) == 1 and tf[0].filename == __file__


@pytest.mark.parametrize("padding_idx", [0, -1])
def test_embedding_padding_row_gets_no_per_sample_gradient(padding_idx: int) -> None:
    # samples holding the padding index more than once used to get a non-zero padding-row
    # gradient on the torch.func path (inflated norms, the padding row trained)
    class Tagger(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.emb = nn.Embedding(7, 3, padding_idx=padding_idx)
            self.head = nn.Linear(3, 2)

        def forward(self, ids: torch.Tensor) -> torch.Tensor:
            return self.head(self.emb(ids)).sum(1)

    torch.manual_seed(0)
    model = Tagger().double()
    pad = padding_idx % 7
    ids = torch.tensor([[1, 2, 3, 4], [3, pad, 4, pad], [pad, pad, pad, 5], [pad, 2, 2, 6]])
    ref = []
    for i in range(ids.shape[0]):
        model.zero_grad()
        model(ids[i : i + 1]).square().sum().backward()
        ref.append([p.grad.detach().clone() for p in model.parameters()])
    ref_norms = torch.stack([torch.sqrt(sum(g.square().sum() for g in gs)) for gs in ref])
    psg = PerSampleGrads(model)
    try:
        model(ids).square().sum(1).mean().backward()
        norms = psg.per_sample_norms(scale=4.0).detach()
        torch.testing.assert_close(norms, ref_norms, rtol=1e-9, atol=1e-12)
        clip = float(ref_norms.median())
        sums, _, _ = psg.clipped_sum(clip, scale=4.0)
        factors = (clip / (ref_norms + 1e-6)).clamp(max=1.0)
        for k, p in enumerate(model.parameters()):
            expected = sum(factors[i] * ref[i][k] for i in range(len(ref)))
            torch.testing.assert_close(sums[p].detach(), expected, rtol=1e-9, atol=1e-12)
        assert torch.equal(sums[model.emb.weight][pad], torch.zeros(3, dtype=torch.float64))
    finally:
        psg.remove()


def test_gradient_checkpointing_and_a_scalar_first_argument_work():
    """Checkpointing re-runs layer forwards during backward, after the model's forward has
    returned; a scalar tensor before the input is not the batch."""
    from torch.utils.checkpoint import checkpoint

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a = nn.Linear(4, 8)
            self.b = nn.Linear(8, 2)

        def forward(self, temp, x):
            h = checkpoint(lambda t: torch.relu(self.a(t)), x, use_reentrant=False)
            return self.b(h) / temp

    torch.manual_seed(0)
    data = TensorDataset(torch.randn(32, 4), torch.randint(0, 2, (32,)))
    model, opt, loader = _insecure_private(Net(), data, 8, seed=1)
    steps = 0
    for xb, yb in loader:
        opt.zero_grad()
        nn.functional.cross_entropy(model(torch.tensor(2.0), xb), yb).backward()
        opt.step()
        steps += 1
    assert steps > 0 and all(torch.isfinite(p).all() for p in model.parameters())
