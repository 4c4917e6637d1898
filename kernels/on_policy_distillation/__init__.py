"""On-policy distillation: full-vocabulary and sampled reverse KL."""

from __future__ import annotations

from kernels.on_policy_distillation.kl import reverse_kl, sampled_reverse_kl

__all__ = ["reverse_kl", "sampled_reverse_kl"]
