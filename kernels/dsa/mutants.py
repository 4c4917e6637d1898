"""Bugs a person makes in DeepSeek Sparse Attention's batched form."""

from __future__ import annotations

from kernels.mutation import Mutant

_INDEXER = "kernels.dsa.sparse:lightning_indexer"
_TOPK = "kernels.dsa.sparse:topk_mask"

MUTANTS = (
    Mutant(
        "indexer-without-relu",
        "the lightning indexer sums the raw q·k products, without the ReLU",
        _INDEXER,
        "torch.relu(torch.einsum(\"btjd,bsd->btjs\", q_idx, k_idx))",
        "torch.einsum(\"btjd,bsd->btjs\", q_idx, k_idx)",
        "batched-vs-loop",
    ),
    Mutant(
        "future-mask-hides-self",
        "the indexer's causal mask uses >= and hides the query's own position",
        _INDEXER,
        "> torch.arange(T, device=scores.device)[:, None]",
        ">= torch.arange(T, device=scores.device)[:, None]",
        "keys-per-query",
    ),
    Mutant(
        "topk-off-by-one",
        "the top-k slice keeps k - 1 keys",
        _TOPK,
        ".indices[..., :topk]",
        ".indices[..., : topk - 1]",
        "keys-per-query",
    ),
    Mutant(
        "ascending-sort",
        "the indexer scores are sorted ascending, so the lowest-scoring keys are kept",
        _TOPK,
        "descending=True",
        "descending=False",
        "batched-vs-loop",
    ),
    Mutant(
        "scale-from-value-width",
        "the attention scale is taken from the value head width instead of the query/key width",
        "kernels.dsa.sparse:dsa_attention",
        "D = q.shape[-1]",
        "D = v.shape[-1]",
        "batched-vs-loop",
        kind="adversarial-input",
    ),
)
