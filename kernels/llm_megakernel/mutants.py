"""Bugs a person makes when cutting a forward pass into megakernel tasks."""

from __future__ import annotations

from kernels.mutation import Mutant

_BUILD = "kernels.llm_megakernel.schedule:build_tasks"

MUTANTS = (
    Mutant(
        "causal-mask-hides-self",
        "the attention task's causal mask excludes the diagonal",
        _BUILD,
        "causal = torch.ones(T, T, dtype=torch.bool, device=tokens.device).tril()",
        "causal = torch.ones(T, T, dtype=torch.bool, device=tokens.device).tril(-1)",
        "interpreter-vs-layerwise",
    ),
    Mutant(
        "residual-dropped",
        "the output-projection task forgets the residual connection",
        _BUILD,
        'b[f"h.{li}"] = b[x] + o @ w[f"{li}.wo"].T',
        'b[f"h.{li}"] = o @ w[f"{li}.wo"].T',
        "interpreter-vs-layerwise",
    ),
    Mutant(
        "scale-by-model-dim",
        "a head's scores are scaled by the model width instead of the head width",
        _BUILD,
        "* d**-0.5",
        "* D**-0.5",
        "interpreter-vs-layerwise",
    ),
    Mutant(
        "norm-weights-swapped",
        "the first norm task of a layer reads the second norm's weights",
        _BUILD,
        'b[f"n1.{li}"] = rms_norm(b[x], w[f"{li}.norm1"])',
        'b[f"n1.{li}"] = rms_norm(b[x], w[f"{li}.norm2"])',
        "interpreter-vs-layerwise",
    ),
)
