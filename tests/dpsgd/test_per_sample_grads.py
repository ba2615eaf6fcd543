"""Per-sample gradients, norms and clipped sums equal a loop of individual backward passes."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402

from veil.ml.dpsgd import PerSampleGrads  # noqa: E402

pytestmark = pytest.mark.torch


class _Seq(nn.Module):
    """Token ids -> embedding -> recurrent layer -> linear head (exercises 3-D inputs)."""

    def __init__(self, rnn: nn.Module) -> None:
        super().__init__()
        self.emb = nn.Embedding(11, 5)
        self.rnn = rnn
        width = rnn.hidden_size * (2 if rnn.bidirectional else 1)
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.rnn(self.emb(x))
        return self.head(self.norm(out)).mean(1)


class _SeqLinear(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(4, 6)
        self.b = nn.Linear(6, 2, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(torch.tanh(self.a(x))).sum(1)


def _models() -> dict[str, tuple]:
    g = torch.Generator().manual_seed(0)

    def rn(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=g, dtype=torch.float64)

    ids = torch.randint(0, 11, (6, 7), generator=g)
    return {
        "mlp": (nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3)), rn(6, 5)),
        "linear-seq": (_SeqLinear(), rn(6, 9, 4)),
        "conv1d": (nn.Sequential(nn.Conv1d(2, 4, 3), nn.Flatten(), nn.Linear(24, 3)), rn(6, 2, 8)),
        "conv2d-groupnorm": (
            nn.Sequential(
                nn.Conv2d(1, 4, 3, padding=1),
                nn.GroupNorm(2, 4),
                nn.ReLU(),
                nn.Flatten(),
                nn.Linear(4 * 25, 3),
            ),
            rn(6, 1, 5, 5),
        ),
        "conv-vmap-fallback": (
            nn.Sequential(
                nn.Conv2d(2, 4, 3, padding="same", groups=2), nn.Flatten(), nn.Linear(64, 3)
            ),
            rn(6, 2, 4, 4),
        ),
        "conv2d-strided-dilated": (
            nn.Sequential(
                nn.Conv2d(3, 5, 3, stride=2, dilation=2, padding=1),
                nn.Flatten(),
                nn.Linear(5 * 16, 2),
            ),
            rn(6, 3, 9, 9),
        ),
        "rnn": (_Seq(nn.RNN(5, 4, batch_first=True)), ids),
        "lstm-2layer-bidir": (
            _Seq(nn.LSTM(5, 4, num_layers=2, bidirectional=True, batch_first=True)),
            ids,
        ),
        "gru": (_Seq(nn.GRU(5, 4, batch_first=True)), ids),
    }


def _loop_grads(model: nn.Module, x: torch.Tensor) -> list[list[torch.Tensor]]:
    out = []
    for i in range(x.shape[0]):
        model.zero_grad()
        model(x[i : i + 1]).square().sum().backward()
        out.append([p.grad.detach().clone() for p in model.parameters()])
    return out


@pytest.mark.parametrize("clipping", ["ghost", "flat"])
@pytest.mark.parametrize("name", list(_models()))
def test_norms_and_clipped_sum_match_loop(name: str, clipping: str) -> None:
    torch.manual_seed(0)
    model, x = _models()[name]
    model = model.double()
    ref = _loop_grads(model, x)
    ref_norms = torch.stack([torch.sqrt(sum(g.square().sum() for g in gs)) for gs in ref])
    psg = PerSampleGrads(model, clipping=clipping)
    try:
        model.zero_grad()
        # mean reduction: the captured gradients are 1/B of the per-sample ones
        model(x).square().sum(1).mean().backward()
        for p in model.parameters():
            assert p.grad is None  # no un-clipped batch gradient leaks into .grad
        bsz = x.shape[0]
        norms = psg.per_sample_norms(scale=bsz)
        torch.testing.assert_close(norms, ref_norms, rtol=1e-9, atol=1e-12)
        clip = float(ref_norms.median())
        sums, units, _ = psg.clipped_sum(clip, scale=bsz)
        assert units == bsz
        factors = (clip / (ref_norms + 1e-6)).clamp(max=1.0)
        for k, p in enumerate(model.parameters()):
            expected = sum(factors[i] * ref[i][k] for i in range(bsz))
            torch.testing.assert_close(sums[p], expected, rtol=1e-9, atol=1e-12)
    finally:
        psg.remove()
    assert "forward" not in vars(model)


def test_microbatch_norms_are_norms_of_microbatch_mean_gradients() -> None:
    model, x = _models()["mlp"]
    model = model.double()
    ref = _loop_grads(model, x)
    psg = PerSampleGrads(model)
    model(x).square().sum(1).mean().backward()
    # 3 microbatches of 2: TF semantics = mean of the per-sample gradients in each
    norms = psg.per_sample_norms(scale=3.0, n_units=3)
    expected = torch.stack(
        [
            torch.sqrt(
                sum(
                    ((ref[2 * m][k] + ref[2 * m + 1][k]) / 2).square().sum()
                    for k in range(len(ref[0]))
                )
            )
            for m in range(3)
        ]
    )
    torch.testing.assert_close(norms, expected, rtol=1e-9, atol=1e-12)
    psg.remove()


def test_layer_called_twice_sums_contributions() -> None:
    lin = nn.Linear(3, 3).double()
    model = nn.Sequential()
    model.lin = lin

    class Twice(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = lin

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.lin(torch.tanh(self.lin(x)))

    tw = Twice()
    x = torch.randn(4, 3, dtype=torch.float64)
    ref = _loop_grads(tw, x)
    ref_norms = torch.stack([torch.sqrt(sum(g.square().sum() for g in gs)) for gs in ref])
    psg = PerSampleGrads(tw)
    tw(x).square().sum().backward()
    torch.testing.assert_close(psg.per_sample_norms(scale=1.0), ref_norms)
    psg.remove()
