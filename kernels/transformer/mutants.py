"""Bugs a person makes in blockwise (online-softmax) attention."""

from __future__ import annotations

from kernels.mutation import Mutant

_BLOCK = "kernels.transformer.blockwise:blockwise_attention"

MUTANTS = (
    Mutant(
        "accumulator-not-rescaled",
        "the running output is not rescaled by e^{m_old - m_new} when the maximum grows",
        _BLOCK,
        "acc = acc * rescale[..., None] + p @ v",
        "acc = acc + p @ v",
        "blockwise-vs-naive",
    ),
    Mutant(
        "denominator-not-rescaled",
        "the running softmax denominator is not rescaled when the maximum grows",
        _BLOCK,
        "denom = denom * rescale + p.sum(dim=-1)",
        "denom = denom + p.sum(dim=-1)",
        "rows-sum-to-one",
    ),
    Mutant(
        "no-max-subtraction",
        "the scores are exponentiated without subtracting the running maximum: exact at normal "
        "ranges, inf/inf at large logits",
        _BLOCK,
        "p = (s - safe[..., None]).exp()\n            rescale = (m - safe).exp()",
        "p = s.exp()\n            rescale = torch.ones_like(m)",
        "large-logits",
    ),
    Mutant(
        "causal-mask-off-by-one",
        "the causal mask lets each query see the next key",
        _BLOCK,
        "cols[None, :] > rows[:, None] + offset,",
        "cols[None, :] > rows[:, None] + offset + 1,",
        "causality",
    ),
    Mutant(
        "missing-scale",
        "the scores are not scaled by 1/sqrt(d)",
        _BLOCK,
        "qi = q[:, :, i0 : i0 + block_q] * scale",
        "qi = q[:, :, i0 : i0 + block_q]",
        "sdpa",
    ),
    Mutant(
        "scale-argument-ignored",
        "the scale argument is ignored: scores are always scaled by 1/sqrt(d)",
        _BLOCK,
        "scale = D**-0.5 if scale is None else scale",
        "scale = D**-0.5",
        "blockwise-vs-naive",
        kind="adversarial-input",
    ),
    Mutant(
        "scale-from-value-width",
        "the default scale is taken from the value head width instead of the key head width",
        _BLOCK,
        "T, S, D = q.shape[2], k.shape[2], q.shape[3]",
        "T, S, D = q.shape[2], k.shape[2], v.shape[3]",
        "blockwise-vs-naive",
        kind="adversarial-input",
    ),
    Mutant(
        "last-row-block-skipped",
        "the query blocks stop one row early, so a final block holding a single row is never computed",
        _BLOCK,
        "for i0 in range(0, T, block_q):",
        "for i0 in range(0, T - 1, block_q):",
        "blockwise-vs-naive",
        kind="adversarial-input",
    ),
    Mutant(
        "accumulates-in-input-dtype",
        "the blocks are computed in the input dtype: exact in float32, a bfloat16 online softmax in bfloat16",
        _BLOCK,
        "q, k, v = (x.float().transpose(1, 2) for x in (q, k, v))",
        "q, k, v = (x.transpose(1, 2) for x in (q, k, v))",
        "blockwise-vs-naive",
        kind="low-precision",
    ),
)
