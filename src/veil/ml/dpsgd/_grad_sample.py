"""Per-sample gradients, their norms and the clipped sum, for any supported ``nn.Module``.

Two strategies, chosen per leaf module (a module that owns trainable parameters):

* ``nn.Linear`` -- **ghost clipping** (Goodfellow 2015; Li, Tramer, Liang & Hashimoto 2021;
  Bu et al. 2022).  A custom autograd function keeps the layer input ``x`` and the output
  gradient ``g`` and skips the (useless) batch weight gradient.  The per-sample gradient
  ``g_i^T x_i`` is never materialised: its norm is ``||g_i|| ||x_i||`` for 2-D inputs, or
  ``sum_{t,s} (x_t.x_s)(g_t.g_s)`` for sequences when ``T^2 <= in*out`` (otherwise the
  per-sample gradient is formed with one einsum), and the clipped sum is one matmul
  ``(c * g)^T x``.
* ``nn.Conv1d`` / ``nn.Conv2d`` (groups=1, zero padding) -- the same trick on unfolded
  patches: a convolution is a linear map applied at ``L`` positions, so ``x`` becomes the
  ``(B, L, C_in k)`` patch matrix (``F.unfold``) and ``g`` the ``(B, L, C_out)`` output
  gradient; ghost norms when ``L^2 <= C_in k C_out``, else one ``bmm`` (as Opacus).
* everything else (other convolutions, Embedding, LayerNorm, GroupNorm, custom leaves) --
  **torch.func**:
  the forward runs under ``vmap`` over ``functional_call`` with the parameters expanded to
  one (stride-0) copy per sample, so the ordinary ``loss.backward()`` leaves the per-sample
  gradients in the expanded leaves.  RNN / LSTM / GRU use a functional re-implementation of
  the recurrence (``aten::lstm`` has no vmap rule).

All three clip one gradient per row of dimension 0 of each layer's input, so the batch must be
dimension 0 everywhere: a pre-hook on the instrumented model records dimension 0 of its first
tensor input, and every layer refuses (``InputError``) an input with another number of rows
(a transpose to time-major, a reshape merging batch and time).  A moved dimension of the same
length as the batch cannot be detected; recurrent layers with ``batch_first=False`` are
refused by :func:`validate_module` for that reason.

Example
-------
>>> import torch
>>> from torch import nn
>>> from veil.ml.dpsgd._grad_sample import PerSampleGrads
>>> model = nn.Sequential(nn.Linear(3, 2))
>>> psg = PerSampleGrads(model)
>>> model(torch.randn(4, 3)).sum().backward()
>>> psg.per_sample_norms(scale=1.0).shape
torch.Size([4])
>>> psg.remove()
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn
from torch.func import functional_call, vmap
from torch.utils._pytree import tree_map

from veil.errors import ConfigError, InputError

from ._capture import ConvCapture, LinearCapture, conv_ok, conv_rows, padding_row
from ._rnn import rnn_single, rnn_supported
from ._validate import validate_module

__all__ = ["PerSampleGrads"]


@dataclass
class _Layer:
    name: str
    module: nn.Module
    kind: str  # "linear" | "conv" | "vmap" | "rnn"
    params: dict[str, nn.Parameter]
    records: list = field(default_factory=list)


class _State:
    def __init__(self) -> None:
        self.inside = False
        self.enabled = True
        self.depth = 0  # nesting of calls of the instrumented (root) module
        self.batch: int | None = None  # dim 0 of the root module's input, during its forward
        self.batch_why = "the model was not called"
        self.pass_id = 0  # forward passes through the model
        self.passes: set[int] = set()  # those back-propagated since the last clear()

    def marker(self) -> Any:
        """Callback for backward: the current forward pass reached the gradients."""
        pid, passes = self.pass_id, self.passes
        return lambda *_: passes.add(pid)


def _find_tensor(obj: Any) -> torch.Tensor | None:
    """First tensor with at least one dimension in ``obj`` (depth first through tuples, lists
    and dict values; scalar tensors, e.g. a temperature passed first, are skipped)."""
    if isinstance(obj, torch.Tensor):
        return obj if obj.dim() > 0 else None
    items = obj.values() if isinstance(obj, dict) else obj
    if isinstance(obj, (tuple, list, dict)):
        for item in items:
            found = _find_tensor(item)
            if found is not None:
                return found
    return None


def _per_example_params(params: dict[str, nn.Parameter], bsz: int) -> dict[str, torch.Tensor]:
    """One detached copy of every parameter per example, as gradient-requiring leaves.

    A forward pass ``vmap``-ed over these gives each example's gradient, which DP-SGD clips
    per example (Abadi et al. 2016, "Deep learning with differential privacy", CCS);
    ``expand`` makes views, so no parameter memory is copied.

    Parameters
    ----------
    params : dict of str to torch.nn.Parameter
        The layer's own trainable parameters.
    bsz : int
        Batch size.

    Returns
    -------
    dict of str to torch.Tensor
        ``name -> tensor of shape (bsz, *param.shape)`` with ``requires_grad=True``.
    """
    return {
        n: p.detach().unsqueeze(0).expand(bsz, *p.shape).requires_grad_(True)
        for n, p in params.items()
    }


def _first_tensor(args: tuple) -> torch.Tensor:
    for a in args:
        if isinstance(a, torch.Tensor):
            return a
    raise InputError("the module's forward received no tensor argument")


class PerSampleGrads:
    """Install per-sample gradient capture on every leaf module of ``module`` (in place).

    Parameters
    ----------
    module : nn.Module
        Model to instrument; validated with :func:`~veil.ml.dpsgd.validate_module`.
    clipping : {"ghost", "flat"}
        ``"ghost"`` uses ghost clipping for ``nn.Linear`` and ``nn.Conv1d`` / ``nn.Conv2d``;
        ``"flat"`` materialises every
        per-sample gradient (slower, same result).

    References
    ----------
    X. Li, F. Tramer, P. Liang, T. Hashimoto, "Large language models can be strong
    differentially private learners", ICLR, 2022 (ghost clipping).

    Examples
    --------
    One backward pass gives the gradient norm of every sample, as if computed one by one:

    >>> model, x = nn.Linear(3, 1), torch.randn(5, 3)
    >>> grads = PerSampleGrads(model)
    >>> model(x).sum().backward()
    >>> norms = grads.per_sample_norms(scale=1.0)
    >>> def one_by_one(i):
    ...     twin = nn.Linear(3, 1)
    ...     twin.load_state_dict(model.state_dict())
    ...     twin(x[i : i + 1]).sum().backward()
    ...     return torch.cat([p.grad.flatten() for p in twin.parameters()]).norm()
    >>> torch.allclose(norms, torch.stack([one_by_one(i) for i in range(5)]))
    True
    >>> grads.remove()  # uninstall the capture
    """

    def __init__(self, module: nn.Module, *, clipping: str = "ghost") -> None:
        if clipping not in ("ghost", "flat"):
            raise ConfigError(f"clipping must be 'ghost' or 'flat', got {clipping!r}")
        validate_module(module)
        self.module = module
        self.clipping = clipping
        self._state = _State()
        self.layers: list[_Layer] = []
        for name, sub in module.named_modules():
            params = {n: p for n, p in sub.named_parameters(recurse=False) if p.requires_grad}
            if not params:
                continue
            if isinstance(sub, nn.Linear) and type(sub).forward is nn.Linear.forward:
                kind = "linear"
            elif conv_ok(sub):
                kind = "conv"
            elif isinstance(sub, nn.RNNBase):
                if not rnn_supported(sub):
                    raise ConfigError(f"{name}: RNN with proj_size > 0 is not supported")
                kind = "rnn"
            else:
                kind = "vmap"
            layer = _Layer(name or type(sub).__name__, sub, kind, params)
            sub.forward = self._make_forward(layer)
            self.layers.append(layer)
        self.params: list[nn.Parameter] = [p for lay in self.layers for p in lay.params.values()]
        self._hooks = [
            module.register_forward_pre_hook(self._root_pre, with_kwargs=True),
            module.register_forward_hook(self._root_post, always_call=True),
        ]

    # ------------------------------------------------------------------ the model's batch
    def _root_pre(self, module: nn.Module, args: tuple, kwargs: dict) -> None:
        """Record the batch size: dimension 0 of the first tensor given to the model."""
        state = self._state
        if state.inside:
            return
        state.depth += 1
        if state.depth > 1:
            return
        state.pass_id += 1
        x = _find_tensor((args, kwargs))
        if x is None:
            state.batch = None
            state.batch_why = "the model's input has no tensor with a batch dimension"
        else:
            state.batch = int(x.shape[0])

    def _root_post(self, module: nn.Module, args: tuple, output: Any) -> None:
        state = self._state
        if state.inside:
            return
        state.depth = max(0, state.depth - 1)
        # the batch of the last pass stays known after the forward returns: gradient
        # checkpointing re-runs layer forwards during backward, on the same batch

    def _check_batch(self, layer: _Layer, x: torch.Tensor) -> int:
        """Dimension 0 of a layer input must be the model's batch (privacy: per-sample
        clipping clips per row of that dimension)."""
        state = self._state
        if x.dim() == 0:
            raise InputError(
                f"{layer.name}: expected a batched input (batch on dimension 0), "
                f"got shape {tuple(x.shape)}"
            )
        rows = int(x.shape[0])
        if state.batch is None:
            raise InputError(
                f"{layer.name}: the batch size is unknown ({state.batch_why}); call the "
                "instrumented model itself with a tensor whose dimension 0 is the batch"
            )
        if rows != state.batch:
            raise InputError(
                f"{layer.name} ({type(layer.module).__name__}) got an input of shape "
                f"{tuple(x.shape)}: {rows} rows on dimension 0, but the model's batch has "
                f"{state.batch} samples.  DP-SGD clips one gradient per row of dimension 0 of "
                "every layer with parameters, so keep the batch on dimension 0 everywhere "
                "(no transpose, permute or reshape that moves or merges it; recurrent layers "
                "with batch_first=True)"
            )
        return rows

    # ------------------------------------------------------------------ forward patches
    def _make_forward(self, layer: _Layer) -> Any:
        sub = layer.module
        orig = type(sub).forward.__get__(sub)
        state = self._state

        if layer.kind == "linear":

            def linear_forward(x: torch.Tensor) -> torch.Tensor:
                if not (state.enabled and torch.is_grad_enabled()):
                    return orig(x)
                self._check_batch(layer, x)
                return LinearCapture.apply(x, sub.weight, sub.bias, layer.records, state.marker())

            return linear_forward

        if layer.kind == "conv":
            conf = (sub.stride, sub.padding, sub.dilation)

            def conv_forward(x: torch.Tensor) -> torch.Tensor:
                if not (state.enabled and torch.is_grad_enabled()):
                    return orig(x)
                if x.dim() != sub.weight.dim():
                    raise InputError(
                        f"{layer.name}: expected a batched {sub.weight.dim()}-D input, "
                        f"got shape {tuple(x.shape)}"
                    )
                self._check_batch(layer, x)
                return ConvCapture.apply(
                    x, sub.weight, sub.bias, layer.records, conf, state.marker()
                )

            return conv_forward

        def vmap_forward(*args: Any, **kwargs: Any) -> Any:
            if state.inside or not (state.enabled and torch.is_grad_enabled()):
                return orig(*args, **kwargs)
            if any(isinstance(a, nn.utils.rnn.PackedSequence) for a in args):
                raise InputError(f"{layer.name}: PackedSequence inputs are not supported")
            if layer.kind == "rnn":
                return self._rnn_call(layer, args, kwargs)
            x = _first_tensor(args)
            bsz = self._check_batch(layer, x)
            if bsz == 0:
                return self._empty_call(layer, args, kwargs)
            expanded = _per_example_params(layer.params, bsz)

            def one(params: dict, *a: Any) -> Any:
                a1 = tuple(t.unsqueeze(0) if isinstance(t, torch.Tensor) else t for t in a)
                state.inside = True
                try:
                    out = functional_call(sub, params, a1, kwargs)
                finally:
                    state.inside = False
                return tree_map(lambda t: t.squeeze(0) if isinstance(t, torch.Tensor) else t, out)

            in_dims = (0, *[0 if isinstance(a, torch.Tensor) else None for a in args])
            for a in args:
                if isinstance(a, torch.Tensor) and (a.dim() == 0 or a.shape[0] != bsz):
                    raise InputError(f"{layer.name}: tensor arguments disagree on batch size")
            out = vmap(one, in_dims=in_dims, randomness="different")(expanded, *args)
            self._mark_leaves(expanded.values())
            layer.records.append(expanded)
            return out

        return vmap_forward

    def _empty_call(self, layer: _Layer, args: tuple, kwargs: dict) -> Any:
        """Empty (Poisson) batch: run with detached parameters so that no ordinary gradient
        reaches them, keeping the output in the autograd graph through a dummy leaf."""
        detached = {n: p.detach() for n, p in layer.params.items()}
        self._state.inside = True
        try:
            out = functional_call(layer.module, detached, args, kwargs)
        finally:
            self._state.inside = False
        layer.records.append(0)
        anchor = torch.zeros((), requires_grad=True)
        self._mark_leaves([anchor])
        return tree_map(
            lambda t: (
                t + anchor.to(t.dtype) * 0
                if isinstance(t, torch.Tensor) and t.is_floating_point()
                else t
            ),
            out,
        )

    def _rnn_call(self, layer: _Layer, args: tuple, kwargs: dict) -> Any:
        sub = layer.module
        x = args[0]
        hx = args[1] if len(args) > 1 else kwargs.get("hx")
        if x.dim() != 3:
            raise InputError(
                f"{layer.name}: expected a batched 3-D input, got shape {tuple(x.shape)}"
            )
        if not sub.batch_first:  # refused by validate_module; the flag was changed since
            raise ConfigError(f"{layer.name}: construct recurrent layers with batch_first=True")
        bsz = self._check_batch(layer, x)
        if bsz == 0:
            return self._empty_call(layer, args, kwargs)
        expanded = _per_example_params(layer.params, bsz)
        frozen = {n: p for n, p in sub.named_parameters(recurse=False) if n not in layer.params}
        hx_dims: Any = None if hx is None else tree_map(lambda _: 1, hx)

        def one(params: dict, xi: torch.Tensor, hi: Any) -> Any:
            return rnn_single(sub, {**frozen, **params}, xi, hi)

        h_dims: Any = (1, 1) if isinstance(sub, nn.LSTM) else 1
        out = vmap(one, in_dims=(0, 0, hx_dims), out_dims=(0, h_dims), randomness="different")(
            expanded, x, hx
        )
        self._mark_leaves(expanded.values())
        layer.records.append(expanded)
        return out

    # ------------------------------------------------------------------ bookkeeping
    def _mark_leaves(self, leaves: Any) -> None:
        mark = self._state.marker()
        for leaf in leaves:
            leaf.register_hook(mark)

    def clear(self) -> None:
        """Forget captured activations / per-sample gradients."""
        for layer in self.layers:
            layer.records.clear()
        self._state.passes.clear()

    def remove(self) -> None:
        """Restore the original ``forward`` of every instrumented module."""
        for layer in self.layers:
            layer.module.__dict__.pop("forward", None)
            layer.records.clear()
        self.layers = []
        for handle in self._hooks:
            handle.remove()
        self._hooks = []

    def batch_size(self) -> int:
        """Batch size seen by the last forward/backward (checks that all layers agree).

        Refuses gradients of more than one forward pass: sample ``i`` of each pass would be
        clipped together as one unit (so one unit could hold several records).
        """
        passes = len(self._state.passes)
        if passes > 1:
            raise ConfigError(
                f"the captured gradients come from {passes} forward/backward passes through "
                "the model: call opt.step() after each loss.backward() (and opt.zero_grad() "
                "before the next forward).  Accumulating several batches into one step would "
                "clip sample i of each batch together as a single unit; for a large logical "
                "batch use make_private(..., max_physical_batch_size=k) (virtual steps).  A "
                "loss that calls the model more than once per step (two augmented views of one "
                "batch) is not supported either: the engine cannot tell two views of the same "
                "samples (one unit each) from two different batches"
            )
        sizes = set()
        for layer in self.layers:
            for rec in layer.records:
                if isinstance(rec, int):
                    sizes.add(rec)
                elif isinstance(rec, tuple):
                    sizes.add(rec[0].shape[0])
                elif any(leaf.grad is not None for leaf in rec.values()):
                    # forward passes that were never back-propagated do not count
                    sizes.add(next(iter(rec.values())).shape[0])
        if not sizes:
            raise ConfigError("no gradients were captured: call loss.backward() before step()")
        if len(sizes) > 1:
            raise InputError(f"layers saw different batch sizes {sorted(sizes)}")
        return sizes.pop()

    # ------------------------------------------------------------------ per-unit gradients
    def _units(self, layer: _Layer, n_units: int) -> list:
        """Per-unit data of a layer: ('ghost', x, g) or ('full', {name: (U, ...)})."""
        out: list = []
        if layer.kind in ("linear", "conv"):
            recs = [r for r in layer.records if isinstance(r, tuple)]
            if not recs:
                return out
            views = []
            for x, g in recs:
                if layer.kind == "conv":
                    x, g = conv_rows(layer.module, x, g)
                xs = x.reshape(n_units, -1, x.shape[-1])
                gs = g.reshape(n_units, -1, g.shape[-1])
                views.append((xs, gs))
            t = views[0][0].shape[1]
            fan = views[0][0].shape[2] * views[0][1].shape[2]
            ghost = self.clipping == "ghost" and len(views) == 1 and (t == 1 or t * t <= fan)
            if ghost:
                out.append(("ghost", *views[0]))
            else:
                full: dict[str, torch.Tensor] = {}
                for xs, gs in views:
                    if "weight" in layer.params:
                        gw = torch.bmm(gs.transpose(1, 2), xs)
                        full["weight"] = full["weight"] + gw if "weight" in full else gw
                    if "bias" in layer.params:
                        gb = gs.sum(1)
                        full["bias"] = full["bias"] + gb if "bias" in full else gb
                out.append(("full", full))
            return out
        full = {}
        pad = padding_row(layer.module)
        for rec in layer.records:
            if isinstance(rec, int):
                continue
            for n, leaf in rec.items():
                grad = leaf.grad
                if grad is None:
                    continue
                if pad is not None and n == "weight":
                    # as torch's embedding backward: the padding row gets no gradient (the
                    # vmapped backward leaves one for samples with repeated padding tokens)
                    grad = grad.index_fill(1, torch.tensor([pad], device=grad.device), 0)
                grad = grad.reshape(n_units, -1, *grad.shape[1:]).sum(1)
                full[n] = full[n] + grad if n in full else grad
        if full:
            out.append(("full", full))
        return out

    def per_sample_norms(self, scale: float, n_units: int | None = None) -> torch.Tensor:
        """L2 norm of each unit's gradient (``scale`` times the captured gradient)."""
        norms, _ = self._norms_and_units(scale, n_units)
        return norms

    def _norms_and_units(self, scale: float, n_units: int | None) -> tuple[torch.Tensor, list]:
        bsz = self.batch_size()
        units = bsz if n_units is None else n_units
        if units and bsz % units:
            raise InputError(f"batch size {bsz} is not divisible by num_microbatches={units}")
        sq: torch.Tensor | None = None
        per_layer = []
        for layer in self.layers:
            data = self._units(layer, units) if units else []
            per_layer.append((layer, data))
            for item in data:
                if item[0] == "ghost":
                    _, xs, gs = item
                    contrib = torch.zeros(units, dtype=gs.dtype, device=gs.device)
                    if "weight" in layer.params and xs.shape[1] == 1:
                        contrib = gs.square().sum((1, 2)) * xs.square().sum((1, 2))
                    elif "weight" in layer.params:
                        contrib = (
                            torch.einsum("uti,usi->uts", xs, xs)
                            * torch.einsum("uto,uso->uts", gs, gs)
                        ).sum((1, 2))
                    if "bias" in layer.params:
                        contrib = contrib + gs.sum(1).square().sum(1)
                else:
                    contrib = sum(v.reshape(units, -1).square().sum(1) for v in item[1].values())
                sq = contrib if sq is None else sq + contrib
        if sq is None:
            sq = torch.zeros(units, dtype=torch.float64)
        norms = sq.clamp_min(0).sqrt() * abs(scale)
        return norms, per_layer

    def clipped_sum(
        self, max_grad_norm: float, scale: float, n_units: int | None = None
    ) -> tuple[dict[nn.Parameter, torch.Tensor], int, torch.Tensor]:
        """Sum over units of ``min(1, C / ||grad_u||) * grad_u``.

        Returns ``(sums, n_units, norms)``; ``grad_u`` is ``scale`` times the captured
        gradient of unit ``u`` (``scale`` undoes a mean reduction of the loss).
        """
        norms, per_layer = self._norms_and_units(scale, n_units)
        if not bool(torch.isfinite(norms).all()):
            raise InputError(
                "a per-sample gradient is NaN or infinite (check the data and the loss); "
                "no update was made"
            )
        factor = (max_grad_norm / (norms + 1e-6)).clamp(max=1.0)
        weights = factor * scale
        sums: dict[nn.Parameter, torch.Tensor] = {}
        for layer, data in per_layer:
            for item in data:
                if item[0] == "ghost":
                    _, xs, gs = item
                    wg = gs * weights.to(gs.dtype).view(-1, 1, 1)
                    if "weight" in layer.params:
                        val = wg.reshape(-1, gs.shape[-1]).T @ xs.reshape(-1, xs.shape[-1])
                        w = layer.params["weight"]
                        _add(sums, w, val.reshape(w.shape))
                    if "bias" in layer.params:
                        _add(sums, layer.params["bias"], wg.sum((0, 1)))
                else:
                    for n, v in item[1].items():
                        val = torch.tensordot(weights.to(v.dtype), v, dims=1)
                        _add(sums, layer.params[n], val.reshape(layer.params[n].shape))
        return sums, int(norms.shape[0]), norms


def _add(sums: dict, p: nn.Parameter, val: torch.Tensor) -> None:
    sums[p] = sums[p] + val if p in sums else val
