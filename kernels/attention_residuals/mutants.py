"""Bugs a person makes in Attention Residuals and its network wirings."""

from __future__ import annotations

from kernels.mutation import Mutant

_FUSED = "kernels.attention_residuals.fused"

MUTANTS = (
    Mutant(
        "softmax-over-tokens",
        "the softmax runs over the token axis instead of over depth (the sources)",
        f"{_FUSED}:attnres",
        ".softmax(dim=0)",
        ".softmax(dim=-1)",
        "stacked-vs-loop",
    ),
    Mutant(
        "norm-by-sum-of-squares",
        "the keys are normalised by the sum of squares instead of the mean (RMS)",
        f"{_FUSED}:attnres",
        "sources.pow(2).mean(-1, keepdim=True)",
        "sources.pow(2).sum(-1, keepdim=True)",
        "stacked-vs-loop",
    ),
    Mutant(
        "partial-block-left-out",
        "inside a block a layer does not see the current block's partial sum",
        f"{_FUSED}:block_forward",
        "sources = finished + ([partial] if partial is not None else [])\n        out = layer(",
        "sources = finished\n        out = layer(",
        "network-full-and-block",
    ),
    Mutant(
        "block-boundary-off-by-one",
        "a block is closed after layer i when i (not i + 1) is a multiple of the block size",
        f"{_FUSED}:block_forward",
        "if (i + 1) % block == 0:",
        "if i % block == 0:",
        "network-full-and-block",
    ),
    Mutant(
        "output-mix-without-embedding",
        "the full wiring's final mix leaves out the embedding",
        f"{_FUSED}:full_forward",
        "return _mix(mix, outputs, queries[len(layers)], norm)",
        "return _mix(mix, outputs[1:], queries[len(layers)], norm)",
        "network-full-and-block",
    ),
    Mutant(
        "key-norm-epsilon-outside-root",
        "the keys' RMSNorm adds its epsilon after the square root: invisible at unit scale, wrong "
        "for sources of norm 1e-4",
        f"{_FUSED}:attnres",
        "torch.rsqrt(sources.pow(2).mean(-1, keepdim=True) + eps)",
        "1 / (sources.pow(2).mean(-1, keepdim=True).sqrt() + eps)",
        "stacked-vs-loop",
        kind="adversarial-input",
    ),
)
