"""Bugs a person makes in grouped-query attention and the MHA → GQA conversion."""

from __future__ import annotations

from kernels.mutation import Mutant

_GQA = "kernels.gqa.grouped:grouped_attention"

MUTANTS = (
    Mutant(
        "interleaved-groups",
        "query heads are grouped interleaved (head g·Hkv + n reads KV head n) instead of in "
        "blocks (head n·G + g), the repeat versus repeat_interleave confusion",
        _GQA,
        "qg = q.float().reshape(B, T, Hkv, G, D)",
        "qg = q.float().reshape(B, T, G, Hkv, D).transpose(2, 3)",
        "grouped-vs-repeat",
    ),
    Mutant(
        "softmax-over-queries",
        "the softmax runs over the query axis instead of the key axis",
        _GQA,
        "p = scores.softmax(dim=-1)",
        "p = scores.softmax(dim=-2)",
        "grouped-vs-repeat",
    ),
    Mutant(
        "pool-by-sum",
        "the K/V heads of a group are summed instead of averaged when converting MHA to GQA",
        "kernels.gqa.grouped:mha_to_gqa",
        ".mean(dim=1)",
        ".sum(dim=1)",
        "mha-to-gqa-conversion",
    ),
    Mutant(
        "causal-mask-strict",
        "the causal mask hides the query's own position",
        _GQA,
        "[None, :] <= torch.arange(T",
        "[None, :] < torch.arange(T",
        "mqa-and-mha-are-the-ends",
    ),
    Mutant(
        "scale-argument-ignored",
        "the scale argument is ignored: scores are always scaled by 1/sqrt(d)",
        _GQA,
        "scale = D**-0.5 if scale is None else scale",
        "scale = D**-0.5",
        "grouped-vs-repeat",
        kind="adversarial-input",
    ),
    Mutant(
        "pool-with-key-width",
        "the conversion pools the value projection with the key head width, mixing value rows "
        "of different heads whenever the widths differ",
        "kernels.gqa.grouped:mha_to_gqa",
        "        D = w.shape[0] // heads\n",
        "        D = w_k.shape[0] // heads\n",
        "mha-to-gqa-conversion",
        kind="adversarial-input",
    ),
)
