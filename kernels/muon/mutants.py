"""Bugs a person makes in Muon's Newton–Schulz and its update."""

from __future__ import annotations

from kernels.mutation import Mutant

_NS = "kernels.muon.newton_schulz"

MUTANTS = (
    Mutant(
        "coefficient-typo",
        "two digits of the quintic's b coefficient are transposed: -4.7705 for -4.7750",
        f"{_NS}:newton_schulz5",
        "a, b, c = COEFFICIENTS",
        "a, b, c = (3.4445, -4.7705, 2.0315)",
        "ns5-spectral",
    ),
    Mutant(
        "row-norm-start",
        "the iteration starts from G divided by its row norms instead of its Frobenius norm",
        f"{_NS}:newton_schulz5",
        "x = x / (x.norm(dim=(-2, -1), keepdim=True) + 1e-7)",
        "x = x / (x.norm(dim=-1, keepdim=True) + 1e-7)",
        "ns5-spectral",
    ),
    Mutant(
        "scale-by-min-dim",
        "the update is scaled by 0.2·sqrt(min(A, B)) instead of 0.2·sqrt(max(A, B))",
        f"{_NS}:muon_step",
        "scale = 0.2 * max(shape) ** 0.5",
        "scale = 0.2 * min(shape) ** 0.5",
        "update-rms-0.2",
    ),
    Mutant(
        "plain-momentum",
        "the update orthogonalises the momentum buffer instead of the Nesterov look-ahead",
        f"{_NS}:muon_step",
        "update = orthogonalize(g + momentum * buf)",
        "update = orthogonalize(buf)",
        "batched-step-vs-loop",
    ),
    Mutant(
        "epsilon-inside-the-root",
        "the starting point divides by sqrt(‖G‖² + 1e-7) instead of ‖G‖ + 1e-7: the same for "
        "gradients of unit scale, far too small a start for a gradient of entries of order 1e-5",
        f"{_NS}:newton_schulz5",
        "x = x / (x.norm(dim=(-2, -1), keepdim=True) + 1e-7)",
        "x = x / (x.pow(2).sum(dim=(-2, -1), keepdim=True) + 1e-7).sqrt()",
        "ns5-spectral",
        kind="adversarial-input",
    ),
)
