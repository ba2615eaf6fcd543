"""Functional, single-sample RNN / LSTM / GRU forward that ``torch.func.vmap`` can batch.

``aten::lstm`` and friends have no vmap batching rule, so per-sample gradients of
``nn.RNN`` / ``nn.LSTM`` / ``nn.GRU`` are computed through this re-implementation of the
recurrences documented for those modules (same parameter names, same gate order, multi-layer,
bidirectional, inter-layer dropout in training mode).  ``proj_size > 0`` is not supported.

Example
-------
>>> import torch
>>> from torch import nn
>>> from veil.ml.dpsgd._rnn import rnn_single
>>> lstm = nn.LSTM(3, 4)
>>> x = torch.randn(5, 3)
>>> out, (h, c) = rnn_single(lstm, dict(lstm.named_parameters()), x, None)
>>> bool(torch.allclose(out, lstm(x)[0], atol=1e-6))
True
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["rnn_single", "rnn_supported"]


def rnn_supported(module: nn.RNNBase) -> bool:
    """Whether :func:`rnn_single` can run ``module``."""
    return getattr(module, "proj_size", 0) == 0


def _cell(
    mode: str, gi: torch.Tensor, h: torch.Tensor, c: Any, w_hh: torch.Tensor, b_hh: Any
) -> tuple[torch.Tensor, Any]:
    gh = h @ w_hh.T
    if b_hh is not None:
        gh = gh + b_hh
    if mode == "LSTM":
        i, f, g, o = (gi + gh).chunk(4, -1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c
    if mode == "GRU":
        ir, iz, in_ = gi.chunk(3, -1)
        hr, hz, hn = gh.chunk(3, -1)
        r = torch.sigmoid(ir + hr)
        z = torch.sigmoid(iz + hz)
        n = torch.tanh(in_ + r * hn)
        return (1 - z) * n + z * h, None
    pre = gi + gh
    return (torch.tanh(pre) if mode == "RNN_TANH" else torch.relu(pre)), None


def rnn_single(
    module: nn.RNNBase, params: dict[str, torch.Tensor], x: torch.Tensor, hx: Any
) -> tuple[torch.Tensor, Any]:
    """Run ``module``'s recurrence on one unbatched sequence ``x`` of shape ``(T, input)``.

    ``hx`` is ``None``, ``h0`` of shape ``(layers*dirs, H)``, or ``(h0, c0)`` for LSTM.
    Returns ``(output (T, dirs*H), h_n)`` (``(h_n, c_n)`` for LSTM), like the module.
    """
    mode = module.mode
    dirs = 2 if module.bidirectional else 1
    hsize = module.hidden_size
    lstm = mode == "LSTM"
    if hx is None:
        h0 = x.new_zeros(module.num_layers * dirs, hsize)
        c0 = h0 if lstm else None
    elif lstm:
        h0, c0 = hx
    else:
        h0, c0 = hx, None
    layer_in = x
    h_n, c_n = [], []
    for layer in range(module.num_layers):
        outs = []
        for d in range(dirs):
            sfx = f"_l{layer}" + ("_reverse" if d == 1 else "")
            w_ih, w_hh = params["weight_ih" + sfx], params["weight_hh" + sfx]
            b_ih = params.get("bias_ih" + sfx) if module.bias else None
            b_hh = params.get("bias_hh" + sfx) if module.bias else None
            gi_all = layer_in @ w_ih.T
            if b_ih is not None:
                gi_all = gi_all + b_ih
            k = layer * dirs + d
            h = h0[k]
            c = c0[k] if lstm else None
            steps = range(x.shape[0] - 1, -1, -1) if d == 1 else range(x.shape[0])
            seq = [None] * x.shape[0]
            for t in steps:
                h, c = _cell(mode, gi_all[t], h, c, w_hh, b_hh)
                seq[t] = h
            outs.append(torch.stack(seq))  # type: ignore[arg-type]
            h_n.append(h)
            if lstm:
                c_n.append(c)
        layer_in = torch.cat(outs, -1) if dirs == 2 else outs[0]
        if module.dropout and module.training and layer < module.num_layers - 1:
            layer_in = F.dropout(layer_in, module.dropout, training=True)
    hn = torch.stack(h_n)
    return layer_in, ((hn, torch.stack(c_n)) if lstm else hn)
