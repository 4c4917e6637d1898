"""Peak memory of a piece of torch code, counted on any device.

``peak_bytes(fn)`` runs ``fn`` under a dispatch mode that sees every tensor an operator
creates, adds the size of each new storage when it appears and subtracts it when the
storage is freed. The peak is therefore the most memory that code's own tensors held
at once (inputs created before the call are not counted). It needs no allocator hooks,
so the CPU and CUDA count the same way.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

__all__ = ["LiveBytes", "peak_bytes"]


class LiveBytes(TorchDispatchMode):  # type: ignore[no-untyped-call]
    """Track bytes held by storages created inside the mode."""

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.live = 0
        self.peak = 0
        self.largest = 0
        self._held: dict[int, int] = {}

    def _release(self, key: int) -> None:
        self.live -= self._held.pop(key, 0)

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        for t in tree_flatten(out)[0]:
            if not isinstance(t, torch.Tensor) or t.device.type == "meta":
                continue
            storage = t.untyped_storage()
            size = storage.nbytes()
            key = storage.data_ptr()
            if size == 0 or key in self._held:
                continue
            self._held[key] = size
            self.live += size
            self.peak = max(self.peak, self.live)
            self.largest = max(self.largest, size)
            weakref.finalize(storage, self._release, key)
        return out


def peak_bytes(fn: Callable[[], Any]) -> tuple[int, int, Any]:
    """(peak live bytes, largest single allocation, result) of calling ``fn``."""
    with LiveBytes() as mode:
        result = fn()
    return mode.peak, mode.largest, result
