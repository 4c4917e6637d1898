"""Fixtures for the reference-kernel tests.

Each test process uses one torch thread (the suite runs two workers on two cores), and
imports Triton in interpreter mode before anything can import it compiled (Triton fixes
the mode at its first import, and torch._dynamo imports it).
"""

from __future__ import annotations

import importlib.util
import os

import pytest

torch = pytest.importorskip("torch")
torch.set_num_threads(1)

if importlib.util.find_spec("triton") is not None and os.environ.get("TRITON_INTERPRET") is None:
    os.environ["TRITON_INTERPRET"] = "1"
    try:
        import triton.language  # noqa: F401
    finally:
        del os.environ["TRITON_INTERPRET"]


@pytest.fixture
def setting():
    """The default check setting: CPU, float32, seed 42."""
    from kernels.measures import Setting

    return Setting()
