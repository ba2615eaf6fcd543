"""The DP-SGD optimizer: clip per-sample gradients, add Gaussian noise, account, step.

Algorithm 1 of Abadi et al. (2016), "Deep Learning with Differential Privacy": for each
(logical) batch, every unit's gradient (a sample, or a microbatch as in TF-Privacy) is
clipped to L2 norm ``max_grad_norm = C``; the clipped gradients are summed, Gaussian noise of
standard deviation ``noise_multiplier * C`` is added to the sum, and the result is divided
by the *expected* number of units (so that the noise scale does not depend on the realised
Poisson batch size).  The wrapped optimizer (SGD, Adam, ...) then takes its usual step, and
the RDP accountant records one step of the sampled Gaussian mechanism.

Example
-------
>>> import torch
>>> from torch import nn
>>> from veil.ml.dpsgd import dp_optimizer
>>> model = nn.Linear(4, 2)
>>> opt = dp_optimizer(model, l2_norm_clip=1.0, noise_multiplier=1.1, num_microbatches=4,
...                    learning_rate=0.1, sample_rate=0.01)
>>> loss = nn.functional.cross_entropy(model(torch.randn(8, 4)), torch.tensor([0, 1] * 4))
>>> loss.backward(); opt.step(); opt.zero_grad()
>>> opt.get_epsilon(1e-5) > 0
True
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import torch
from torch import nn
from torch.utils.data import DataLoader

from veil.dp._rdp import RDPAccountant
from veil.errors import ConfigError, PrivacyLeakWarning

from ._grad_sample import PerSampleGrads
from ._loader import PoissonLoader, StepSignal
from ._noise import NoiseSource
from ._validate import _check_noise_multiplier, _check_positive, _check_sample_rate

__all__ = ["DPOptimizer", "dp_optimizer", "FixedBatchAccountingWarning"]


class FixedBatchAccountingWarning(PrivacyLeakWarning):
    """Fixed-size (shuffled) batches, epsilon reported with the Poisson-sampling analysis.

    The RDP analysis of the sampled Gaussian mechanism (Mironov, Talwar & Zhang 2019) assumes
    Poisson sampling and add/remove neighbours, where one record changes the clipped sum by at
    most ``C``.  With fixed-size batches the honest neighbouring relation is replace-one,
    under which one record changes the sum by up to ``2 C``, and shuffling is not Poisson
    subsampling; the reported epsilon is the customary approximation (TF-Privacy's
    ``compute_dp_sgd_privacy``, Opacus with ``poisson_sampling=False``), not a proven bound.
    """


def warn_fixed_batches(sample_rate: float, stacklevel: int) -> None:
    """Issue :class:`FixedBatchAccountingWarning` (the reported epsilon is not a guarantee)."""
    warnings.warn(
        f"fixed-size batches: the reported epsilon (and any target_epsilon budget) uses the "
        f"Poisson-sampling add/remove analysis at sample_rate={sample_rate:.4g}, the usual "
        "approximation for shuffled batches, NOT a proven bound (for fixed-size batches the "
        "honest neighbouring relation is replace-one, sensitivity 2*C).  For a guarantee use "
        "Poisson sampling: make_private(..., poisson_sampling=True) or dp_optimizer(..., "
        "data_loader=your_loader); see docs/dpsgd.md, 'What the epsilon covers'",
        FixedBatchAccountingWarning,
        stacklevel=stacklevel + 1,
    )


class DPOptimizer(torch.optim.Optimizer):
    """Wrap a torch optimizer so that each step is a DP-SGD step.

    Parameters
    ----------
    optimizer : torch.optim.Optimizer
        The optimizer to wrap (its parameters must be the module's trainable parameters).
    grads : PerSampleGrads
        Per-sample gradient capture installed on the module.
    noise_multiplier : float
        Noise standard deviation divided by ``max_grad_norm``; must be ``> 0``.
    max_grad_norm : float
        Clipping bound ``C`` on each unit's gradient.
    expected_batch_size : float, optional
        Divisor of the noisy sum for ``loss_reduction="mean"``; ``None`` uses the realised
        number of units (fixed-size batches, TF-Privacy style).
    sample_rate : float, optional
        Poisson sampling rate for accounting; ``None`` disables accounting.
    loss_reduction : {"mean", "sum"}
        How the loss reduces over the batch (``"mean"`` rescales captured gradients by the
        batch size).
    num_microbatches : int, optional
        Clip per microbatch instead of per sample (TF-Privacy semantics).
    target_epsilon, target_delta : float, optional
        A hard budget: :meth:`step` raises :class:`~veil.errors.BudgetError` *before* a
        step that would exceed ``target_epsilon`` at ``target_delta``.
    noise : NoiseSource, optional
        Randomness (secure by default).
    data_loader : PoissonLoader, optional
        The loader whose batches this optimizer's steps must be fed (see
        :func:`dp_optimizer`): every logical step must consume exactly its next batch (each
        physical chunk), otherwise :meth:`step` raises :class:`~veil.errors.ConfigError`.

    Examples
    --------
    Built by :func:`make_private` or :func:`dp_optimizer`:

    >>> model = nn.Linear(3, 2)
    >>> opt = dp_optimizer(model, l2_norm_clip=1.0, noise_multiplier=1.1, sample_rate=0.1)
    >>> nn.functional.mse_loss(model(torch.randn(8, 3)), torch.zeros(8, 2)).backward()
    >>> opt.step()  # clip each sample's gradient, add noise, account, update
    >>> opt, round(opt.get_epsilon(1e-5), 3)
    (DPOptimizer(SGD, noise_multiplier=1.1, max_grad_norm=1, steps=1), 1.771)
    """

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        grads: PerSampleGrads,
        *,
        noise_multiplier: float,
        max_grad_norm: float,
        expected_batch_size: float | None = None,
        sample_rate: float | None = None,
        loss_reduction: str = "mean",
        num_microbatches: int | None = None,
        target_epsilon: float | None = None,
        target_delta: float = 1e-5,
        noise: NoiseSource | None = None,
        signal: StepSignal | None = None,
        accountant: RDPAccountant | None = None,
        data_loader: PoissonLoader | None = None,
    ) -> None:
        if not isinstance(optimizer, torch.optim.Optimizer):
            raise ConfigError(f"expected a torch optimizer, got {type(optimizer).__name__}")
        if loss_reduction not in ("mean", "sum"):
            raise ConfigError(f"loss_reduction must be 'mean' or 'sum', got {loss_reduction!r}")
        self.original_optimizer = optimizer
        self.grads = grads
        self.noise_multiplier = _check_noise_multiplier(noise_multiplier)
        self.max_grad_norm = _check_positive("max_grad_norm", max_grad_norm)
        self.expected_batch_size = (
            None
            if expected_batch_size is None
            else _check_positive("expected_batch_size", expected_batch_size)
        )
        self.sample_rate = _check_sample_rate(sample_rate)
        self.loss_reduction = loss_reduction
        if num_microbatches is not None and (
            int(num_microbatches) != num_microbatches or num_microbatches < 1
        ):
            raise ConfigError("num_microbatches must be a positive integer")
        self.num_microbatches = None if num_microbatches is None else int(num_microbatches)
        self.target_epsilon = (
            None if target_epsilon is None else _check_positive("target_epsilon", target_epsilon)
        )
        if not 0.0 < float(target_delta) < 1.0:
            raise ConfigError(f"target_delta must lie in (0, 1), got {target_delta!r}")
        self.target_delta = float(target_delta)
        self.noise = noise or NoiseSource()
        self.signal = signal or StepSignal()
        self.accountant = accountant if accountant is not None else RDPAccountant()
        owned = {id(p) for p in grads.params}
        opt_params = [p for g in optimizer.param_groups for p in g["params"] if p.requires_grad]
        missing = [p for p in opt_params if id(p) not in owned]
        if missing:
            raise ConfigError("the optimizer updates parameters that are not in the private module")
        self._acc: dict[nn.Parameter, torch.Tensor] = {}
        self._units = 0
        self._our_grads: dict[int, tuple[torch.Tensor, int]] = {}
        self.last_norms: torch.Tensor | None = None
        self.steps = 0
        if data_loader is not None and not isinstance(data_loader, PoissonLoader):
            raise ConfigError("data_loader must be a veil PoissonLoader")
        self.data_loader = data_loader
        self._loader_seen = 0 if data_loader is None else data_loader.batches_yielded
        self._next_chunk: tuple[int, int] | None = None  # expected (logical batch, chunk)
        self._released: int | None = None  # logical batch of the latest noisy step
        # make_private's Poisson loader: a step it did not feed is warned about (once), where
        # a ``data_loader=`` optimizer refuses it
        self._poisson_loader: PoissonLoader | None = None
        self._unfed_warned = False

    # torch.optim.Optimizer interface, delegated --------------------------------------------
    @property
    def param_groups(self) -> list[dict[str, Any]]:  # type: ignore[override]
        return self.original_optimizer.param_groups

    @param_groups.setter
    def param_groups(self, value: list[dict[str, Any]]) -> None:
        self.original_optimizer.param_groups = value

    @property
    def state(self) -> Any:  # type: ignore[override]
        return self.original_optimizer.state

    @state.setter
    def state(self, value: Any) -> None:
        self.original_optimizer.state = value

    @property
    def defaults(self) -> dict[str, Any]:  # type: ignore[override]
        return self.original_optimizer.defaults

    @defaults.setter
    def defaults(self, value: dict[str, Any]) -> None:
        self.original_optimizer.defaults = value

    def state_dict(self) -> dict[str, Any]:
        return self.original_optimizer.state_dict()

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.original_optimizer.load_state_dict(state_dict)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        raise ConfigError("adding parameter groups to a DP optimizer is not supported")

    def __repr__(self) -> str:
        return (
            f"DPOptimizer({type(self.original_optimizer).__name__}, noise_multiplier="
            f"{self.noise_multiplier:.4g}, max_grad_norm={self.max_grad_norm:.4g}, "
            f"steps={self.steps})"
        )

    # -------------------------------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear gradients and captured per-sample data (not the virtual-step accumulator)."""
        self.grads.clear()
        for p in self.grads.params:
            p.grad = None
        self._our_grads.clear()

    def _check_foreign_grads(self) -> None:
        # a parameter frozen when this optimizer was built has no per-sample capture; once
        # unfrozen, its ordinary batch gradient would be stepped unclipped and unnoised
        owned = {id(p) for p in self.grads.params}
        for group in self.original_optimizer.param_groups:
            if any(id(p) not in owned and p.grad is not None for p in group["params"]):
                raise ConfigError(
                    "a parameter of the optimizer has a gradient but no per-sample capture "
                    "(frozen when the DP optimizer was built, unfrozen since): build a new "
                    "private model and optimizer.  No update was made"
                )
        for p in self.grads.params:
            if p.grad is None:
                continue
            mine = self._our_grads.get(id(p))
            if mine is None or mine[0] is not p.grad or mine[1] != p.grad._version:
                raise ConfigError(
                    "a parameter received a gradient that was not computed per sample (it was "
                    "used outside its module's forward); DP-SGD cannot bound its sensitivity"
                )

    def _scale(self, batch_size: int) -> float:
        return float(batch_size) if self.loss_reduction == "mean" else 1.0

    def _check_fed_by_loader(self, bsz: int) -> None:
        """Refuse a step whose batch is not the next one of :attr:`data_loader`.

        The epsilon of a ``data_loader=`` optimizer is the Poisson-sampling bound, with no
        :class:`FixedBatchAccountingWarning`; it holds only if the gradients come from the
        loader's batches, one step per batch (empty batches included: skipping them would
        make whether a step is taken depend on the data).

        The optimizer of :func:`~veil.ml.dpsgd.make_private` (``poisson_sampling=True``) is
        accounted the same way for the Poisson loader it returned: training on the caller's
        own ``DataLoader`` (fixed, shuffled batches) or on hand-made batches gets the
        :class:`FixedBatchAccountingWarning` of ``poisson_sampling=False``, once.
        """
        loader = self.data_loader if self.data_loader is not None else self._poisson_loader
        if loader is None:
            return
        if self.data_loader is not None and loader.sample_rate != self.sample_rate:
            raise ConfigError(
                f"opt.data_loader now samples at {loader.sample_rate!r} but this optimizer "
                f"accounts {self.sample_rate!r}: build a new optimizer for another sample rate; "
                "no update was made"
            )
        fed = loader.batches_yielded - self._loader_seen
        self._loader_seen = loader.batches_yielded
        if fed == 1 and bsz == loader.last_batch_size:
            return
        if self.data_loader is not None:
            raise ConfigError(
                "this optimizer accounts Poisson sampling because it was built with "
                f"data_loader=...: every step must be fed the next batch of opt.data_loader, "
                f"but {fed} batch(es) were drawn from it since the last step and the gradients "
                f"are of {bsz} record(s) (its latest batch had {loader.last_batch_size}).  "
                "Iterate `for batch in opt.data_loader:` and call opt.step() once per batch, "
                "empty batches included; no update was made"
            )
        if not self._unfed_warned:
            self._unfed_warned = True
            warnings.warn(
                "opt.step() was not fed the next batch of the Poisson loader that make_private "
                f"returned ({fed} batch(es) drawn from it since the last step, gradients of "
                f"{bsz} record(s)): the epsilon is the Poisson-sampling bound at "
                f"sample_rate={loader.sample_rate:.4g} only for that loader's batches, one "
                "step each; for other batches (your own DataLoader) it is NOT a proven bound. "
                "Iterate the returned loader: `model, opt, loader = make_private(...)`",
                FixedBatchAccountingWarning,
                stacklevel=4,
            )

    def _check_chunk_order(self) -> None:
        """Refuse to add a chunk of a :class:`PoissonLoader` to a sum it does not belong to.

        With virtual steps, one noisy sum adds up the chunks of one logical batch.  A loop that
        stops in the middle of a logical batch (``break``), two iterators drawn in turn, or a
        chunk stepped twice would otherwise put records of two Poisson batches (or one chunk
        twice) into one sum: one record could then move it by ``2 C``, while the accountant
        assumes ``C``.  The partial sum is discarded (nothing of it was released).
        """
        ident = self.signal.batch
        if ident is None:
            return
        logical, k = ident
        if logical == self._released:
            raise ConfigError(
                "this Poisson batch was already used for a noisy step; a second step on it is "
                "not the independently sampled batch the accountant charges: take the next "
                "batch of the loader.  No update was made"
            )
        expected = self._next_chunk
        if (expected is None and k != 0) or (expected is not None and ident != expected):
            self._acc.clear()
            self._units = 0
            self._next_chunk = None
            raise ConfigError(
                "the chunks of a logical batch (virtual steps, max_physical_batch_size) must be "
                "stepped once each, in order, up to its last chunk before the next batch: "
                f"expected {'a first chunk' if expected is None else f'chunk {expected[1]}'}, "
                f"got chunk {k} of {'the same' if expected and expected[0] == logical else 'another'} "
                "logical batch (a loop left in the middle of one, or two iterators over the "
                "loader).  The unfinished batch's clipped gradients were discarded and no update "
                "was made; start the next logical batch"
            )
        self._next_chunk = None if self.signal.last_chunk else (logical, k + 1)

    def _accumulate(self) -> None:
        self._check_foreign_grads()
        bsz = self.grads.batch_size()
        self._check_fed_by_loader(bsz)
        self._check_chunk_order()
        scale = self._scale(bsz)
        n_units = self.num_microbatches
        if n_units is not None:
            scale = scale / (bsz / n_units) if bsz else scale
        if bsz == 0:
            n_units = 0
        sums, units, norms = self.grads.clipped_sum(self.max_grad_norm, scale, n_units)
        self.last_norms = norms
        for p, v in sums.items():
            self._acc[p] = self._acc[p] + v if p in self._acc else v
        self._units += units
        self.grads.clear()

    def step(self, closure: Callable[[], Any] | None = None) -> Any:  # type: ignore[override]
        """Clip, accumulate and -- at the end of a logical batch -- noise, account and step."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        if self.target_epsilon is not None and self.sample_rate is not None:
            # refuse before anything changes: the model stays within the budget
            self.accountant.check(
                self.target_epsilon,
                self.target_delta,
                noise_multiplier=self.noise_multiplier,
                sample_rate=self.sample_rate,
            )
        self._accumulate()
        if not self.signal.last_chunk:
            return loss
        std = self.noise_multiplier * self.max_grad_norm
        if self.loss_reduction == "sum":
            denom = 1.0
        elif self.expected_batch_size is not None:
            denom = self.expected_batch_size
        else:
            denom = float(max(self._units, 1))
        params = self.grads.params
        sizes = [p.numel() for p in params]
        # one draw for all parameters (float64 Box-Muller on secure bits), then split
        flat = self.noise.normal((sum(sizes),), std, dtype=torch.float64)
        for p, z in zip(params, flat.split(sizes)):
            summed = self._acc.get(p)
            noise = z.reshape(p.shape).to(dtype=p.dtype, device=p.device)
            noisy = noise if summed is None else summed.to(p.dtype) + noise
            p.grad = noisy / denom
            self._our_grads[id(p)] = (p.grad, p.grad._version)
        self._acc.clear()
        self._units = 0
        if self.signal.batch is not None:
            self._released = self.signal.batch[0]
        # account before the wrapped step: the noisy gradients are released (in p.grad, and
        # partly in the parameters) even if that step raises
        if self.sample_rate is not None:
            self.accountant.step(
                noise_multiplier=self.noise_multiplier, sample_rate=self.sample_rate
            )
        self.steps += 1
        self.original_optimizer.step()
        for p in self.grads.params:
            self._our_grads[id(p)] = (p.grad, p.grad._version)  # type: ignore[union-attr]
        return loss

    def get_epsilon(self, delta: float | None = None) -> float:
        """Epsilon spent so far at ``delta`` (``target_delta`` by default)."""
        if self.sample_rate is None:
            raise ConfigError(
                "epsilon is unknown: this optimizer was built without sample_rate, so no step "
                "was accounted; pass sample_rate=batch_size / n (dataset size) when building "
                "it, or account offline with veil.dp.RDPAccountant"
            )
        return self.accountant.get_epsilon(self.target_delta if delta is None else delta)


def dp_optimizer(
    module: nn.Module,
    *,
    l2_norm_clip: float,
    noise_multiplier: float,
    num_microbatches: int | None = None,
    learning_rate: float = 0.15,
    momentum: float = 0.0,
    sample_rate: float | None = None,
    data_loader: DataLoader | PoissonLoader | None = None,
    clipping: str = "ghost",
    secure_rng: bool = True,
    seed: int | None = None,
) -> DPOptimizer:
    """TF-Privacy-style DP-SGD optimizer (``DPKerasSGDOptimizer`` argument names).

    Installs per-sample gradient capture on ``module`` (in place) and returns a
    :class:`DPOptimizer` around ``torch.optim.SGD``.  As in TF-Privacy, each step's batch is
    split into ``num_microbatches`` microbatches (default: one per example), each
    microbatch's mean gradient is clipped to ``l2_norm_clip``, Gaussian noise of standard
    deviation ``noise_multiplier * l2_norm_clip`` is added to their sum, and the result is
    divided by the number of microbatches.  The loss must be the batch *mean* (TF's vector
    loss, averaged).

    Two ways to account the privacy spent:

    * ``data_loader=`` (a ``DataLoader`` or a :class:`PoissonLoader`): the optimizer samples
      the batches itself -- ``opt.data_loader`` is a :class:`PoissonLoader` over the loader's
      dataset at ``q = batch_size / n`` (or the given PoissonLoader, at its rate) -- and
      ``sample_rate`` is taken from it.  This is the setting of the RDP analysis (Abadi et
      al. 2016; Mironov, Talwar & Zhang 2019), so :meth:`DPOptimizer.get_epsilon` is a bound
      and no warning is issued.  The claim is checked, not taken on trust: ``opt.step()``
      raises :class:`~veil.errors.ConfigError` unless each step was fed exactly the next
      batch of ``opt.data_loader``.  The noisy sum is divided by the *expected* batch size
      ``q n`` (the realised Poisson batch size depends on the data), one unit per example.
    * ``sample_rate=batch_size / n`` with your own (shuffled, fixed-size) batches: accounted
      with the same Poisson formula, TF-Privacy's ``compute_dp_sgd_privacy`` approximation,
      which is not a proven bound; a :class:`FixedBatchAccountingWarning` says so.

    Parameters
    ----------
    module : nn.Module
        The model (TF's ``var_list`` is its parameters).
    l2_norm_clip, noise_multiplier, num_microbatches, learning_rate
        As in TF-Privacy.  ``num_microbatches`` is refused with ``data_loader``: Poisson
        batches vary in size, and a microbatch holding several records is not what the
        add/remove-one-record analysis bounds.
    momentum : float
        SGD momentum.
    sample_rate : float, optional
        ``batch_size / n`` for the RDP accountant with the caller's batches (TF-Privacy's
        ``compute_dp_sgd_privacy`` makes the same Poisson-sampling approximation for
        shuffled batches).  With ``data_loader`` it is derived (giving a different value is a
        :class:`~veil.errors.ConfigError`).  Without either, the optimizer still clips and adds
        noise (the TF-Privacy call with only ``l2_norm_clip``, ``noise_multiplier``,
        ``num_microbatches`` and ``learning_rate`` keeps working), but no step is accounted:
        a :class:`~veil.errors.PrivacyLeakWarning` is issued here and
        :meth:`DPOptimizer.get_epsilon` raises :class:`~veil.errors.ConfigError`.
    data_loader : DataLoader or PoissonLoader, optional
        Train on Poisson-sampled batches of this data: iterate ``opt.data_loader``.  A
        ``DataLoader`` only lends its dataset, ``batch_size`` (the expected batch size) and
        ``collate_fn``; sampling uses this optimizer's randomness (``secure_rng``, ``seed``).
    clipping : {"ghost", "flat"}
        Per-sample gradient computation (see :func:`make_private`).
    secure_rng, seed
        Cryptographically secure noise (and sampling); ``secure_rng=False`` with a ``seed``
        for reproducible tests only.

    Warns
    -----
    PrivacyLeakWarning
        When neither ``sample_rate`` nor ``data_loader`` is given (epsilon cannot be reported).
    FixedBatchAccountingWarning
        When ``sample_rate`` is given without ``data_loader``: the batches are the caller's
        fixed-size batches, so the reported epsilon is the Poisson approximation, not a
        guarantee (a subclass of ``PrivacyLeakWarning``; filter it by class once you have read
        why).

    References
    ----------
    Abadi et al. (2016); TensorFlow Privacy, ``DPKerasSGDOptimizer``.

    Examples
    --------
    >>> from torch import nn
    >>> opt = dp_optimizer(nn.Linear(3, 2), l2_norm_clip=1.0, noise_multiplier=1.1,
    ...                    num_microbatches=1, learning_rate=0.1, sample_rate=0.01)
    >>> opt.max_grad_norm
    1.0

    Poisson-sampled batches, accounted without approximation:

    >>> from torch.utils.data import DataLoader, TensorDataset
    >>> data = TensorDataset(torch.randn(100, 3), torch.randint(0, 2, (100,)))
    >>> model = nn.Linear(3, 2)
    >>> opt = dp_optimizer(model, l2_norm_clip=1.0, noise_multiplier=1.1, learning_rate=0.1,
    ...                    data_loader=DataLoader(data, batch_size=10))
    >>> for x, y in opt.data_loader:
    ...     opt.zero_grad()
    ...     nn.functional.cross_entropy(model(x), y).backward()
    ...     opt.step()
    >>> opt.sample_rate, opt.steps
    (0.1, 10)
    """
    lr = _check_positive("learning_rate", learning_rate)
    _check_noise_multiplier(noise_multiplier)
    sample_rate = _check_sample_rate(sample_rate)
    noise = NoiseSource(secure=secure_rng, seed=seed)
    loader: PoissonLoader | None = None
    if data_loader is not None:
        if isinstance(data_loader, PoissonLoader):
            loader = data_loader
        elif isinstance(data_loader, DataLoader):
            loader = PoissonLoader.from_data_loader(data_loader, noise=noise)
        else:
            raise ConfigError(
                "data_loader must be a torch DataLoader or a veil PoissonLoader, got "
                f"{type(data_loader).__name__}"
            )
        if sample_rate is not None and not math.isclose(
            sample_rate, loader.sample_rate, rel_tol=1e-12
        ):
            raise ConfigError(
                f"sample_rate={sample_rate!r} contradicts the data loader, which samples at "
                f"{loader.sample_rate:.6g} (batch_size / n); omit sample_rate"
            )
        if num_microbatches is not None:
            raise ConfigError(
                "num_microbatches cannot be combined with data_loader: Poisson batches vary in "
                "size, and clipping microbatches of several records does not bound one "
                "record's effect by l2_norm_clip under the add/remove analysis; leave it unset "
                "(one unit per example)"
            )
        sample_rate = loader.sample_rate
    elif sample_rate is None:
        warnings.warn(
            "dp_optimizer without sample_rate: steps are noised but not accounted, so epsilon "
            "cannot be reported (get_epsilon will raise). Pass data_loader=your_loader (Poisson "
            "sampling, a proven bound) or sample_rate=batch_size / n (n = dataset size) to "
            "track the privacy spent.",
            PrivacyLeakWarning,
            stacklevel=2,
        )
    else:
        warn_fixed_batches(sample_rate, stacklevel=2)
    grads = PerSampleGrads(module, clipping=clipping)
    inner = torch.optim.SGD(grads.params, lr=lr, momentum=float(momentum))
    try:
        return DPOptimizer(
            inner,
            grads,
            noise_multiplier=noise_multiplier,
            max_grad_norm=l2_norm_clip,
            expected_batch_size=None if loader is None else loader.expected_batch_size,
            sample_rate=sample_rate,
            loss_reduction="mean",
            num_microbatches=num_microbatches,
            noise=noise,
            signal=None if loader is None else loader.signal,
            data_loader=loader,
        )
    except Exception:
        grads.remove()
        raise
