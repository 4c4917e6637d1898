"""Liger-style fused operations: forward and backward written by hand.

``fused_linear_cross_entropy`` never materialises the [BT, V] logits. It walks the rows
in chunks of next_pow2(⌈BT / ⌈V/H⌉⌉); for each chunk it computes the chunk's logits, the
loss, and at once the gradients (softmax − one-hot)/N with respect to the hidden states
and the head weight, then drops the chunk. Backward only scales the stored gradients by
the incoming gradient. At most a chunk × V slice of logits is alive at any time.

RMSNorm, RoPE (rotate_half form) and SwiGLU save only their inputs and recompute in
backward, as the Triton kernels do.
"""

from __future__ import annotations

import math
from typing import Any

import torch

__all__ = ["chunk_size", "fused_linear_cross_entropy", "rmsnorm", "rope", "swiglu"]


def chunk_size(rows: int, vocab: int, hidden: int) -> int:
    """next_pow2(⌈BT / ⌈V/H⌉⌉): chunks whose logits are about as large as the hidden states."""
    n = math.ceil(rows / math.ceil(vocab / hidden))
    return 1 << max(0, (n - 1).bit_length())


class _FusedLinearCE(torch.autograd.Function):
    @staticmethod
    def forward(
        ctx: Any, h: torch.Tensor, weight: torch.Tensor, target: torch.Tensor, ignore_index: int
    ) -> torch.Tensor:
        rows, hidden = h.shape
        vocab = weight.shape[0]
        step = chunk_size(rows, vocab, hidden)
        valid = target != ignore_index
        n = valid.sum().clamp(min=1).to(torch.float32)
        grad_h = torch.zeros(rows, hidden, dtype=torch.float32, device=h.device)
        grad_w = torch.zeros(vocab, hidden, dtype=torch.float32, device=h.device)
        loss = torch.zeros((), dtype=torch.float32, device=h.device)
        w = weight.float()
        for start in range(0, rows, step):
            hc = h[start : start + step].float()
            tc = target[start : start + step]
            keep = valid[start : start + step]
            logits = hc @ w.T  # [chunk, V]: the only V-wide tensor
            lse = torch.logsumexp(logits, dim=-1)
            safe = tc.clamp(min=0)
            picked = logits.gather(1, safe[:, None])[:, 0]
            loss = loss + ((lse - picked) * keep).sum()
            grad = (logits - lse[:, None]).exp_()  # softmax, in place
            grad[torch.arange(len(tc), device=h.device), safe] -= 1.0
            grad *= (keep.float() / n)[:, None]
            grad_h[start : start + step] = grad @ w
            grad_w += grad.T @ hc
            del logits, grad
        ctx.save_for_backward(grad_h, grad_w)
        ctx.dtypes = (h.dtype, weight.dtype)
        return loss / n

    @staticmethod
    def backward(ctx: Any, grad_out: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, None, None]:
        grad_h, grad_w = ctx.saved_tensors
        return (
            (grad_h * grad_out).to(ctx.dtypes[0]),
            (grad_w * grad_out).to(ctx.dtypes[1]),
            None,
            None,
        )


def fused_linear_cross_entropy(
    h: torch.Tensor, weight: torch.Tensor, target: torch.Tensor, ignore_index: int = -100
) -> torch.Tensor:
    """Same contract as ``naive_lm_head_ce``."""
    out: torch.Tensor = _FusedLinearCE.apply(h, weight, target, ignore_index)  # type: ignore[no-untyped-call]
    return out


class _RMSNorm(torch.autograd.Function):
    @staticmethod
    def forward(
        ctx: Any, x: torch.Tensor, weight: torch.Tensor, eps: float, offset: float
    ) -> torch.Tensor:
        xf = x.float()
        inv = torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
        ctx.save_for_backward(x, weight, inv)
        ctx.offset = offset
        return (xf * inv * (offset + weight.float())).to(x.dtype)

    @staticmethod
    def backward(ctx: Any, dy: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, None, None]:
        x, weight, inv = ctx.saved_tensors
        xf, dyf = x.float(), dy.float()
        xhat = xf * inv
        gw = dyf * (ctx.offset + weight.float())
        dx = inv * (gw - xhat * (gw * xhat).mean(-1, keepdim=True))
        dw = (dyf * xhat).reshape(-1, x.shape[-1]).sum(0)
        return dx.to(x.dtype), dw.to(weight.dtype), None, None


def rmsnorm(
    x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6, offset: float = 0.0
) -> torch.Tensor:
    out: torch.Tensor = _RMSNorm.apply(x, weight, eps, offset)  # type: ignore[no-untyped-call]
    return out


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)


def _cos_sin(
    positions: torch.Tensor, D: int, base: float, device: torch.device, dtype: torch.dtype
) -> tuple[torch.Tensor, torch.Tensor]:
    inv = base ** (-torch.arange(0, D, 2, dtype=torch.float64) / D)
    angle = positions.double().cpu()[:, None] * inv
    angle = torch.cat([angle, angle], dim=-1)[None, :, None, :]
    return angle.cos().to(device, dtype), angle.sin().to(device, dtype)


class _RoPE(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, positions: torch.Tensor, base: float) -> torch.Tensor:
        cos, sin = _cos_sin(positions, x.shape[-1], base, x.device, x.dtype)
        ctx.save_for_backward(cos, sin)
        return x * cos + _rotate_half(x) * sin

    @staticmethod
    def backward(ctx: Any, dy: torch.Tensor) -> tuple[torch.Tensor, None, None]:
        cos, sin = ctx.saved_tensors
        # The transpose of a rotation is the rotation by −θ.
        return dy * cos - _rotate_half(dy * sin), None, None


def rope(x: torch.Tensor, positions: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """x [B, T, H, D] rotated at ``positions`` [T] (rotate_half convention)."""
    out: torch.Tensor = _RoPE.apply(x, positions, base)  # type: ignore[no-untyped-call]
    return out


class _SwiGLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(a, b)
        af = a.float()
        return (af * torch.sigmoid(af) * b.float()).to(a.dtype)

    @staticmethod
    def backward(ctx: Any, dy: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        a, b = ctx.saved_tensors
        af, bf, dyf = a.float(), b.float(), dy.float()
        sig = torch.sigmoid(af)
        silu = af * sig
        da = dyf * bf * (sig + silu * (1 - sig))
        return da.to(a.dtype), (dyf * silu).to(b.dtype)


def swiglu(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    out: torch.Tensor = _SwiGLU.apply(a, b)  # type: ignore[no-untyped-call]
    return out
