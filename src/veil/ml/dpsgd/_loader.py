"""Poisson-sampled data loading for DP-SGD, with virtual (physical) batches.

The RDP analysis of DP-SGD (Abadi et al. 2016; Mironov, Talwar & Zhang 2019) assumes that
each record joins each batch independently with probability ``q``.  :class:`PoissonLoader`
draws exactly that (with the secure generator), so batch sizes vary and may be 0.  With
``max_physical_batch_size`` a logical batch is cut into chunks that fit in memory; the
optimizer accumulates the clipped gradients of the chunks and adds noise once per logical
batch (the chunks are "virtual steps").

Example
-------
>>> import torch
>>> from torch.utils.data import TensorDataset
>>> from veil.ml.dpsgd._loader import PoissonLoader
>>> loader = PoissonLoader(TensorDataset(torch.randn(100, 3)), sample_rate=0.1)
>>> len(loader)
10
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, RandomSampler, SequentialSampler, TensorDataset
from torch.utils.data._utils.collate import default_collate

from veil.errors import ConfigError, InputError

from ._noise import NoiseSource

__all__ = [
    "PoissonLoader",
    "StepSignal",
    "check_finite",
    "check_size",
    "dataset_size",
    "loader_rate",
]


#: Logical batches drawn by every :class:`PoissonLoader` of the process (unique numbers).
_LOGICAL = itertools.count(1)


class StepSignal:
    """Tells the optimizer whether the current physical batch ends a logical batch.

    Attributes
    ----------
    last_chunk : bool
        The latest physical batch is the last (or only) chunk of its logical batch.
    batch : tuple of int, optional
        ``(logical batch number, chunk index)`` of the latest physical batch of a
        :class:`PoissonLoader` (numbers unique in the process); ``None`` for other loaders.
        The optimizer checks with it that the chunks it accumulates into one noisy sum are
        those of one logical batch, each once, in order.
    """

    def __init__(self) -> None:
        self.last_chunk = True
        self.batch: tuple[int, int] | None = None


def dataset_size(dataset: Any) -> int:
    """Number of records of a map-style dataset; a clear error without ``len`` or when empty."""
    try:
        n = len(dataset)
    except TypeError:
        raise ConfigError("DP-SGD needs a map-style dataset with a length") from None
    if n == 0:
        raise InputError("the training dataset is empty")
    return n


def loader_rate(data_loader: DataLoader) -> tuple[Dataset, int, float]:
    """``(dataset, n, q)`` of a ``DataLoader``: its size ``n`` and ``q = min(1, batch_size / n)``.

    The sample rate the accountant charges for the loader's batches (Poisson-sampled at ``q``,
    or fixed-size batches of ``batch_size``).  It is the rate of the loader's batches only when
    its sampler draws from every record of the dataset, each at most once per pass: a
    ``SequentialSampler`` or a ``RandomSampler`` without replacement.  Any other sampler is a
    :class:`~veil.errors.ConfigError`: a ``SubsetRandomSampler`` over ``m < n`` records puts
    each of them in a batch with probability ``batch_size / m > q`` (and Poisson sampling
    over the dataset would train on the records it leaves out), a sampler with replacement
    can put one record in a batch twice (sensitivity ``2 C``), and so can a ``RandomSampler``
    whose ``num_samples`` exceeds ``n`` (it chains permutations).
    """
    dataset = data_loader.dataset
    n = dataset_size(dataset)
    if data_loader.batch_size is None:
        raise ConfigError("the data loader must have a batch_size (no custom batch_sampler)")
    sampler = data_loader.sampler
    if type(sampler) not in (SequentialSampler, RandomSampler) or getattr(
        sampler, "replacement", False
    ):
        raise ConfigError(
            f"the data loader draws with a {type(sampler).__name__}"
            f"{' with replacement' if getattr(sampler, 'replacement', False) else ''}, but the "
            f"sample rate batch_size / len(dataset) = {data_loader.batch_size} / {n} holds only "
            "for a loader that draws every record of its dataset once per pass: records that "
            "sampler leaves out (a held-out split, withdrawn consent) would be trained on by "
            "Poisson sampling, or the records it keeps sampled more often than accounted; pass "
            "a loader over exactly the training records (torch.utils.data.Subset) with "
            "shuffle=True or False"
        )
    if isinstance(sampler, RandomSampler) and sampler.num_samples > n:
        # without replacement, num_samples > n chains permutations: a batch across two of them
        # can hold one record twice (sensitivity 2 C), as a sampler with replacement can
        raise ConfigError(
            f"the data loader's RandomSampler draws num_samples={sampler.num_samples} from "
            f"{n} records, so one batch can hold a record twice; leave num_samples out "
            "(shuffle=True)"
        )
    return dataset, n, min(1.0, int(data_loader.batch_size) / n)


def check_size(dataset: Any, n: int) -> None:
    """Refuse a dataset whose length is no longer the ``n`` the sample rate was set for.

    Records added would never be drawn (Poisson loader) and withdrawn ones still indexed; with
    fixed batches a shrunken dataset puts each record in a batch with probability
    ``batch_size / len(dataset)``, above the rate the accountant charges.
    """
    now = len(dataset)
    if now != n:
        raise ConfigError(
            f"the training dataset has {now} records but this loader was built for {n}; "
            "build a new loader (and optimizer) for the changed dataset"
        )


def check_finite(batch: Any) -> None:
    """Raise :class:`~veil.errors.InputError` if a floating tensor in ``batch`` has NaN/inf."""
    if isinstance(batch, torch.Tensor):
        if batch.is_floating_point() and batch.numel() and not bool(torch.isfinite(batch).all()):
            raise InputError(
                "training batch contains NaN or infinite values; clean or impute the data "
                "before private training (no update was made)"
            )
    elif isinstance(batch, (list, tuple)):
        for item in batch:
            check_finite(item)
    elif isinstance(batch, dict):
        for item in batch.values():
            check_finite(item)


class PoissonLoader:
    """Iterate over Poisson-sampled batches of a map-style dataset.

    Parameters
    ----------
    dataset : Dataset
        Map-style dataset (``len`` and ``__getitem__``); ``TensorDataset`` is indexed
        directly (fast path).
    sample_rate : float
        Probability that a record joins a batch, in ``(0, 1]``.
    steps : int, optional
        Logical batches per epoch; ``round(1 / sample_rate)`` by default.
    collate_fn : callable, optional
        Collation for non-tensor datasets (``default_collate``).
    max_physical_batch_size : int, optional
        Split logical batches into chunks of at most this size (virtual steps).
    noise : NoiseSource, optional
        Source of the sampling randomness (secure by default).

    Attributes
    ----------
    batches_yielded : int
        Physical batches handed out so far (all epochs); with :attr:`last_batch_size`, the
        number of records in the latest one, it lets an optimizer built with
        ``dp_optimizer(data_loader=...)`` check that every step it takes was fed from this
        loader (so the Poisson analysis applies).

    See Also
    --------
    PoissonLoader.from_data_loader : the same from a ``DataLoader`` (``q = batch_size / n``).

    Examples
    --------
    >>> from veil.ml.dpsgd import NoiseSource
    >>> data = TensorDataset(torch.arange(100.0))
    >>> seeded = NoiseSource(secure=False, seed=3)  # reproducible, for the example only
    >>> loader = PoissonLoader(data, sample_rate=0.1, noise=seeded)  # secure by default
    >>> [len(batch[0]) for batch in loader]  # Binomial(100, 0.1) sizes
    [11, 13, 10, 10, 6, 11, 11, 11, 11, 10]

    Virtual steps: logical batches of about 50 cut into chunks of at most 20:

    >>> seeded = NoiseSource(secure=False, seed=3)
    >>> loader = PoissonLoader(data, 0.5, steps=2, max_physical_batch_size=20, noise=seeded)
    >>> [len(batch[0]) for batch in loader], loader.batches_yielded
    ([17, 17, 16, 15, 15, 14], 6)
    """

    def __init__(
        self,
        dataset: Dataset,
        sample_rate: float,
        *,
        steps: int | None = None,
        collate_fn: Callable[[list], Any] | None = None,
        max_physical_batch_size: int | None = None,
        noise: NoiseSource | None = None,
        signal: StepSignal | None = None,
    ) -> None:
        self.n = dataset_size(dataset)
        if not 0.0 < float(sample_rate) <= 1.0:
            raise ConfigError(f"sample_rate must lie in (0, 1], got {sample_rate!r}")
        if max_physical_batch_size is not None and int(max_physical_batch_size) < 1:
            raise ConfigError("max_physical_batch_size must be a positive integer")
        self.dataset = dataset
        self.sample_rate = float(sample_rate)
        self.steps = int(steps) if steps is not None else max(1, round(1.0 / self.sample_rate))
        self.collate_fn = collate_fn or default_collate
        self.max_physical_batch_size = max_physical_batch_size
        self.noise = noise or NoiseSource()
        self.signal = signal or StepSignal()
        self.expected_batch_size = self.sample_rate * self.n
        self.batches_yielded = 0
        self.last_batch_size: int | None = None
        self._empty: Any = None

    @classmethod
    def from_data_loader(
        cls,
        data_loader: DataLoader,
        *,
        max_physical_batch_size: int | None = None,
        noise: NoiseSource | None = None,
        signal: StepSignal | None = None,
    ) -> PoissonLoader:
        """Poisson-sample the dataset of ``data_loader`` at ``q = batch_size / len(dataset)``.

        One epoch is ``round(1 / q)`` logical batches whose sizes are Binomial(n, q) (the
        loader's ``batch_size`` is their mean), collated with the loader's ``collate_fn``.
        Its ``shuffle`` and ``drop_last`` are not used: records are drawn independently per
        batch, which is what the RDP analysis of DP-SGD assumes.  A custom sampler (one that
        may leave records out, such as ``SubsetRandomSampler``) is a
        :class:`~veil.errors.ConfigError`: every record of the dataset would be drawn.

        Examples
        --------
        >>> from torch.utils.data import DataLoader
        >>> data = TensorDataset(torch.randn(200, 3))
        >>> loader = PoissonLoader.from_data_loader(DataLoader(data, batch_size=20))
        >>> loader.sample_rate, len(loader), loader.expected_batch_size
        (0.1, 10, 20.0)
        """
        if not isinstance(data_loader, DataLoader):
            raise ConfigError(
                f"expected a torch.utils.data.DataLoader, got {type(data_loader).__name__}"
            )
        dataset, _, sample_rate = loader_rate(data_loader)  # refuses custom samplers
        return cls(
            dataset,
            sample_rate,
            collate_fn=data_loader.collate_fn,
            max_physical_batch_size=max_physical_batch_size,
            noise=noise,
            signal=signal,
        )

    def __len__(self) -> int:
        return self.steps

    def __repr__(self) -> str:
        return f"PoissonLoader(n={self.n}, sample_rate={self.sample_rate:.6g}, steps={self.steps})"

    def _fetch(self, idx: np.ndarray) -> Any:
        if isinstance(self.dataset, TensorDataset):
            t = torch.from_numpy(idx)
            return [x[t] for x in self.dataset.tensors]
        if idx.size == 0:
            if self._empty is None:
                one = self.collate_fn([self.dataset[0]])
                self._empty = _slice_empty(one)
            return self._empty
        return self.collate_fn([self.dataset[int(i)] for i in idx])

    def __iter__(self) -> Iterator[Any]:
        check_size(self.dataset, self.n)
        for _ in range(self.steps):
            logical = next(_LOGICAL)
            mask = self.noise.uniform(self.n) < self.sample_rate
            idx = np.flatnonzero(mask)
            size = self.max_physical_batch_size
            chunks = (
                [idx]
                if size is None or idx.size <= size
                else np.array_split(idx, -(-idx.size // size))
            )
            for k, chunk in enumerate(chunks):
                batch = self._fetch(chunk)
                check_finite(batch)
                self.signal.last_chunk = k == len(chunks) - 1
                self.signal.batch = (logical, k)
                self.batches_yielded += 1
                self.last_batch_size = int(chunk.size)
                yield batch
        self.signal.last_chunk = True


def _slice_empty(batch: Any) -> Any:
    if isinstance(batch, torch.Tensor):
        return batch[:0]
    if isinstance(batch, (list, tuple)):
        return type(batch)(_slice_empty(b) for b in batch)
    if isinstance(batch, dict):
        return {k: _slice_empty(v) for k, v in batch.items()}
    return batch
