"""Every benchmark explains itself: ``python -m bench.NAME --help`` prints its usage and
exits 0 (``bench.corpus --help`` used to end in a traceback)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MODULES = sorted(p.stem for p in (ROOT / "bench").glob("*.py") if not p.stem.startswith("_"))


@pytest.mark.parametrize("module", ["bench", *(f"bench.{m}" for m in MODULES)])
def test_each_benchmark_prints_its_usage_for_help(module: str) -> None:
    result = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True, text=True,
                            timeout=120, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "usage" in result.stdout.lower() and "Traceback" not in result.stderr
