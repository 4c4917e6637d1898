"""Honest statistics for the stochastic checks: bounds that state their false-failure rate,
standard errors computed by the check itself, and proof that a sampler threads the
caller's generator.

A Monte Carlo check compares an estimate with the exact value it should converge to. Its
threshold is not a loose tolerance: it is the half-width of an interval that holds with
probability at least 1 − δ when the kernel is right, from a bound whose assumptions the
check knows to hold (the exact variance and range of each draw, computed from the
distribution the kernel samples). Every bound here is a union over the m quantities it
tests, so the whole check fails wrongly with probability at most :data:`FALSE_FAILURE`.

- :func:`bernstein_halfwidth`: the mean of n independent draws bounded by M around
  their mean, with variance σ² (Bernstein's inequality);
- :func:`gaussian_mean_halfwidth` and :func:`chi2_variance_interval`: the mean and
  variance of n standard normal draws (exact normal tail; Laurent–Massart);
- :func:`threads_generator`: the same seed gives the same draws, different seeds give
  different ones, and the global random stream is left alone.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from kernels.measures import Outcome, count

__all__ = [
    "FALSE_FAILURE",
    "bernstein_halfwidth",
    "chi2_variance_interval",
    "gaussian_mean_halfwidth",
    "outside",
    "threads_generator",
]

#: The largest probability with which a stochastic check may fail a correct kernel.
FALSE_FAILURE = 1e-6


def bernstein_halfwidth(
    n: int, variance: float, bound: float, *, tests: int = 1, delta: float = FALSE_FAILURE
) -> float:
    """t such that P(|mean − μ| ≥ t) ≤ δ/tests for n independent draws X with Var X = σ²
    and |X − μ| ≤ M: Bernstein's inequality 2·exp(−n t² / (2σ² + 2Mt/3)) solved for t."""
    log_term = math.log(2 * tests / delta)
    a = bound * log_term / 3
    return (a + math.sqrt(a * a + 2 * n * variance * log_term)) / n


def gaussian_mean_halfwidth(n: int, *, tests: int = 1, delta: float = FALSE_FAILURE) -> float:
    """t with P(|mean of n iid N(0, 1)| ≥ t) = δ/tests exactly (the mean is N(0, 1/n))."""
    from statistics import NormalDist

    return NormalDist().inv_cdf(1 - delta / (2 * tests)) / math.sqrt(n)


def chi2_variance_interval(n: int, *, tests: int = 1, delta: float = FALSE_FAILURE) -> tuple[float, float]:
    """An interval holding the unbiased sample variance of n iid N(0, 1) draws with
    probability ≥ 1 − δ/tests: (n − 1)·s² is χ² with k = n − 1 degrees of freedom, and
    Laurent–Massart bound each tail by e^{−x}: χ² ≥ k + 2√(kx) + 2x and χ² ≤ k − 2√(kx)."""
    k = n - 1
    x = math.log(2 * tests / delta)
    return (k - 2 * math.sqrt(k * x)) / k, (k + 2 * math.sqrt(k * x) + 2 * x) / k


def outside(deviation: torch.Tensor | float, halfwidth: torch.Tensor | float) -> float:
    """How far the largest |deviation| exceeds its interval (0 when all are inside)."""
    excess = torch.as_tensor(deviation, dtype=torch.float64).abs() - torch.as_tensor(halfwidth, dtype=torch.float64)
    return max(0.0, float(excess.max()))


def threads_generator(draw: Callable[[torch.Generator], object], seeds: tuple[int, int] = (11, 12)) -> Outcome:
    """Prove that ``draw(gen)`` takes its randomness from the generator it is given.

    Counted as failures: the same seed twice giving different results (it draws from
    some other stream), two seeds giving the same result (it ignores the generator),
    and any change to torch's global random state (it consumes the global stream)."""
    state = torch.get_rng_state()
    first = _flat(draw(torch.Generator().manual_seed(seeds[0])))
    again = _flat(draw(torch.Generator().manual_seed(seeds[0])))
    other = _flat(draw(torch.Generator().manual_seed(seeds[1])))
    touched = int(not torch.equal(state, torch.get_rng_state()))
    torch.set_rng_state(state)
    same_seed_differs = int(not torch.equal(first, again))
    seeds_agree = int(torch.equal(first, other))
    return count(
        same_seed_differs + seeds_agree + touched,
        0,
        f"seed {seeds[0]} twice: {'same' if not same_seed_differs else 'different'}; seeds {seeds[0]} and "
        f"{seeds[1]}: {'different' if not seeds_agree else 'the same'}; global random state "
        f"{'untouched' if not touched else 'consumed'}",
    )


def _flat(result: object) -> torch.Tensor:
    """Every tensor (or number) in a result, flattened into one float64 vector."""
    if isinstance(result, torch.Tensor):
        return result.detach().double().cpu().flatten()
    if isinstance(result, list | tuple):
        parts = [_flat(r) for r in result]
        return torch.cat(parts) if parts else torch.zeros(0, dtype=torch.float64)
    return torch.tensor([float(result)], dtype=torch.float64)  # type: ignore[arg-type]
