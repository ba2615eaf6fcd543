"""DP-SGD for PyTorch (optional ``torch`` extra: ``pip install ".[torch]"`` in a Veil checkout).

* :func:`make_private` -- Opacus-style: ``(module, optimizer, data_loader)`` in, private
  triple out (per-sample clipping with ghost clipping for ``nn.Linear`` and ``nn.Conv1d`` /
  ``nn.Conv2d`` and ``torch.func`` for every other layer, Poisson sampling, secure Gaussian noise, RDP accounting, virtual
  steps, a hard epsilon budget).
* :func:`dp_optimizer` -- TF-Privacy-style constructor (``l2_norm_clip``,
  ``noise_multiplier``, ``num_microbatches``, ``learning_rate``).
* :func:`fix_module` / :func:`validate_module` -- BatchNorm -> GroupNorm and layer checks.
* :class:`RDPAccountant` -- the accountant (also :mod:`veil.dp._rdp`, torch-free), and the
  tighter :class:`PLDAccountant` / :func:`pld_epsilon` for reporting (:mod:`veil.dp._pld`).

References: Abadi et al. (2016) "Deep Learning with Differential Privacy"; Mironov, Talwar &
Zhang (2019) for the accountant; Li et al. (2021) / Bu et al. (2022) for ghost clipping.

Example
-------
>>> import torch
>>> from torch import nn
>>> from veil.ml.dpsgd import dp_optimizer
>>> model = nn.Linear(4, 2)
>>> opt = dp_optimizer(model, l2_norm_clip=1.0, noise_multiplier=1.1, learning_rate=0.1,
...                    sample_rate=0.01)
>>> type(opt).__name__
'DPOptimizer'
"""

from __future__ import annotations

try:
    import torch  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without torch
    raise ImportError(
        "veil.ml.dpsgd needs PyTorch, an optional dependency: pip install torch "
        "(or pip install '.[torch]' in the Veil checkout)"
    ) from exc

from veil.dp._pld import PLDAccountant, pld_epsilon
from veil.dp._rdp import RDPAccountant, compute_rdp, noise_multiplier_for, rdp_to_epsilon
from veil.errors import BudgetError

from ._engine import DPModule, PrivacyEngine, make_private
from ._grad_sample import PerSampleGrads
from ._loader import PoissonLoader
from ._noise import NoiseSource
from ._optimizer import DPOptimizer, FixedBatchAccountingWarning, dp_optimizer
from ._validate import fix_module, validate_module

__all__ = [
    "make_private",
    "PrivacyEngine",
    "DPModule",
    "DPOptimizer",
    "dp_optimizer",
    "FixedBatchAccountingWarning",
    "PerSampleGrads",
    "PoissonLoader",
    "NoiseSource",
    "fix_module",
    "validate_module",
    "RDPAccountant",
    "PLDAccountant",
    "pld_epsilon",
    "compute_rdp",
    "rdp_to_epsilon",
    "noise_multiplier_for",
    "BudgetError",
]
