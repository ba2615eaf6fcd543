"""DP-SGD tests run torch single-threaded: on small models intra-op threads only add overhead,
and on a loaded machine they make timings erratic."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _single_thread_torch() -> Iterator[None]:
    try:
        import torch
    except ImportError:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)
