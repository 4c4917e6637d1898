"""Bugs a person makes in Liger-style fused forwards with hand-written backwards."""

from __future__ import annotations

from kernels.mutation import Mutant

_F = "kernels.liger_kernel.fused"

MUTANTS = (
    Mutant(
        "flce-backward-ignores-grad-out",
        "the fused cross-entropy's backward returns the stored gradient of h without scaling "
        "it by the incoming gradient (right only for a loss scale of 1)",
        f"{_F}:_FusedLinearCE.backward",
        "(grad_h * grad_out).to(ctx.dtypes[0]),",
        "grad_h.to(ctx.dtypes[0]),",
        "flce-vs-full",
    ),
    Mutant(
        "flce-mean-over-ignored-rows",
        "the loss is averaged over every row, the ignored ones included",
        f"{_F}:_FusedLinearCE.forward",
        "n = valid.sum().clamp(min=1).to(torch.float32)",
        "n = torch.tensor(float(rows), device=h.device)",
        "flce-vs-full",
    ),
    Mutant(
        "flce-one-chunk",
        "the rows are processed in one chunk, so the whole BT × V logits exist at once",
        f"{_F}:_FusedLinearCE.forward",
        "step = chunk_size(rows, vocab, hidden)",
        "step = rows",
        "flce-peak-memory",
    ),
    Mutant(
        "softmax-without-logsumexp",
        "the chunk's softmax is e^x / Σ e^x instead of e^(x - lse): right for small logits, "
        "inf/inf for logits of order 100",
        f"{_F}:_FusedLinearCE.forward",
        "grad = (logits - lse[:, None]).exp_()  # softmax, in place",
        "grad = logits.exp() / logits.exp().sum(-1, keepdim=True)",
        "flce-vs-full",
    ),
    Mutant(
        "rmsnorm-without-offset",
        "the RMSNorm forward drops the weight offset (Gemma's 1 + w)",
        f"{_F}:_RMSNorm.forward",
        "return (xf * inv * (offset + weight.float())).to(x.dtype)",
        "return (xf * inv * weight.float()).to(x.dtype)",
        "rmsnorm",
    ),
    Mutant(
        "rope-backward-rotates-forward",
        "the RoPE backward rotates by +θ instead of −θ",
        f"{_F}:_RoPE.backward",
        "return dy * cos - _rotate_half(dy * sin), None, None",
        "return dy * cos + _rotate_half(dy * sin), None, None",
        "rope",
    ),
    Mutant(
        "swiglu-derivative-sign",
        "the SiLU derivative is written σ + silu·σ instead of σ + silu·(1 − σ)",
        f"{_F}:_SwiGLU.backward",
        "da = dyf * bf * (sig + silu * (1 - sig))",
        "da = dyf * bf * (sig + silu * sig)",
        "swiglu",
    ),
    Mutant(
        "last-single-row-chunk-skipped",
        "the chunk loop stops one row early: a final chunk holding a single row is never computed",
        f"{_F}:_FusedLinearCE.forward",
        "for start in range(0, rows, step):",
        "for start in range(0, rows - 1, step):",
        "flce-vs-full",
        kind="adversarial-input",
    ),
    Mutant(
        "chunk-one-power-too-large",
        "next_pow2 is taken as 1 << bit_length(n), which doubles the chunk when n is already a power of two",
        f"{_F}:chunk_size",
        "return 1 << max(0, (n - 1).bit_length())",
        "return 1 << max(0, n.bit_length())",
        "flce-chunk",
        kind="expected-value",
    ),
    Mutant(
        "rmsnorm-epsilon-outside-root",
        "the fused RMSNorm adds its epsilon after the square root: invisible at unit scale, wrong for "
        "rows of norm 1e-4",
        f"{_F}:_RMSNorm.forward",
        "inv = torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)",
        "inv = 1 / (xf.pow(2).mean(-1, keepdim=True).sqrt() + eps)",
        "rmsnorm",
        kind="adversarial-input",
    ),
    Mutant(
        "flce-keeps-every-chunk",
        "each chunk's logits are kept on the context (for a recompute-free backward), so all BT x V "
        "logits are alive by the end of the forward and freed only after the backward",
        f"{_F}:_FusedLinearCE.forward",
        "del logits, grad",
        "ctx.kept = [*getattr(ctx, 'kept', []), logits]",
        "flce-peak-memory",
        kind="peak-memory",
    ),
    Mutant(
        "flce-full-logits-buffer",
        "a [BT, V] buffer for the log-sum-exp is allocated up front and filled chunk by chunk; it is "
        "freed when the forward returns, so only the peak shows it",
        f"{_F}:_FusedLinearCE.forward",
        "w = weight.float()",
        "w = weight.float()\n    lse_inputs = torch.empty(rows, vocab, device=h.device)",
        "flce-peak-memory",
        kind="peak-memory",
    ),
)
