"""``dp_optimizer(data_loader=...)``: TF-Privacy-style DP-SGD on Poisson-sampled batches.

The epsilon is the RDP bound of the sampled Gaussian mechanism, issued without the
fixed-batch warning, because the optimizer draws the batches itself and refuses steps that
were not fed from them; the batch sizes are checked to be Binomial(n, q).
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from scipy import stats  # noqa: E402
from torch import nn  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402

from veil.dp._rdp import DEFAULT_ORDERS, compute_rdp, rdp_to_epsilon  # noqa: E402
from veil.errors import ConfigError, InsecureRandomWarning, PrivacyLeakWarning  # noqa: E402
from veil.ml.dpsgd import (  # noqa: E402
    FixedBatchAccountingWarning,
    NoiseSource,
    PoissonLoader,
    dp_optimizer,
)

pytestmark = [
    pytest.mark.torch,
    pytest.mark.filterwarnings("ignore::veil.errors.InsecureRandomWarning"),  # seeded tests
]
ALPHA = 1e-6
DOCS = Path(__file__).resolve().parents[2] / "docs" / "dpsgd.md"


def _data(n: int = 200, d: int = 4, seed: int = 0) -> TensorDataset:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d, generator=g)
    return TensorDataset(x, (x[:, 0] > 0).long())


def _privacy_warnings(fn):  # type: ignore[no-untyped-def]
    """Run ``fn``; return its result and the PrivacyLeakWarnings it issued."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn()
    return out, [w for w in caught if issubclass(w.category, PrivacyLeakWarning)]


def _seeded(model: nn.Module, loader, **kw):  # type: ignore[no-untyped-def]
    conf = {"l2_norm_clip": 1.0, "noise_multiplier": 1.1, "learning_rate": 0.1, **kw}
    with pytest.warns(InsecureRandomWarning):
        return dp_optimizer(model, data_loader=loader, secure_rng=False, seed=3, **conf)


def _epoch(model: nn.Module, opt, loader) -> int:  # type: ignore[no-untyped-def]
    batches = 0
    for x, y in loader:
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
        batches += 1
    return batches


@pytest.mark.parametrize("given", ["DataLoader", "PoissonLoader"])
def test_poisson_path_reports_the_rdp_bound_without_warning(given: str) -> None:
    data = _data()
    n, batch_size, sigma, epochs = len(data), 16, 1.3, 3
    q = batch_size / n
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    loader = DataLoader(data, batch_size=batch_size, shuffle=True, drop_last=True)
    if given == "PoissonLoader":
        loader = PoissonLoader(data, q)

    def build():  # type: ignore[no-untyped-def]
        return dp_optimizer(model, l2_norm_clip=1.0, noise_multiplier=sigma, data_loader=loader)

    opt, caught = _privacy_warnings(build)
    assert caught == []
    assert isinstance(opt.data_loader, PoissonLoader)
    assert opt.sample_rate == q
    _, caught = _privacy_warnings(lambda: [_epoch(model, opt, opt.data_loader) for _ in range(3)])
    assert caught == []
    steps = epochs * round(1 / q)
    assert opt.steps == steps
    expected = rdp_to_epsilon(DEFAULT_ORDERS, compute_rdp(q, sigma, steps), 1e-5)
    assert opt.get_epsilon(1e-5) == pytest.approx(expected, rel=1e-12)


def test_fixed_batches_still_warn() -> None:
    data = _data()

    def build():  # type: ignore[no-untyped-def]
        return dp_optimizer(nn.Linear(4, 2), l2_norm_clip=1.0, noise_multiplier=1.1,
                            sample_rate=16 / len(data))  # fmt: skip

    _, caught = _privacy_warnings(build)
    assert [w.category for w in caught] == [FixedBatchAccountingWarning]
    assert caught[0].filename == __file__
    assert "data_loader=" in str(caught[0].message)  # points at the proven path


def test_claiming_poisson_sampling_does_not_pass_for_other_batches() -> None:
    # A PoissonLoader handed over but not used to feed the steps: the step is refused
    # (the epsilon would be the Poisson bound for batches that are not Poisson samples).
    data = _data()
    model = nn.Linear(4, 2)
    opt = _seeded(model, PoissonLoader(data, 0.1, noise=NoiseSource(secure=False, seed=1)))
    before = [p.detach().clone() for p in model.parameters()]
    for x, y in DataLoader(data, batch_size=20, shuffle=True):
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        with pytest.raises(ConfigError, match="0 batch"):
            opt.step()
        break
    assert opt.steps == 0 and len(opt.accountant) == 0
    assert all(torch.equal(b, p) for b, p in zip(before, model.parameters()))


def test_skipping_or_replacing_a_poisson_batch_is_refused() -> None:
    data = _data()
    model = nn.Linear(4, 2)
    opt = _seeded(model, DataLoader(data, batch_size=20))
    it = iter(opt.data_loader)
    next(it)  # skipped (e.g. "empty batch, continue"): two draws before the next step
    x, y = next(it)
    opt.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    with pytest.raises(ConfigError, match="2 batch"):
        opt.step()
    x, y = next(it)
    opt.zero_grad()
    nn.functional.cross_entropy(model(x[:1]), y[:1]).backward()  # not the drawn batch
    with pytest.raises(ConfigError, match="of 1 record"):
        opt.step()
    x, y = next(it)
    opt.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    opt.step()  # the honest loop still works
    assert opt.steps == 1


def test_bad_combinations_are_refused() -> None:
    data = _data()
    loader = DataLoader(data, batch_size=20)
    with pytest.raises(ConfigError, match="contradicts"):
        dp_optimizer(nn.Linear(4, 2), l2_norm_clip=1.0, noise_multiplier=1.0,
                     data_loader=loader, sample_rate=0.5)  # fmt: skip
    with pytest.raises(ConfigError, match="num_microbatches"):
        dp_optimizer(nn.Linear(4, 2), l2_norm_clip=1.0, noise_multiplier=1.0,
                     data_loader=loader, num_microbatches=4)  # fmt: skip
    with pytest.raises(ConfigError, match="DataLoader or a veil PoissonLoader"):
        dp_optimizer(nn.Linear(4, 2), l2_norm_clip=1.0, noise_multiplier=1.0,
                     data_loader=list(loader))  # fmt: skip
    # the same rate, stated twice, is accepted
    opt, caught = _privacy_warnings(
        lambda: dp_optimizer(
            nn.Linear(4, 2),
            l2_norm_clip=1.0,
            noise_multiplier=1.0,
            data_loader=loader,
            sample_rate=0.1,
        )  # fmt: skip
    )
    assert caught == [] and opt.sample_rate == 0.1


def test_poisson_batch_sizes_are_binomial() -> None:
    n, batch_size = 300, 15
    q = batch_size / n
    opt = _seeded(nn.Linear(4, 2), DataLoader(_data(n), batch_size=batch_size))
    sizes = np.array([len(x) for _ in range(150) for x, _ in opt.data_loader])
    assert sizes.size == 150 * round(1 / q)  # 3,000 batches

    def chi2_pvalue(observed: np.ndarray) -> float:
        # bins [0, a), a, ..., b - 1, [b, n] with expected counts >= 5 in every bin
        total = observed.size
        pmf = stats.binom.pmf(np.arange(n + 1), n, q)
        a, b = int(stats.binom.ppf(0.005, n, q)), int(stats.binom.isf(0.005, n, q)) + 1
        probs = np.r_[pmf[:a].sum(), pmf[a:b], pmf[b:].sum()]
        assert (probs * total).min() >= 5
        counts = np.bincount(np.clip(observed, a - 1, b) - (a - 1), minlength=b - a + 2)
        return float(stats.chisquare(counts, probs * total).pvalue)

    assert chi2_pvalue(sizes) > ALPHA
    assert sizes.mean() == pytest.approx(batch_size, abs=6 * np.sqrt(n * q * (1 - q) / sizes.size))
    # power: fixed-size batches of the same mean are rejected at the same level
    assert chi2_pvalue(np.full(sizes.size, batch_size)) < ALPHA


def test_update_is_clipped_sum_over_expected_batch_size() -> None:
    # Noise negligible: one step moves the weights by lr * sum_i clip(grad_i) / (q n), the
    # divisor that does not depend on the realised (data-dependent) Poisson batch size.
    data = TensorDataset(torch.randn(50, 3, generator=torch.Generator().manual_seed(2)) * 3)
    model = nn.Linear(3, 1, bias=False)
    with torch.no_grad():
        model.weight.zero_()
    loader = PoissonLoader(data, 0.2, noise=NoiseSource(secure=False, seed=5))
    opt = dp_optimizer(model, l2_norm_clip=1.0, noise_multiplier=1e-12, learning_rate=1.0,
                       data_loader=loader)  # fmt: skip
    (x,) = next(iter(opt.data_loader))
    assert 0 < len(x) != loader.expected_batch_size
    opt.zero_grad()
    model(x).mean().backward()  # per-sample gradient of the weight: x_i
    opt.step()
    clipped = x * torch.clamp(1.0 / x.norm(dim=1, keepdim=True), max=1.0)
    expected = -clipped.sum(0) / (0.2 * 50)
    torch.testing.assert_close(model.weight.detach()[0], expected, rtol=1e-5, atol=1e-6)


def test_virtual_steps_through_a_poisson_loader() -> None:
    data = _data(240)
    model = nn.Sequential(nn.Linear(4, 4), nn.LayerNorm(4), nn.Linear(4, 2))
    loader = PoissonLoader(data, 0.25, max_physical_batch_size=16,
                           noise=NoiseSource(secure=False, seed=2))  # fmt: skip
    opt, caught = _privacy_warnings(
        lambda: dp_optimizer(model, l2_norm_clip=1.0, noise_multiplier=1.0, data_loader=loader)
    )
    assert caught == []
    chunks = _epoch(model, opt, opt.data_loader)
    assert opt.steps == len(loader) == 4
    assert chunks >= 4 * 3  # ~60 records per logical batch, chunks of <= 16
    expected = rdp_to_epsilon(DEFAULT_ORDERS, compute_rdp(0.25, 1.0, 4), 1e-5)
    assert opt.get_epsilon(1e-5) == pytest.approx(expected, rel=1e-12)


def test_docs_example_runs_without_warning() -> None:
    text = DOCS.read_text(encoding="utf-8")
    m = re.search(r"<!-- poisson-dp-optimizer -->\s*```python\n(.*?)```", text, re.S)
    assert m, "docs/dpsgd.md lost its dp_optimizer(data_loader=...) example"
    ns: dict = {"__name__": "__main__"}
    _, caught = _privacy_warnings(lambda: exec(compile(m.group(1), str(DOCS), "exec"), ns))
    assert caught == []
    opt = ns["opt"]
    q = opt.sample_rate
    expected = rdp_to_epsilon(DEFAULT_ORDERS, compute_rdp(q, 1.1, opt.steps), 1e-5)
    assert ns["eps"] == pytest.approx(expected, rel=1e-12)


# --- empirical privacy audit of the Poisson path -------------------------------------------
def _poisson_step_outputs(with_x: bool, trials: int, sigma: float, q: float) -> np.ndarray:
    """Weight of a 1-parameter model after one step on a Poisson batch of {0, 5} or {0}.

    The record 0 has gradient 0, so the datasets differ by adding the record 5 (gradient 5,
    clipped to 1); the loss is a sum (divisor 1), so the output is the negated noisy sum."""
    xs = torch.tensor([[0.0], [5.0]]) if with_x else torch.tensor([[0.0]])
    model = nn.Linear(1, 1, bias=False)
    loader = PoissonLoader(TensorDataset(xs), q, noise=NoiseSource(secure=False, seed=int(with_x)))
    opt = dp_optimizer(model, l2_norm_clip=1.0, noise_multiplier=sigma, learning_rate=1.0,
                       data_loader=loader)  # fmt: skip
    opt.loss_reduction = "sum"

    def batches():  # type: ignore[no-untyped-def]
        while True:
            yield from opt.data_loader

    out = np.empty(trials)
    for t, (x,) in zip(range(trials), batches()):
        with torch.no_grad():
            model.weight.zero_()
        opt.zero_grad()
        model(x).sum().backward()
        opt.step()
        out[t] = float(model.weight.detach())
    return out


def _empirical_eps_lower_bound(a: np.ndarray, b: np.ndarray, delta: float) -> float:
    """Best one-sided threshold test, both directions: eps >= log((P_a[S] - delta) / P_b[S])
    with Clopper-Pearson bounds at ALPHA (lower for P_a, upper for P_b)."""
    n = len(a)
    best = 0.0
    for lo_side in (True, False):
        for thr in np.quantile(np.concatenate([a, b]), np.linspace(0.01, 0.99, 99)):
            ka = int((a < thr).sum() if lo_side else (a > thr).sum())
            kb = int((b < thr).sum() if lo_side else (b > thr).sum())
            pa = stats.beta.ppf(ALPHA, ka, n - ka + 1) if ka else 0.0
            pb = stats.beta.ppf(1 - ALPHA, kb + 1, n - kb)
            if pa - delta > 0:
                best = max(best, float(np.log((pa - delta) / pb)))
    return best


def test_privacy_audit_poisson_step_within_amplified_claim() -> None:
    q, sigma, delta, trials = 0.5, 2.0, 1e-5, 2000
    claimed = rdp_to_epsilon(DEFAULT_ORDERS, compute_rdp(q, sigma, 1), delta)
    with_x = _poisson_step_outputs(True, trials, sigma, q)
    without = _poisson_step_outputs(False, trials, sigma, q)
    # the record 5 was in about half of the batches: the mean moved by about -q
    assert with_x.mean() == pytest.approx(-q, abs=6 * np.sqrt((sigma**2 + q * (1 - q)) / trials))
    assert _empirical_eps_lower_bound(with_x, without, delta) <= claimed
    assert _empirical_eps_lower_bound(without, with_x, delta) <= claimed
    # power: the same attack catches noise 20x too small for that claim
    weak_x = _poisson_step_outputs(True, trials // 2, 0.1, q)
    weak = _poisson_step_outputs(False, trials // 2, 0.1, q)
    assert _empirical_eps_lower_bound(weak_x, weak, delta) > claimed
