"""Capturing autograd functions for ghost clipping of ``nn.Linear`` / ``nn.Conv{1,2}d``.

Each keeps the layer input ``x`` and, in backward, the output gradient ``g`` (the per-sample
gradient of a linear map is ``g_i^T x_i``; Goodfellow 2015, Li et al. 2021, Bu et al. 2022)
and returns no weight gradient, so ``param.grad`` never holds an unclipped batch gradient.

Example
-------
>>> import torch
>>> from veil.ml.dpsgd._capture import LinearCapture
>>> store = []
>>> w = torch.randn(2, 3, requires_grad=True)
>>> x = torch.randn(4, 3, requires_grad=True)
>>> LinearCapture.apply(x, w, None, store, lambda: None).sum().backward()
>>> len(store), w.grad is None
(1, True)
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["LinearCapture", "ConvCapture", "padding_row", "conv_ok", "conv_rows"]


class LinearCapture(torch.autograd.Function):
    """``F.linear`` that records ``(x, grad_output)`` and returns no weight gradient."""

    @staticmethod
    def forward(
        ctx: Any, x: torch.Tensor, weight: torch.Tensor, bias: Any, store: list, mark: Any
    ) -> Any:
        ctx.save_for_backward(x, weight)
        ctx.store, ctx.mark = store, mark
        return F.linear(x, weight, bias)

    @staticmethod
    def backward(ctx: Any, g: torch.Tensor) -> Any:
        x, weight = ctx.saved_tensors
        ctx.store.append((x, g))
        ctx.mark()
        gx = g @ weight if ctx.needs_input_grad[0] else None
        return gx, None, None, None, None


class ConvCapture(torch.autograd.Function):
    """``conv{1,2}d`` (groups=1, zero padding) that records ``(x, grad_output)`` only."""

    @staticmethod
    def forward(
        ctx: Any,
        x: torch.Tensor,
        weight: torch.Tensor,
        bias: Any,
        store: list,
        conf: tuple,
        mark: Any,
    ) -> Any:
        ctx.save_for_backward(x, weight)
        ctx.store, ctx.conf, ctx.mark = store, conf, mark
        stride, padding, dilation = conf
        fn = F.conv2d if weight.dim() == 4 else F.conv1d
        return fn(x, weight, bias, stride, padding, dilation)

    @staticmethod
    def backward(ctx: Any, g: torch.Tensor) -> Any:
        x, weight = ctx.saved_tensors
        ctx.store.append((x, g))
        ctx.mark()
        gx = None
        if ctx.needs_input_grad[0]:
            stride, padding, dilation = ctx.conf
            fn = torch.nn.grad.conv2d_input if weight.dim() == 4 else torch.nn.grad.conv1d_input
            gx = fn(x.shape, weight, g, stride, padding, dilation)
        return gx, None, None, None, None, None


def padding_row(sub: nn.Module) -> int | None:
    """Row of an Embedding / EmbeddingBag weight that never receives a gradient."""
    if isinstance(sub, (nn.Embedding, nn.EmbeddingBag)) and sub.padding_idx is not None:
        return int(sub.padding_idx) % sub.num_embeddings
    return None


def conv_ok(sub: nn.Module) -> bool:
    return (
        type(sub) in (nn.Conv1d, nn.Conv2d)
        and sub.groups == 1
        and sub.padding_mode == "zeros"
        and not isinstance(sub.padding, str)
    )


def conv_rows(sub: nn.Module, x: torch.Tensor, g: torch.Tensor) -> tuple:
    """Conv input / output gradient as (B, L, Cin*k) patches and (B, L, Cout) rows."""
    if x.dim() == 3:  # conv1d -> 2-D with a unit height
        x, g = x.unsqueeze(2), g.unsqueeze(2)
        k, d, p, s = (1, *sub.kernel_size), (1, *sub.dilation), (0, *sub.padding), (1, *sub.stride)
    else:
        k, d, p, s = sub.kernel_size, sub.dilation, sub.padding, sub.stride
    cols = F.unfold(x, k, dilation=d, padding=p, stride=s)  # (B, Cin*k, L)
    return cols.transpose(1, 2), g.flatten(2).transpose(1, 2)
