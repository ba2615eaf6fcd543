"""``make_private``: turn a PyTorch (module, optimizer, data loader) triple into DP-SGD.

Example
-------
>>> import torch
>>> from torch import nn
>>> from torch.utils.data import DataLoader, TensorDataset
>>> from veil.ml.dpsgd import make_private
>>> data = TensorDataset(torch.randn(200, 4), torch.randint(0, 2, (200,)))
>>> model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
>>> opt = torch.optim.SGD(model.parameters(), lr=0.1)
>>> model, opt, loader = make_private(model, opt, DataLoader(data, batch_size=20),
...                                   noise_multiplier=1.0, max_grad_norm=1.0)
>>> for x, y in loader:
...     opt.zero_grad()
...     nn.functional.cross_entropy(model(x), y).backward()
...     opt.step()
>>> 0 < opt.get_epsilon(1e-5) < 10
True
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch
from torch import nn
from torch.utils.data import DataLoader

from veil.dp._rdp import RDPAccountant, noise_multiplier_for
from veil.errors import ConfigError

from ._grad_sample import PerSampleGrads
from ._loader import PoissonLoader, StepSignal, check_finite, check_size, loader_rate
from ._noise import NoiseSource
from ._optimizer import DPOptimizer, warn_fixed_batches
from ._validate import _check_noise_multiplier, _check_positive

__all__ = ["make_private", "DPModule", "PrivacyEngine"]


class DPModule(nn.Module):
    """Thin wrapper returned by :func:`make_private`.

    Forwards to the wrapped module (whose leaf modules carry the per-sample gradient capture),
    refuses inputs containing NaN/inf, and exposes the wrapped module's ``state_dict`` with
    its original keys.  :meth:`remove_hooks` restores and returns the plain module.

    Examples
    --------
    >>> from torch.utils.data import TensorDataset
    >>> net = nn.Linear(3, 2)
    >>> data = DataLoader(TensorDataset(torch.randn(40, 3)), batch_size=10)
    >>> model, opt, loader = make_private(
    ...     net, torch.optim.SGD(net.parameters(), lr=0.1), data,
    ...     max_grad_norm=1.0, noise_multiplier=1.0,
    ... )
    >>> type(model).__name__, list(model.state_dict())  # the original keys
    ('DPModule', ['weight', 'bias'])
    >>> model(torch.tensor([[0.0, float("nan"), 1.0]]))
    Traceback (most recent call last):
    ...
    veil.errors.InputError: ...
    >>> model.remove_hooks() is net  # after training: the plain module, for export
    True
    """

    def __init__(self, module: nn.Module, grads: PerSampleGrads) -> None:
        super().__init__()
        self._module = module
        self._veil_grads = grads

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        if torch.is_grad_enabled() and self.training:
            check_finite(list(args))
        return self._module(*args, **kwargs)

    def state_dict(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        return self._module.state_dict(*args, **kwargs)

    def load_state_dict(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        return self._module.load_state_dict(*args, **kwargs)

    def remove_hooks(self) -> nn.Module:
        """Uninstall per-sample gradient capture and return the original module."""
        self._veil_grads.remove()
        return self._module


class _CheckedLoader:
    """Wrap a user DataLoader (``poisson_sampling=False``): NaN checks, step signal."""

    def __init__(self, loader: DataLoader, signal: StepSignal, sample_rate: float) -> None:
        self.loader = loader
        self.signal = signal
        self.sample_rate = sample_rate
        self.dataset = loader.dataset
        self.n = len(loader.dataset)  # the n of sample_rate = batch_size / n

    def __len__(self) -> int:
        return len(self.loader)

    def __iter__(self) -> Iterator[Any]:
        check_size(self.dataset, self.n)
        self.signal.last_chunk = True
        for batch in self.loader:
            check_finite(batch)
            yield batch


def make_private(
    module: nn.Module,
    optimizer: torch.optim.Optimizer,
    data_loader: DataLoader,
    *,
    max_grad_norm: float,
    noise_multiplier: float | None = None,
    target_epsilon: float | None = None,
    target_delta: float = 1e-5,
    epochs: int | None = None,
    poisson_sampling: bool = True,
    secure_rng: bool = True,
    seed: int | None = None,
    clipping: str = "ghost",
    loss_reduction: str = "mean",
    max_physical_batch_size: int | None = None,
    accountant: RDPAccountant | None = None,
) -> tuple[DPModule, DPOptimizer, Any]:
    """Make a training triple differentially private (DP-SGD, Abadi et al. 2016).

    Parameters
    ----------
    module, optimizer, data_loader
        The usual PyTorch objects.  The optimizer must update the module's parameters; the
        data loader must have a map-style ``dataset`` and a ``batch_size`` (its expected
        batch size: ``sample_rate = batch_size / len(dataset)``), and draw from every record
        (``shuffle=True`` or ``False``; any other sampler is a ``ConfigError``, since that
        rate would not be the rate of its batches).
    max_grad_norm : float
        Per-sample clipping bound ``C``.
    noise_multiplier : float, optional
        Noise std / ``C``, ``> 0`` (``0`` would release unnoised gradients: ``ConfigError``).
        Either this or ``target_epsilon`` + ``epochs``.
    target_epsilon : float, optional
        With ``epochs`` and no ``noise_multiplier``: calibrate the noise multiplier so that
        ``epochs`` epochs cost at most ``(target_epsilon, target_delta)``.  In every case a
        hard budget: a step that would exceed it raises :class:`~veil.errors.BudgetError`.
        Given together with ``noise_multiplier`` it is a cap on that fixed noise level, and
        :class:`~veil.errors.ConfigError` is raised here if the cap cannot pay for one step.
    target_delta : float
        Delta for calibration, the budget and :meth:`DPOptimizer.get_epsilon`.
    epochs : int, optional
        Planned epochs (for calibration).
    poisson_sampling : bool
        Replace the loader by a Poisson sampler (what the accountant assumes).  ``False``
        keeps the user's loader (shuffled fixed batches): the epsilon is then computed with
        the Poisson add/remove analysis all the same, the usual approximation but not a
        guarantee (fixed batches need replace-one neighbours, sensitivity ``2 C``); a
        :class:`FixedBatchAccountingWarning` says so.
    secure_rng : bool
        Cryptographically secure noise and sampling; ``False`` (with a required ``seed``;
        ``ConfigError`` without one) for reproducible tests only.
    clipping : {"ghost", "flat"}
        Ghost clipping for ``nn.Linear`` and ``nn.Conv1d`` / ``nn.Conv2d`` (faster) or
        materialised per-sample gradients.
    loss_reduction : {"mean", "sum"}
        Reduction of the training loss over the batch.
    max_physical_batch_size : int, optional
        Virtual steps: cut logical batches into physical chunks of at most this size.
    accountant : RDPAccountant, optional
        Continue an existing accountant (e.g. restored from JSON).

    Returns
    -------
    (DPModule, DPOptimizer, loader)

    Raises
    ------
    ConfigError
        Unsupported layers (BatchNorm: use :func:`fix_module`), bad parameters.

    Warns
    -----
    FixedBatchAccountingWarning
        ``poisson_sampling=False``: the reported epsilon is an approximation.

    References
    ----------
    M. Abadi, A. Chu, I. Goodfellow, H. B. McMahan, I. Mironov, K. Talwar, L. Zhang, "Deep
    learning with differential privacy", ACM CCS, 2016.
    I. Mironov, K. Talwar, L. Zhang, "Renyi differential privacy of the sampled Gaussian
    mechanism", arXiv:1908.10530, 2019.

    Examples
    --------
    A hard budget: training stops with :class:`~veil.errors.BudgetError` *before* the step
    that would exceed ``target_epsilon``.

    >>> from torch.utils.data import TensorDataset
    >>> data = TensorDataset(torch.randn(40, 3), torch.randint(0, 2, (40,)))
    >>> model = nn.Linear(3, 2)
    >>> model, opt, loader = make_private(
    ...     model, torch.optim.SGD(model.parameters(), lr=0.1), DataLoader(data, batch_size=10),
    ...     max_grad_norm=1.0, noise_multiplier=2.0, target_epsilon=2.0,
    ... )
    >>> loader  # Poisson sampling at q = 10 / 40
    PoissonLoader(n=40, sample_rate=0.25, steps=4)
    >>> for epoch in range(3):
    ...     for x, y in loader:
    ...         opt.zero_grad()
    ...         nn.functional.cross_entropy(model(x), y).backward()
    ...         opt.step()
    Traceback (most recent call last):
    ...
    veil.errors.BudgetError: privacy budget exhausted: ... epsilon to 2.076 > 2 ...
    >>> opt, round(opt.get_epsilon(), 3)  # epsilon at target_delta
    (DPOptimizer(SGD, noise_multiplier=2, max_grad_norm=1, steps=7), 1.964)
    """
    if not isinstance(module, nn.Module):
        raise ConfigError(f"module must be a torch.nn.Module, got {type(module).__name__}")
    if not isinstance(data_loader, DataLoader):
        raise ConfigError("data_loader must be a torch.utils.data.DataLoader")
    max_grad_norm = _check_positive("max_grad_norm", max_grad_norm)
    if target_epsilon is not None:
        target_epsilon = _check_positive("target_epsilon", target_epsilon)
    if not 0.0 < float(target_delta) < 1.0:
        raise ConfigError(f"target_delta must lie in (0, 1), got {target_delta!r}")
    dataset, n, sample_rate = loader_rate(data_loader)
    steps_per_epoch = max(1, round(1.0 / sample_rate)) if poisson_sampling else len(data_loader)
    if noise_multiplier is None:
        if target_epsilon is None or epochs is None:
            raise ConfigError("pass noise_multiplier, or target_epsilon together with epochs")
        if int(epochs) != epochs or epochs < 1:
            raise ConfigError(f"epochs must be a positive integer, got {epochs!r}")
        noise_multiplier = noise_multiplier_for(
            target_epsilon, target_delta, sample_rate, int(epochs) * steps_per_epoch
        )
    noise_multiplier = _check_noise_multiplier(noise_multiplier)
    if target_epsilon is not None:
        # noise_multiplier given together with target_epsilon: the budget is a cap on a
        # fixed noise level.  Refuse now if the cap cannot pay for even one step (otherwise
        # the first opt.step() would raise BudgetError after all the setup).
        base = accountant if accountant is not None else RDPAccountant()
        probe = RDPAccountant.from_state({**base.state_dict(), "history": []})
        one = probe.epsilon_after(
            target_delta, noise_multiplier=noise_multiplier, sample_rate=sample_rate
        )
        if one > target_epsilon:
            raise ConfigError(
                f"target_epsilon={target_epsilon:g} cannot pay for a single step: one step at "
                f"noise_multiplier={noise_multiplier:g}, sample rate {sample_rate:.4g} costs "
                f"epsilon {one:.4g} (delta={float(target_delta):g}). Give noise_multiplier or "
                "target_epsilon + epochs (calibrated noise), or raise the cap"
            )

    noise = NoiseSource(secure=secure_rng, seed=seed)
    signal = StepSignal()
    grads = PerSampleGrads(module, clipping=clipping)
    if poisson_sampling:
        loader: Any = PoissonLoader(
            dataset,
            sample_rate,
            steps=steps_per_epoch,
            collate_fn=data_loader.collate_fn,
            max_physical_batch_size=max_physical_batch_size,
            noise=noise,
            signal=signal,
        )
    else:
        if max_physical_batch_size is not None:
            raise ConfigError("max_physical_batch_size needs poisson_sampling=True")
        warn_fixed_batches(sample_rate, stacklevel=2)
        loader = _CheckedLoader(data_loader, signal, sample_rate)
    try:
        dp_opt = DPOptimizer(
            optimizer,
            grads,
            noise_multiplier=noise_multiplier,
            max_grad_norm=max_grad_norm,
            expected_batch_size=sample_rate * n if loss_reduction == "mean" else None,
            sample_rate=sample_rate,
            loss_reduction=loss_reduction,
            target_epsilon=target_epsilon,
            target_delta=target_delta,
            noise=noise,
            signal=signal,
            accountant=accountant,
        )
    except Exception:
        grads.remove()
        raise
    if poisson_sampling:  # steps not fed by this loader are warned about (once)
        dp_opt._poisson_loader = loader
        dp_opt._loader_seen = loader.batches_yielded
    return DPModule(module, grads), dp_opt, loader


class PrivacyEngine:
    """Opacus-style facade: ``engine.make_private(...)`` then ``engine.get_epsilon(delta)``.

    Examples
    --------
    >>> engine = PrivacyEngine()
    >>> engine.accountant.history
    []
    """

    def __init__(self, accountant: RDPAccountant | None = None) -> None:
        self.accountant = accountant if accountant is not None else RDPAccountant()

    def make_private(self, *args: Any, **kwargs: Any) -> tuple[DPModule, DPOptimizer, Any]:
        """:func:`make_private` sharing this engine's accountant."""
        kwargs.setdefault("accountant", self.accountant)
        return make_private(*args, **kwargs)

    def get_epsilon(self, delta: float) -> float:
        """Epsilon spent by every optimizer made by this engine."""
        return self.accountant.get_epsilon(delta)
