"""The rules that keep a verification able to fail: adversarial families where they apply,
statistics with a stated bound, memory at its peak, and mutants of every kind."""

from __future__ import annotations

import inspect
import math
from collections import Counter

import pytest
import torch

from kernels.checks import Verification
from kernels.families import FAMILIES, IDLE_EXPERTS, NO_INITIAL_STATE, NON_DEFAULT_SCALE
from kernels.mutation import KINDS, declared_mutants
from kernels.registry import Entry, entries
from kernels.stats import (
    FALSE_FAILURE,
    bernstein_halfwidth,
    chi2_variance_interval,
    gaussian_mean_halfwidth,
    threads_generator,
)
from kernels.verify import load_verification, missing_requirements

WITH_CODE = [e for e in entries() if e.has_code and not missing_requirements(e)]


def _declared(item: Entry) -> Verification:
    declared = load_verification(item)
    assert isinstance(declared, Verification)
    return declared


def _structured_parameters(item: Entry) -> set[str]:
    """Parameter names of the public functions in the kernel's structured modules."""
    import importlib
    import pkgutil

    package = importlib.import_module(item.module or "")
    names: set[str] = set()
    for info in pkgutil.iter_modules(package.__path__):
        if info.name in ("naive", "verification", "mutants", "source"):
            continue
        module = importlib.import_module(f"{item.module}.{info.name}")
        for fn in vars(module).values():
            if inspect.isfunction(fn) and fn.__module__ == module.__name__ and not fn.__name__.startswith("_"):
                names |= set(inspect.signature(fn).parameters)
    return names


@pytest.mark.parametrize("item", WITH_CODE, ids=[e.technique for e in WITH_CODE])
def test_a_kernel_covers_the_families_its_signature_invites(item: Entry) -> None:
    """A ``scale`` argument is checked with a non-default scale, an ``initial_state``
    without one, and experts with idle and overloaded ones."""
    params, families = _structured_parameters(item), set(_declared(item).families)
    if "scale" in params:
        assert NON_DEFAULT_SCALE in families, f"{item.technique} takes scale= but never checks a non-default one"
    if "initial_state" in params:
        assert NO_INITIAL_STATE in families, f"{item.technique} takes initial_state= but always passes one"
    if "experts" in params:
        assert IDLE_EXPERTS in families, f"{item.technique} routes to experts but never leaves one idle"


def test_every_family_is_exercised_and_every_stochastic_check_states_its_bound() -> None:
    covered: Counter[str] = Counter()
    for item in WITH_CODE:
        for c in _declared(item).checks:
            covered.update(c.covers)
            if c.false_failure is not None:
                assert 0 < c.false_failure <= 1e-6, f"{item.technique}/{c.name} allows {c.false_failure}"
    assert set(covered) == set(FAMILIES), f"families no check covers: {set(FAMILIES) - set(covered)}"
    stochastic = [c.name for item in WITH_CODE for c in _declared(item).checks if c.false_failure]
    assert {"sampled-unbiased", "standard-error", "law-monte-carlo", "law-over-seeds", "step-law"} <= set(stochastic)


def test_kernels_that_claim_half_precision_declare_kernels_md_tolerances() -> None:
    claims = {e.technique: _declared(e).low_precision for e in WITH_CODE}
    for technique in ("gated-deltanet", "kda", "deltanet", "mamba2"):
        assert claims[technique] == ("float16", "bfloat16")
    assert "bfloat16" in claims["liger-kernel"] and "bfloat16" in claims["transformer"]
    assert claims["attention-residuals"] == ("float16",)  # FLA tests AttnRes in fp16 and fp32 only
    flce = _declared(next(e for e in WITH_CODE if e.technique == "liger-kernel")).check("flce-vs-full")
    assert flce.tolerances["bfloat16"] == 5e-2  # Liger's FLCE bf16 rtol


def test_the_mutation_harness_has_five_mutants_of_each_weakness() -> None:
    kinds = Counter(m.kind for e in entries() if e.has_code for m in declared_mutants(e))
    assert all(kinds[k] >= 5 for k in KINDS if k != "plain"), kinds


def test_generator_threading_is_proved_and_its_violations_are_counted() -> None:
    def honest(gen: torch.Generator) -> torch.Tensor:
        return torch.rand(8, generator=gen)

    def global_stream(gen: torch.Generator) -> torch.Tensor:
        return torch.rand(8)

    def fixed_seed(gen: torch.Generator) -> torch.Tensor:
        return torch.rand(8, generator=torch.Generator().manual_seed(0))

    assert threads_generator(honest).max_abs == 0
    assert threads_generator(global_stream).max_abs == 2  # two calls with one seed differ; the global stream moved
    assert threads_generator(fixed_seed).max_abs == 1  # two seeds give the same draws


def test_the_bernstein_bound_holds_at_its_stated_rate() -> None:
    """At δ = 0.05 a bounded variable's sample mean leaves the band in at most about 5% of
    trials (here far fewer: Bernstein is conservative); at the suite's δ = 1e-6, never."""
    gen = torch.Generator().manual_seed(0)
    p, n, trials = 0.3, 400, 4000
    draws = (torch.rand(trials, n, generator=gen, dtype=torch.float64) < p).double()
    deviation = (draws.mean(-1) - p).abs()
    loose = bernstein_halfwidth(n, p * (1 - p), 1 - p, delta=0.05)
    strict = bernstein_halfwidth(n, p * (1 - p), 1 - p, delta=FALSE_FAILURE)
    assert (deviation > loose).double().mean() <= 0.05 and not (deviation > strict).any()
    assert strict < 0.15  # and it still sees a bias of 0.15


def test_the_gaussian_bounds_hold_and_are_not_vacuous() -> None:
    gen = torch.Generator().manual_seed(1)
    n = 2000
    z = torch.randn(1000, n, generator=gen, dtype=torch.float64)
    half = gaussian_mean_halfwidth(n)
    low, high = chi2_variance_interval(n)
    assert (z.mean(-1).abs() < half).all() and ((z.var(-1) > low) & (z.var(-1) < high)).all()
    assert half < 0.12 and high - low < 0.5
    assert not math.isclose(half, gaussian_mean_halfwidth(n, tests=10))


def test_tracked_state_counts_a_buffer_held_in_the_middle_of_a_step() -> None:
    from kernels.memory import Tracked, peak_bytes

    class Rank(Tracked):
        def __init__(self) -> None:
            self.state = torch.zeros(100)  # 400 bytes

    r = Rank()
    r.buffer = torch.zeros(1000)  # 4000 bytes, held for a while
    r.buffer = torch.zeros(10)
    assert r.held_bytes() == 440 and r.peak == 4400
    view = torch.zeros(50)
    r.view = view[:5]  # a view holds its whole storage
    assert r.held_bytes() == 440 + 200

    def step() -> torch.Tensor:
        scratch = torch.ones(4096)  # 16 KiB allocated and freed inside the step
        return scratch.sum()

    peak, largest, _ = peak_bytes(step)
    assert peak >= 4096 * 4 and largest == 4096 * 4
