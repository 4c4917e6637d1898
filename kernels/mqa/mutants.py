"""Bugs a person makes in multi-query attention."""

from __future__ import annotations

from kernels.mutation import Mutant

_MQA = "kernels.mqa.shared:mqa_attention"

MUTANTS = (
    Mutant(
        "softmax-over-queries",
        "the softmax runs over the query axis instead of the key axis",
        _MQA,
        "scores.softmax(-1)",
        "scores.softmax(-2)",
        "broadcast-vs-loop",
    ),
    Mutant(
        "cache-offset-ignored",
        "the causal mask forgets the cached prefix (S - T), so a prefill that continues a "
        "cache hides keys it should see",
        _MQA,
        "<= torch.arange(T, device=q.device)[:, None] + S - T",
        "<= torch.arange(T, device=q.device)[:, None]",
        "broadcast-vs-loop",
    ),
    Mutant(
        "missing-scale",
        "the scores are not scaled by 1/sqrt(d)",
        _MQA,
        " k.float()[:, :, 0]) * D**-0.5",
        " k.float()[:, :, 0])",
        "equals-mha-duplicated-kv",
    ),
    Mutant(
        "decode-caches-previous-key",
        "off-by-one while decoding: step t appends the key of step t - 1 to the cache",
        "kernels.mqa.shared:mqa_decode",
        "cache_k = torch.cat([cache_k, k[:, t : t + 1]], dim=1)",
        "cache_k = torch.cat([cache_k, k[:, max(t - 1, 0) : max(t, 1)]], dim=1)",
        "kv-cache-ratio",
    ),
)
