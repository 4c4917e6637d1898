"""Bugs a person makes in the fused-MoE pipeline (permute, grouped GEMM, unpermute)."""

from __future__ import annotations

from kernels.mutation import Mutant

MUTANTS = (
    Mutant(
        "token-from-slot",
        "the token of a sorted row is computed with % instead of //: row order mod k",
        "kernels.hpc_ops.fused:permute",
        "tokens = order // chosen.shape[1]",
        "tokens = order % chosen.shape[1]",
        "fused-vs-loop",
    ),
    Mutant(
        "weights-not-permuted",
        "the routing weights are applied in (token, slot) order to rows sorted by expert",
        "kernels.hpc_ops.fused:unpermute",
        "w = weights.flatten()[perm.order]",
        "w = weights.flatten()",
        "fused-vs-loop",
    ),
    Mutant(
        "counts-of-top-1",
        "the reported per-expert counts histogram only each token's first choice",
        "kernels.hpc_ops.fused:fused_moe",
        "return unpermute(y, perm, weights, x.shape[0]), perm.counts",
        "return unpermute(y, perm, weights, x.shape[0]), "
        "torch.bincount(chosen[:, 0], minlength=experts.count).tolist()",
        "counts",
    ),
    Mutant(
        "unweighted-combine",
        "the expert outputs are summed back without their routing weights",
        "kernels.hpc_ops.fused:unpermute",
        "y_sorted * w[:, None]",
        "y_sorted",
        "fused-vs-loop",
    ),
    Mutant(
        "counts-stop-at-last-used-expert",
        "the counts are a bincount without minlength, so idle trailing experts have no count and "
        "the grouped GEMM never learns they exist",
        "kernels.hpc_ops.fused:permute",
        "counts = torch.bincount(flat, minlength=experts).tolist()",
        "counts = torch.bincount(flat).tolist()",
        "counts",
        kind="adversarial-input",
    ),
    Mutant(
        "grouped-segments-skip-empty-experts",
        "the shared grouped GEMM advances its segment only for experts with tokens, so after an idle "
        "expert the next expert's rows start one segment late",
        "kernels.experts:grouped_apply",
        "            outs.append(apply_expert(x_sorted[start : start + n], experts, e, act))\n        start += n",
        "            outs.append(apply_expert(x_sorted[start : start + n], experts, e, act))\n"
        "            start += n\n        else:\n            start += 1",
        "fused-vs-loop",
        kind="adversarial-input",
    ),
)
