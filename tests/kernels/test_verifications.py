"""Every registered kernel's declared verification runs as a test and passes."""

from __future__ import annotations

import pytest

from kernels.registry import entries

WITH_CODE = [e for e in entries() if e.has_code]


@pytest.mark.parametrize("item", WITH_CODE, ids=[e.technique for e in WITH_CODE])
def test_declared_verification_passes(item) -> None:
    from kernels.verify import missing_requirements, verify

    missing = missing_requirements(item)
    if missing:
        pytest.skip(f"needs the optional dependency {', '.join(missing)}")
    run = verify(item)
    assert run.checks, f"{item.technique} declares no checks"
    report = "\n".join(
        f"  {c.name}: abs {c.max_abs:.3g} rel {c.max_rel:.3g} tol {c.tolerance:g} ({c.measure}) "
        f"{'ok' if c.passed else 'FAILED'} {c.detail}"
        for c in run.checks
    )
    print(f"{item.technique}\n{report}")
    assert run.passed, f"{item.technique} failed its verification:\n{report}"
