"""Which modules DP-SGD can train, and :func:`fix_module` for the ones it cannot; checks of
the numeric parameters (``max_grad_norm``, ``noise_multiplier``, ``sample_rate``, ...).

BatchNorm normalises each sample with statistics of the *whole batch*, so one record changes
every other record's gradient and per-sample clipping no longer bounds its influence; its
running statistics are also a non-private aggregate.  GroupNorm / LayerNorm normalise each
sample on its own and are the standard replacement (Wu & He 2018; Opacus does the same).

Example
-------
>>> import torch.nn as nn
>>> from veil.ml.dpsgd import fix_module, validate_module
>>> model = fix_module(nn.Sequential(nn.Conv2d(1, 8, 3), nn.BatchNorm2d(8)))
>>> type(model[1]).__name__
'GroupNorm'
>>> validate_module(model)
"""

from __future__ import annotations

import copy
import math
from typing import Any

from torch import nn

from veil.errors import ConfigError

__all__ = ["validate_module", "fix_module"]

_FIX = "replace it by GroupNorm, e.g. `model = veil.ml.dpsgd.fix_module(model)`"


def validate_module(module: nn.Module) -> None:
    """Raise :class:`~veil.errors.ConfigError` when ``module`` cannot be trained with DP-SGD.

    Refused: BatchNorm (mixes samples), InstanceNorm tracking running statistics, RNN /
    LSTM / GRU with ``batch_first=False`` (the batch must be dimension 0 of every layer's
    input; :func:`fix_module` leaves it, since the caller's data layout must change too),
    modules that own trainable parameters *and* have sub-modules with trainable parameters (e.g.
    ``nn.MultiheadAttention``, whose ``out_proj`` weight is used without calling it), and
    parameters shared between modules.

    Examples
    --------
    >>> validate_module(nn.Sequential(nn.Linear(4, 8), nn.LayerNorm(8)))  # fine: no output
    >>> validate_module(nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8)))
    Traceback (most recent call last):
    ...
    veil.errors.ConfigError: 1 (BatchNorm1d) computes statistics over the whole batch, ...
    >>> tied = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 3))
    >>> tied[1].weight = tied[0].weight
    >>> validate_module(tied)
    Traceback (most recent call last):
    ...
    veil.errors.ConfigError: parameter 1.weight is shared with 0.weight; weight tying is ...
    """
    if not isinstance(module, nn.Module):
        raise ConfigError(f"expected a torch.nn.Module, got {type(module).__name__}")
    seen: dict[int, str] = {}
    for name, sub in module.named_modules():
        label = name or type(module).__name__
        if isinstance(sub, nn.modules.batchnorm._BatchNorm):
            raise ConfigError(
                f"{label} ({type(sub).__name__}) computes statistics over the whole batch, "
                f"which breaks per-sample privacy: {_FIX}"
            )
        if isinstance(sub, nn.modules.instancenorm._InstanceNorm) and sub.track_running_stats:
            raise ConfigError(
                f"{label} ({type(sub).__name__}) tracks running statistics, a non-private "
                "aggregate: construct it with track_running_stats=False"
            )
        if isinstance(sub, nn.RNNBase) and not sub.batch_first:
            raise ConfigError(
                f"{label} ({type(sub).__name__}) has batch_first=False: its input and output "
                "are (time, batch, features), and a time length equal to the batch size cannot "
                "be told apart from the batch, so per-sample clipping could silently clip per "
                "time step.  Construct it with batch_first=True and feed (batch, time, "
                "features), keeping the batch on dimension 0 in every layer"
            )
        own = [p for p in sub.parameters(recurse=False) if p.requires_grad]
        if own and any(p.requires_grad for child in sub.children() for p in child.parameters()):
            raise ConfigError(
                f"{label} ({type(sub).__name__}) owns trainable parameters and also has "
                "sub-modules with trainable parameters; per-sample gradients cannot be "
                "computed for it (wrap its own parameters in a separate leaf module)"
            )
        for pname, p in sub.named_parameters(recurse=False):
            if not p.requires_grad:
                continue
            where = f"{label}.{pname}"
            if id(p) in seen:
                raise ConfigError(
                    f"parameter {where} is shared with {seen[id(p)]}; weight tying is not "
                    "supported by DP-SGD in Veil"
                )
            seen[id(p)] = where
    if not seen:
        raise ConfigError("the module has no trainable parameters")


def _groups(channels: int) -> int:
    return math.gcd(32, channels)


def fix_module(module: nn.Module) -> nn.Module:
    """Return a copy of ``module`` with every BatchNorm replaced by an equivalent GroupNorm.

    ``BatchNorm{1,2,3}d(C)`` becomes ``GroupNorm(gcd(32, C), C, affine=bn.affine)``; the
    caller's module is not modified.

    References
    ----------
    Y. Wu, K. He, "Group normalization", ECCV, 2018.

    Examples
    --------
    >>> net = nn.Sequential(nn.Conv2d(1, 48, 3), nn.BatchNorm2d(48), nn.ReLU())
    >>> fixed = fix_module(net)
    >>> type(fixed[1]).__name__, fixed[1].num_groups, fixed[1].num_channels  # gcd(32, 48)
    ('GroupNorm', 16, 48)
    >>> type(net[1]).__name__  # the caller's module is unchanged
    'BatchNorm2d'
    >>> validate_module(fixed)
    """
    if not isinstance(module, nn.Module):
        raise ConfigError(f"expected a torch.nn.Module, got {type(module).__name__}")
    if isinstance(module, nn.modules.batchnorm._BatchNorm):
        c = module.num_features
        return nn.GroupNorm(_groups(c), c, eps=module.eps, affine=module.affine)
    fixed = copy.deepcopy(module)
    _replace(fixed)
    return fixed


def _replace(module: nn.Module) -> None:
    for name, child in module.named_children():
        if isinstance(child, nn.modules.batchnorm._BatchNorm):
            c = child.num_features
            setattr(module, name, nn.GroupNorm(_groups(c), c, eps=child.eps, affine=child.affine))
        else:
            _replace(child)


def _check_positive(name: str, value: Any) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{name} must be a number, got {value!r}") from None
    if not v > 0 or math.isinf(v):
        raise ConfigError(f"{name} must be a finite number > 0, got {value!r}")
    return v


def _check_noise_multiplier(value: Any) -> float:
    """``noise_multiplier`` must be ``> 0``: with ``0`` the update is the clipped gradient
    itself, which is not differentially private (the accountant would report inf)."""
    if isinstance(value, (int, float)) and value == 0:
        raise ConfigError(
            "noise_multiplier=0 adds no noise: the clipped gradients are released as they are "
            "and no epsilon holds; pass noise_multiplier > 0 (or use a non-private optimizer)"
        )
    return _check_positive("noise_multiplier", value)


def _check_sample_rate(value: Any) -> float | None:
    if value is None:
        return None
    v = _check_positive("sample_rate", value)
    if v > 1.0:
        raise ConfigError(f"sample_rate must lie in (0, 1] (batch_size / n), got {value!r}")
    return v
