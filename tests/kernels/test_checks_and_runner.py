"""The check vocabulary and the runner: error measures, verdicts, crashing checks."""

from __future__ import annotations

import math

import pytest
import torch

import kernels.verify as runner
from kernels.checks import Check, Verification
from kernels.measures import Outcome, Setting, against, compare, compare_all, within
from kernels.registry import Entry
from kg.errors import KernelError


def test_compare_reports_max_abs_and_normwise_relative_error() -> None:
    out = compare(torch.tensor([1.0, -4.0]), torch.tensor([1.5, -4.0]))
    assert out.max_abs == pytest.approx(0.5) and out.max_rel == pytest.approx(0.125)
    wrong_shape = compare(torch.zeros(2), torch.zeros(3))  # a measured failure, not an exception
    assert math.isinf(wrong_shape.max_abs) and "shapes differ" in wrong_shape.detail
    named = compare_all([("a", torch.ones(2), torch.ones(2)), ("b", torch.ones(2), torch.full((2,), 1.1))])
    assert named.detail == "worst of 2: b" and named.max_abs == pytest.approx(0.1, rel=1e-5)


def test_claims_as_numbers() -> None:
    assert against(0.999, 1.0).max_abs == pytest.approx(0.001)
    assert within(0.9, 1.0).max_abs == 0.0 and within(1.2, 1.0).max_abs == pytest.approx(0.2)
    nan_check = Check("c", "claim", lambda s: Outcome(math.nan, math.nan), tolerance=1.0)
    assert not nan_check.passed(Outcome(math.nan, math.nan))
    assert Check("c", "claim", lambda s: Outcome(0, 0), tolerance=0.0, measure="abs").passed(Outcome(0.0, 5.0))


def test_setting_draws_the_same_numbers_whatever_the_device_dtype() -> None:
    s = Setting()
    a = s.randn(3, 4, gen=s.generator(1))
    b = Setting(dtype=torch.float64).randn(3, 4, gen=s.generator(1))
    assert torch.equal(a, b.float())


def _declared(*checks: Check, requires: tuple[str, ...] = ()) -> Verification:
    return Verification("demo", "what is compared", checks, shapes=("B1",), requires=requires)


def test_a_crashing_check_is_a_failed_check_with_the_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(s: Setting) -> Outcome:
        raise RuntimeError("shape mismatch in the kernel")

    declared = _declared(
        Check("fine", "holds", lambda s: Outcome(0.0, 0.0), tolerance=0.0),
        Check("broken", "crashes", boom, tolerance=1.0),
    )
    monkeypatch.setattr(runner, "load_verification", lambda e: declared)
    run = runner.verify(Entry("demo", "kernel", "kernels.demo"))
    assert [c.passed for c in run.checks] == [True, False] and not run.passed
    assert [c.status for c in run.checks] == ["passed", "broken"] and run.broken == [run.checks[1]]
    assert "RuntimeError: shape mismatch" in run.checks[1].detail and math.isnan(run.checks[1].max_abs)
    report = run.to_dict()
    assert report["checks"][1]["max_abs"] == "nan" and report["checks"][1]["status"] == "broken"
    assert report["broken"] == 1


def test_missing_optional_dependency_and_unknown_check_are_clear(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    declared = _declared(Check("c", "claim", lambda s: Outcome(0, 0), tolerance=0.0), requires=("no_such_pkg_xyz",))
    monkeypatch.setattr(runner, "load_verification", lambda e: declared)
    with pytest.raises(KernelError) as err:
        runner.verify(Entry("demo", "kernel", "kernels.demo"))
    assert "no_such_pkg_xyz" in err.value.message and "pip install" in err.value.hint
    monkeypatch.setattr(runner, "load_verification", lambda e: _declared(declared.checks[0]))
    with pytest.raises(KernelError, match="no check named"):
        runner.verify(Entry("demo", "kernel", "kernels.demo"), only=["nope"])


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_cuda_without_a_gpu_is_refused_with_a_hint() -> None:
    with pytest.raises(KernelError) as err:
        runner.resolve_device("cuda")
    assert "--device cpu" in err.value.hint
    with pytest.raises(KernelError, match="unknown device"):
        runner.resolve_device("tpu")


def test_half_precision_runs_the_checks_that_declare_it_and_judges_them_like_fla(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: dict[str, torch.dtype] = {}

    def measured(name: str, rms: float):  # type: ignore[no-untyped-def]
        def run(s: Setting) -> Outcome:
            seen[name] = s.dtype
            return Outcome(max_abs=0.5, max_rel=0.5, rms=rms)

        return run

    declared = _declared(
        Check("fla", "claim", measured("fla", 0.004), tolerance=1e-5, tolerances={"float16": 0.005}),
        Check("fp32-only", "claim", measured("fp32-only", 0.0), tolerance=1.0),
    )
    monkeypatch.setattr(runner, "load_verification", lambda e: declared)
    run = runner.verify(Entry("demo", "kernel", "kernels.demo"), dtype="fp16")
    fla, plain = run.checks
    assert seen == {"fla": torch.float16, "fp32-only": torch.float32}
    assert (fla.dtype, fla.measure, fla.tolerance, fla.passed) == ("float16", "rms", 0.005, True)
    assert (plain.dtype, plain.measure, plain.tolerance) == ("float32", "rel", 1.0) and run.dtype == "float16"
    # in float32 the same check is judged by its own measure and tolerance: max rel 0.5 fails
    assert not runner.verify(Entry("demo", "kernel", "kernels.demo"), dtype="float32").checks[0].passed
    # by default every check runs in float32 and again in each half precision it claims
    default = runner.verify(Entry("demo", "kernel", "kernels.demo"))
    assert [(c.name, c.dtype) for c in default.checks] == [
        ("fla", "float32"),
        ("fla", "float16"),
        ("fp32-only", "float32"),
    ]
    assert default.dtype == "float32+float16" and not default.passed
    assert runner.resolve_dtype("bf16") == "bfloat16"
    with pytest.raises(KernelError, match="unknown dtype") as err:
        runner.resolve_dtype("int8")
    assert "--dtype" in err.value.hint


def test_compare_reports_non_finite_output_as_an_infinite_error() -> None:
    out = compare(torch.tensor([1.0, 2.0]), torch.tensor([1.0, float("nan")]))
    assert math.isinf(out.max_abs) and "non-finite" in out.detail
    same = compare(torch.tensor([float("inf"), 1.0]), torch.tensor([float("inf"), 1.0]))
    assert same.max_abs == 0.0 and same.rms == 0.0


def test_default_cotangents_are_random_and_scale_a_scalar_loss() -> None:
    from kernels.measures import gradients, random_cotangents

    loss, field = random_cotangents([torch.zeros(()), torch.zeros(3, 4)])
    assert 0.5 <= abs(loss.item()) <= 2.0 and loss.item() != 1.0
    assert field.std() > 0.1 and not torch.equal(field, torch.ones_like(field))
    _, (grad,) = gradients(lambda x: (x * 2).sum(), (torch.ones(3),))
    assert torch.allclose(grad, torch.full((3,), 2 * loss.item()))  # the same draw: shapes decide


def test_a_check_that_raises_does_not_hide_a_part_that_fails_on_its_numbers() -> None:
    from kernels.measures import numbers_first

    def boom() -> Outcome:
        raise RuntimeError("index out of range")

    failed = numbers_first([boom, lambda: Outcome(3.0, 3.0, "counts differ")], limit=0.0)
    assert failed.max_abs == 3.0 and "RuntimeError: index out of range" in failed.detail
    with pytest.raises(RuntimeError, match="index out of range"):  # no number fails: the check is broken
        numbers_first([boom, lambda: Outcome(0.0, 0.0)], limit=0.0)


def test_numbers_read_before_a_device_error_still_fail_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    # On CUDA an out-of-range index is a device-side assert that surfaces at the next
    # synchronisation: numbers already read that fail still fail; passing ones do not pass.
    from kernels.checks import check

    def lost(device: object) -> None:
        calls.append(device)
        if len(calls) > 1:  # the synchronisation before the check is fine, the one after it fails
            raise RuntimeError("CUDA error: device-side assert triggered")

    calls: list[object] = []
    monkeypatch.setattr(runner, "_sync", lost)

    @check("demo", 1e-6)
    def wrong(s: Setting) -> Outcome:
        """Numbers that fail."""
        return Outcome(0.5, 0.5, "out differs")

    @check("demo", 1e-6)
    def right(s: Setting) -> Outcome:
        """Numbers that pass."""
        return Outcome(0.0, 0.0)

    declared = Verification("demo", "", (wrong,))
    failed = runner._run_check(wrong, declared, "float32", torch.device("cpu"))
    assert not failed.passed and not failed.raised and "device failed" in failed.detail
    calls.clear()
    broken = runner._run_check(right, declared, "float32", torch.device("cpu"))
    assert broken.raised and "device-side assert" in broken.detail


def test_a_declared_check_takes_its_claim_from_its_docstring_and_names_known_families() -> None:
    from kernels.checks import case, check

    @check("demo", 1e-6, covers=("batch-of-one",))
    def demo(s: Setting) -> Outcome:
        """A one-line claim
        that wraps.

        Details that are not the claim."""
        return Outcome(0.0, 0.0)

    assert demo.claim == "A one-line claim that wraps." and demo.covers == ("batch-of-one",)
    with pytest.raises(ValueError, match="unknown families"):
        Check("x", "claim", demo.run, 0.0, covers=("no-such-family",))
    with pytest.raises(ValueError, match="unknown families"):
        case("no-such-family", T=1)
    c = case("uneven-sizes", T=33, C=16)
    assert (c.T, c.get("scale"), c.id) == (33, None, "T33-C16 [uneven-sizes]")


def test_a_comparison_covers_its_cases_families_and_skips_far_from_unit_inputs_in_half() -> None:
    from kernels.checks import case, comparison

    seen: list[str] = []

    def draw(s: Setting, c, gen):  # type: ignore[no-untyped-def]
        seen.append(c.id)
        return (s.randn(3, gen=gen, scale=c.x),)

    cases = (case(x=1.0), case("far-from-unit-scale", x=1e4))
    declared = comparison("demo", "claim", lambda c, x: x * 2, lambda c, x: x + x, draw, cases, grads=("x",))
    assert declared.covers == ("far-from-unit-scale",) and declared.gradients
    assert declared.run(Setting()).max_abs == 0.0 and seen == ["x1.0", "x10000.0 [far-from-unit-scale]"]
    seen.clear()
    declared.run(Setting(dtype=torch.bfloat16))
    assert seen == ["x1.0"]


def test_naive_forms_written_with_the_pinned_formulas_run_their_pins(monkeypatch: pytest.MonkeyPatch) -> None:
    import kernels.formulas as formulas
    from kernels.registry import entry

    checks = runner.declared_checks(entry("switch-transformer"), runner.load_verification(entry("switch-transformer")))  # type: ignore[arg-type]
    pins = checks[-1]
    assert pins.name == "reference-formulas" and "swiglu_expert" in pins.claim and "silu" in pins.claim
    assert pins.passed(pins.run(Setting()))
    monkeypatch.setattr(formulas, "silu", lambda z: z * torch.sigmoid(z * 1.001))  # a slightly wrong SiLU
    assert not pins.passed(pins.run(Setting()))
    assert "reference-formulas" not in [
        c.name for c in runner.declared_checks(entry("qat"), runner.load_verification(entry("qat")))
    ]  # type: ignore[arg-type]
