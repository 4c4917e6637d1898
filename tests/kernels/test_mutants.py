"""The mutation harness: every declared mutant is killed by the check that exists to
catch it, on a numeric comparison (not because the mutated code raised)."""

from __future__ import annotations

import inspect

import pytest

from kernels.mutation import Mutant, MutantRun, applied, declared_mutants, run_mutant
from kernels.registry import Entry, entries, entry
from kg.errors import KernelError

WITH_CODE = [e for e in entries() if e.has_code]
PLANTED = [(e, m) for e in WITH_CODE for m in declared_mutants(e)]


@pytest.mark.parametrize("item", WITH_CODE, ids=[e.technique for e in WITH_CODE])
def test_each_kernel_declares_at_least_three_mutants_of_its_own_code(item: Entry) -> None:
    from kernels.verify import load_verification

    mutants = declared_mutants(item)
    assert len(mutants) >= 3, f"{item.technique} declares {len(mutants)} mutants"
    assert len({m.name for m in mutants}) == len(mutants), "two mutants share a name"
    checks = {c.name for c in load_verification(item).checks} | {"reference-formulas"}  # type: ignore[attr-defined]
    for m in mutants:
        # its own structured code, or a structured helper it shares with other kernels
        assert m.module.startswith((item.module + ".", "kernels.experts", "kernels.mla.", "kernels.hpc_ops.")), m.name
        # (QAT's hand-written straight-through estimator is its naive.py, checked against torch's operator)
        reference = m.module.endswith((".naive", ".verification", ".mutants")) and m.module != "kernels.qat.naive"
        assert not reference and m.module != "kernels.formulas", f"{m.name} plants its bug in a reference"
        assert m.check in checks, f"{m.name} names no declared check {m.check!r}"
        assert m.find != m.replace and m.bug


@pytest.mark.parametrize(("item", "mutant"), PLANTED, ids=[f"{e.technique}-{m.name}" for e, m in PLANTED])
def test_mutant_is_killed_on_the_numbers_by_its_check(item: Entry, mutant: Mutant) -> None:
    result = run_mutant(item, mutant)
    assert result.verdict == "killed", f"{mutant.name} {result.verdict}: {result.detail}"
    assert result.killed_by == mutant.check, f"{mutant.name} was killed by {result.killed_by}, not by {mutant.check}"


def test_a_mutant_is_undone_after_the_block_wherever_it_was_bound() -> None:
    import kernels.gated_deltanet as package
    import kernels.gated_deltanet.chunk as chunk
    import kernels.gated_deltanet.verification as verification

    original = chunk.chunk_gated_delta_rule
    mutant = Mutant(
        "demo", "a demo", "kernels.gated_deltanet.chunk:chunk_gated_delta_rule", "q = q * scale", "q = q * 1.0", "o"
    )
    with applied(mutant):
        assert chunk.chunk_gated_delta_rule is not original
        assert verification.chunk_gated_delta_rule is chunk.chunk_gated_delta_rule
        assert package.chunk_gated_delta_rule is chunk.chunk_gated_delta_rule
        assert "q = q * 1.0" in inspect.getsource(chunk.chunk_gated_delta_rule)
    assert chunk.chunk_gated_delta_rule is original
    assert verification.chunk_gated_delta_rule is original and package.chunk_gated_delta_rule is original


def test_a_stale_mutant_is_an_error_that_names_the_fix() -> None:
    mutant = Mutant("stale", "gone", "kernels.situ.fused:situ_and_mul", "no such text", "x", "c")
    with pytest.raises(KernelError) as err, applied(mutant):
        pass
    assert "occurs 0 times" in err.value.message and "mutants.py" in err.value.hint


def test_a_mutant_whose_code_raises_is_crashed_not_killed() -> None:
    from kernels.registry import entry

    item = entry("gated-deltanet")
    mutant = Mutant(
        "raises",
        "a crash",
        "kernels.gated_deltanet.chunk:chunk_gated_delta_rule",
        "out_dtype = v.dtype",
        "raise RuntimeError('boom')",
        "chunk-vs-recurrent",
    )
    result = run_mutant(item, mutant)
    assert result.verdict == "crashed" and "boom" in result.detail and not result.killed


def test_gloo_ranks_run_the_mutated_code_not_a_copy() -> None:
    from kernels.registry import entry
    from kernels.verify import verify

    item = entry("megatron-tp")
    (mutant,) = [m for m in declared_mutants(item) if m.name == "f-backward-skips-all-reduce"]
    with applied(mutant):
        (check,) = verify(item, only=["gloo-processes"]).checks
    assert not check.passed and not check.raised, check.detail


def test_mutants_in_child_processes_report_like_in_process_and_a_dead_child_is_a_crash() -> None:
    # On CUDA the mutants run in child processes (a device-side assert ends a process's
    # CUDA context); the same runner on the CPU gives the verdicts the in-process run gives.
    from dataclasses import replace

    from kernels.isolated import run_isolated

    gqa = entry("gqa")
    first, second = declared_mutants(gqa)[:2]
    ghost = replace(second, name="no-such-mutant")  # the child cannot find it and dies
    runs: list[MutantRun] = []
    run_isolated([(gqa, first), (gqa, ghost), (gqa, second)], "cpu", runs.append)
    assert [r.mutant for r in runs] == [first.name, "no-such-mutant", second.name]
    assert runs[0].verdict == run_mutant(gqa, first).verdict == "killed"
    assert runs[1].verdict == "crashed" and "process died" in runs[1].detail
    assert runs[2].verdict == "killed"
