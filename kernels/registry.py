"""Which reference kernel each catalog technique has, or why it has none.

Every technique id in ``kg/data/techniques/*.toml`` maps to an :class:`Entry`:

- ``kernel``: a folder ``kernels/<name>/`` with ``naive.py`` (the obvious form: loops,
  float32) beside a structured form, and ``verification.py`` declaring the checks;
- ``reference``: an executable reference of a system (simulated ranks, an in-process
  environment, an interpreter loop), with the same layout and the same kind of checks;
- ``none``: no code makes sense, and ``rationale`` says why.

This module imports nothing heavy: ``kg kernels list`` reads it without torch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from kg.errors import KernelError

__all__ = ["ENTRIES", "Entry", "Form", "entries", "entry"]

Form = Literal["kernel", "reference", "none"]


@dataclass(frozen=True)
class Entry:
    technique: str
    form: Form
    #: The kernel package, e.g. ``kernels.gated_deltanet``; None for "none".
    module: str | None = None
    #: Why there is no kernel ("none"), or why the code is a reference and not a kernel.
    rationale: str | None = None

    @property
    def has_code(self) -> bool:
        return self.module is not None


def _k(technique: str, folder: str) -> Entry:
    return Entry(technique, "kernel", f"kernels.{folder}")


def _ref(technique: str, folder: str, rationale: str) -> Entry:
    return Entry(technique, "reference", f"kernels.{folder}", rationale)


_SYSTEM = (
    "{what} is a distributed system, not an operator; the reference runs its data "
    "movement on simulated ranks in one process (lists of shards){gloo}, and checks it "
    "against the unsharded computation."
)

ENTRIES: tuple[Entry, ...] = (
    # attention
    _k("transformer", "transformer"),
    _k("mqa", "mqa"),
    _k("gqa", "gqa"),
    _k("paged-attention", "paged_attention"),
    _k("mla", "mla"),
    _k("dsa", "dsa"),
    _k("kda", "kda"),
    _k("gated-deltanet", "gated_deltanet"),
    _k("deepseek-v4-csa-hca", "csa_hca"),
    _k("attention-residuals", "attention_residuals"),
    # mixture of experts
    _k("switch-transformer", "switch_transformer"),
    _k("expert-choice", "expert_choice"),
    _k("aux-loss-free-balancing", "aux_loss_free"),
    _k("latentmoe", "latentmoe"),
    _k("stable-latentmoe", "stable_latentmoe"),
    # activations, numerics, kernels libraries
    _k("situ", "situ"),
    _k("qat", "qat"),
    # Triton first: it fixes its interpreter mode when first imported, and later kernels
    # import torch._dynamo, which imports Triton in compiled mode.
    _k("triton", "triton_lang"),
    _k("liger-kernel", "liger_kernel"),
    _k("hpc-ops", "hpc_ops"),
    _ref(
        "llm-megakernel",
        "llm_megakernel",
        "A megakernel is one persistent GPU kernel; what can be checked on a CPU is its "
        "execution model: a pre-scheduled task list run by one interpreter loop with "
        "dependency counters, against the layer-by-layer forward.",
    ),
    Entry(
        "ascend-c",
        "none",
        None,
        "Ascend C is a C/C++ operator language for Huawei Ascend NPUs, compiled by the "
        "CANN toolchain. Its subject is how an operator is tiled through the NPU's local "
        "memory queues (CopyIn, Compute, CopyOut); a PyTorch kernel would only restate the "
        "operator being implemented, not Ascend C, and nothing here can compile or run it.",
    ),
    Entry(
        "triton-ascend",
        "none",
        None,
        "Triton-Ascend is a compiler backend that lowers Triton kernels to Ascend NPUs "
        "through CANN. Its kernels are ordinary Triton source, which kernels/triton_lang "
        "verifies under Triton's CPU interpreter; the Ascend lowering itself needs an NPU "
        "and the CANN toolkit, so there is nothing of its own to run or compare here.",
    ),
    # optimizers, quantized training
    _k("muon", "muon"),
    # RL and post-training
    _k("grpo", "grpo"),
    _k("dancegrpo", "dancegrpo"),
    _k("diffusionnft", "diffusionnft"),
    _k("on-policy-distillation", "on_policy_distillation"),
    _k("categorical-flow-maps", "categorical_flow_maps"),
    _k("specforge", "specforge"),
    _ref(
        "tunix",
        "tunix",
        "Tunix is a JAX post-training library; the reference reproduces its agentic loop in "
        "PyTorch: a multi-turn rollout with a calculator tool and the loss mask that keeps "
        "tool output out of the gradient.",
    ),
    _ref(
        "agentenv",
        "agentenv",
        "AgentENV runs agent environments in microVMs; no tensor kernel makes sense. The "
        "reference is a small in-process environment (a task over a file-system tree, run as a "
        "state machine) with snapshot, fork, pause and resume, checked for fork isolation and "
        "bit-for-bit restore.",
    ),
    # distributed training
    _ref(
        "megatron-tp",
        "megatron_tp",
        _SYSTEM.format(
            what="Megatron tensor parallelism",
            gloo=" and over torch.distributed gloo processes on the CPU",
        ),
    ),
    _ref(
        "zero",
        "zero",
        _SYSTEM.format(what="ZeRO", gloo=" and over torch.distributed gloo processes on the CPU"),
    ),
    _ref("fsdp1", "fsdp1", _SYSTEM.format(what="FSDP1", gloo="")),
    _ref("fsdp2", "fsdp2", _SYSTEM.format(what="FSDP2", gloo="")),
    _ref("vescale-fsdp", "vescale_fsdp", _SYSTEM.format(what="veScale-FSDP", gloo="")),
    _ref("deepep", "deepep", _SYSTEM.format(what="DeepEP", gloo="")),
    _ref("ultraep", "ultraep", _SYSTEM.format(what="UltraEP", gloo="")),
    # lineage-only parents
    _k("deltanet", "deltanet"),
    _k("mamba2", "mamba2"),
    _k("sparsely-gated-moe", "sparsely_gated_moe"),
    _k("ppo", "ppo"),
    _k("eagle", "eagle"),
    Entry(
        "eplb",
        "none",
        None,
        "History-based expert load balancing is a placement policy, not an operator: it "
        "gives extra replicas to the experts with the highest per-replica load measured over "
        "past steps. That greedy rule is the one kernels/ultraep verifies on exact per-micro-batch "
        "loads (replicate.py); a kernel of its own would check the same code on older numbers.",
    ),
)

_BY_ID = {e.technique: e for e in ENTRIES}


def entries() -> list[Entry]:
    """Every registry entry, in registry order."""
    return list(ENTRIES)


def entry(technique: str) -> Entry:
    """The entry of a technique id (the catalog's ``id``)."""
    try:
        return _BY_ID[technique]
    except KeyError:
        from difflib import get_close_matches

        close = get_close_matches(technique, list(_BY_ID), n=3)
        raise KernelError(
            f"no reference kernel is registered for {technique!r}",
            hint=("Did you mean " + ", ".join(close) + "? " if close else "") + "List them with: kg kernels list",
        ) from None
