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
    Mutant(
        "incomplete-window-counted",
        "the entry count rounds up, so a window still missing tokens already counts as an entry",
        "kernels.csa_hca.pool:entries",
        "return tokens // comp.stride",
        "return -(-tokens // comp.stride)",
        "entry-count",
        kind="expected-value",
    ),
    Mutant(
        "entry-norm-epsilon-outside-root",
        "the entries' RMSNorm adds its epsilon after the square root: invisible at unit scale, wrong "
        "for hidden states of order 1e-4",
        "kernels.csa_hca.pool:rms_norm",
        "torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)",
        "1 / (x.pow(2).mean(-1, keepdim=True).sqrt() + eps)",
        "one-shot-vs-loop-vs-streaming",
        kind="adversarial-input",
    ),
)
