"""Bugs a person makes in DiffusionNFT's expanded loss."""

from __future__ import annotations

from kernels.mutation import Mutant

_X = "kernels.diffusionnft.expanded"

MUTANTS = (
    Mutant(
        "missing-beta",
        "the update step of each branch leaves out β",
        f"{_X}:branch_residuals",
        "step = tb * beta * (v_theta - v_old)",
        "step = tb * (v_theta - v_old)",
        "expanded-vs-written",
    ),
    Mutant(
        "error-of-current-model",
        "the shared error is taken from the current model instead of the old one",
        f"{_X}:branch_residuals",
        "e = x_t - tb * v_old - x0",
        "e = x_t - tb * v_theta - x0",
        "branches-average",
    ),
    Mutant(
        "adaptive-weight-not-detached",
        "the per-branch adaptive weight mean|x̂₀ − x₀| is not detached",
        f"{_X}:nft_loss",
        "l_pos = pos.pow(2).mean(dims) / pos.abs().mean(dims).detach()",
        "l_pos = pos.pow(2).mean(dims) / pos.abs().mean(dims)",
        "expanded-vs-written",
    ),
    Mutant(
        "reward-weight-not-halved",
        "the reward weight maps A/A_max to A/A_max + 1/2 instead of A/(2·A_max) + 1/2",
        f"{_X}:reward_weights",
        "adv.clamp(-a_max, a_max) / a_max / 2 + 0.5",
        "adv.clamp(-a_max, a_max) / a_max + 0.5",
        "expanded-vs-written",
    ),
)
