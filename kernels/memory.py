"""Peak memory of a piece of torch code over the whole of it, not what is left at the end.

Two ways of counting, both at their peak:

- ``peak_bytes(fn)``, a tracking allocator. On the CPU it runs ``fn`` under a dispatch
  mode that sees every tensor an operator creates, adds the size of each new storage
  when it appears and subtracts it when the storage is freed: the peak is the most
  memory that code's own tensors held at once (inputs created before the call are not
  counted). On CUDA it reads the caching allocator's own peak,
  ``torch.cuda.max_memory_allocated``, above what was allocated before the call.
- :class:`Tracked`, tensor bookkeeping for state that an object keeps (a simulated
  rank's parameters, gradients and optimizer state): every assignment of an attribute
  re-counts the bytes of all the tensors the object holds, and the largest count is kept.
  A buffer that is allocated and later replaced is counted while it was held.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

__all__ = ["LiveBytes", "Tracked", "peak_bytes", "tensor_bytes"]


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


def peak_bytes(fn: Callable[[], Any], device: torch.device | None = None) -> tuple[int, int, Any]:
    """(peak bytes, largest single allocation, result) of calling ``fn``: counted by
    :class:`LiveBytes` on the CPU, by the CUDA allocator's peak on a GPU (where the
    largest single allocation is not known and reported as 0)."""
    if device is not None and device.type == "cuda":
        torch.cuda.synchronize(device)
        before = torch.cuda.memory_allocated(device)
        torch.cuda.reset_peak_memory_stats(device)
        result = fn()
        torch.cuda.synchronize(device)
        return torch.cuda.max_memory_allocated(device) - before, 0, result
    with LiveBytes() as mode:
        result = fn()
    return mode.peak, mode.largest, result


def tensor_bytes(tensors: Any) -> int:
    """Bytes of the distinct storages among ``tensors`` (a view is not counted twice)."""
    seen: dict[int, int] = {}
    for t in tree_flatten(tensors)[0]:
        if isinstance(t, torch.Tensor):
            storage = t.untyped_storage()
            seen[storage.data_ptr()] = storage.nbytes()
    return sum(seen.values())


class Tracked:
    """An object whose tensor attributes are counted after every assignment; ``peak``
    is the most they held at once, ``held_bytes()`` what they hold now."""

    peak: int = 0

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        if name != "peak":
            object.__setattr__(self, "peak", max(self.peak, self.held_bytes()))

    def held_bytes(self) -> int:
        return tensor_bytes([v for v in vars(self).values() if isinstance(v, torch.Tensor)])
