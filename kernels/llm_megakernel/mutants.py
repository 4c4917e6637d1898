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
    Mutant(
        "qkv-waits-for-the-residual",
        "a head's QKV task depends on the layer's input instead of the norm task whose output it reads",
        _BUILD,
        'tasks.append(Task(f"qkv.{li}.{h}", [f"norm1.{li}"], qkv))',
        'tasks.append(Task(f"qkv.{li}.{h}", ["embed" if li == 0 else f"down.{li - 1}"], qkv))',
        "dependency-counters",
        kind="numbers-not-crashes",
    ),
    Mutant(
        "down-waits-for-one-tile",
        "the MLP's down projection depends only on the first up tile, though it reads every tile",
        _BUILD,
        'tasks.append(Task(f"down.{li}", [f"up.{li}.{j}" for j in tiles], down))',
        'tasks.append(Task(f"down.{li}", [f"up.{li}.{tiles[0]}"], down))',
        "dependency-counters",
        kind="numbers-not-crashes",
    ),
    Mutant(
        "logits-wait-for-one-tile",
        "the final concatenation depends only on the first LM-head tile",
        _BUILD,
        '[f"lm_head.{j}" for j in vocab_tiles]',
        '[f"lm_head.{vocab_tiles[0]}"]',
        "dependency-counters",
        kind="numbers-not-crashes",
    ),
    Mutant(
        "output-projection-waits-for-qkv",
        "the output projection depends on the heads' QKV tasks instead of their attention tasks",
        _BUILD,
        '[f"attn.{li}.{h}" for h in range(H)]',
        '[f"qkv.{li}.{h}" for h in range(H)]',
        "dependency-counters",
        kind="numbers-not-crashes",
    ),
    Mutant(
        "second-norm-waits-for-the-first",
        "the second norm of a layer depends on the first norm instead of the output projection it reads",
        _BUILD,
        'tasks.append(Task(f"norm2.{li}", [f"oproj.{li}"], norm2))',
        'tasks.append(Task(f"norm2.{li}", [f"norm1.{li}"], norm2))',
        "dependency-counters",
        kind="numbers-not-crashes",
    ),
    Mutant(
        "norm-epsilon-outside-root",
        "the tasks' shared RMSNorm adds its epsilon after the square root",
        "kernels.llm_megakernel.model:rms_norm",
        "torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)",
        "1 / (x.pow(2).mean(-1, keepdim=True).sqrt() + eps)",
        "interpreter-vs-layerwise",
        kind="independent-reference",
    ),
)
