"""Bugs a person makes in DeepSeek-V4's compressed KV (CSA and HCA)."""

from __future__ import annotations

from kernels.mutation import Mutant

_COMPRESS = "kernels.csa_hca.pool:compress"

MUTANTS = (
    Mutant(
        "softmax-over-channels",
        "the gated pooling's softmax runs over the channels instead of the window positions",
        _COMPRESS,
        "pooled = (logits.softmax(dim=2) * kvw).sum(2)",
        "pooled = (logits.softmax(dim=3) * kvw).sum(2)",
        "one-shot-vs-loop-vs-streaming",
    ),
    Mutant(
        "padding-counted-as-tokens",
        "the m padded positions in front of the first CSA window are marked valid",
        _COMPRESS,
        "valid = F.pad(valid, (0, 0, comp.stride, 0), value=False)",
        "valid = F.pad(valid, (0, 0, comp.stride, 0), value=True)",
        "one-shot-vs-loop-vs-streaming",
    ),
    Mutant(
        "rope-one-window-late",
        "entry i is rotated at position (i + 1)·m instead of i·m",
        _COMPRESS,
        "rotate_entries(c, torch.arange(n) * comp.stride, comp)",
        "rotate_entries(c, (torch.arange(n) + 1) * comp.stride, comp)",
        "rope-at-i-m",
    ),
    Mutant(
        "streaming-bias-reversed",
        "the streaming cache adds the positional bias of the window in reverse order",
        "kernels.csa_hca.pool:StreamingCompressor.push",
        "comp.bias[offsets]",
        "comp.bias[offsets[::-1]]",
        "one-shot-vs-loop-vs-streaming",
    ),
    Mutant(
        "entry-ready-a-token-late",
        "an entry becomes visible one token after the token that completes its window",
        "kernels.csa_hca.pool:attend_compressed",
        "ready = (torch.arange(n, device=q.device)[None, :] + 1) * comp.stride - 1 <= ",
        "ready = (torch.arange(n, device=q.device)[None, :] + 1) * comp.stride <= ",
        "sparse-covers-dense",
    ),
)
