"""Declared verification of two Triton kernels.

Compared: a fused row softmax and a tiled matmul written in Triton against torch loops,
for sizes that are not multiples of the block (so the masks matter). On the CPU the
kernels run in Triton's interpreter (TRITON_INTERPRET=1); on a GPU they are compiled.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from kernels.checks import Check, Verification
from kernels.measures import Outcome, Setting, compare_all

#: (rows, cols, scale): the last has logits of several hundred, where e^x overflows
#: float32 unless the row maximum is subtracted first.
SOFTMAX = ((37, 100, 3.0), (5, 1000, 3.0), (64, 13, 3.0), (7, 45, 300.0))
MATMUL = ((45, 37, 70), (16, 16, 16), (100, 3, 9))  # M, K, N


def _interpreter_ready(s: Setting) -> bool:
    """False when this process already imported Triton in compiled mode but the check
    needs the CPU interpreter (Triton fixes the mode at its first import)."""
    if s.device.type == "cuda" or "triton" not in sys.modules:
        return True
    from kernels.triton_lang.kernels import interpreting

    return interpreting()


_ISOLATED: dict[tuple[str, str], Outcome] = {}


def _isolated(name: str) -> Outcome:
    """Run the checks in one fresh Python process with TRITON_INTERPRET=1, under the
    mutants applied here (once per process and set of mutants; the results are kept)."""
    from kernels.mutation import active

    mutants = json.dumps([dataclasses.asdict(m) for m in active()])
    if (name, mutants) not in _ISOLATED:
        root = Path(__file__).resolve().parents[2]
        code = (
            "import json, sys; from kernels.measures import Setting; from kernels.mutation import Mutant, applied; "
            "from kernels.triton_lang import verification as v; "
            "planted = [Mutant(**m) for m in json.loads(sys.argv[1])]\n"
            "with applied(planted):\n"
            "    print(json.dumps({n: [o.max_abs, o.max_rel, o.detail] for n, o in "
            "((n, getattr(v, n)(Setting())) for n in v.CHECKED)}))"
        )
        env = {
            **os.environ,
            "TRITON_INTERPRET": "1",
            "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")])),
        }
        proc = subprocess.run(
            [sys.executable, "-c", code, mutants], capture_output=True, text=True, env=env, timeout=600
        )
        if proc.returncode != 0:
            raise RuntimeError(f"the isolated Triton check failed: {proc.stderr.strip().splitlines()[-1:]}")
        for key, (max_abs, max_rel, detail) in json.loads(proc.stdout.strip().splitlines()[-1]).items():
            _ISOLATED[key, mutants] = Outcome(
                max_abs,
                max_rel,
                detail + " (run in a fresh process: this one had already imported Triton in compiled mode)",
            )
    return _ISOLATED[name, mutants]


def _interpreted(check: Callable[[Setting], Outcome]) -> Callable[[Setting], Outcome]:
    def run(s: Setting) -> Outcome:
        return check(s) if _interpreter_ready(s) else _isolated(check.__name__)

    run.__name__ = check.__name__
    return run


def softmax_matches(s: Setting) -> Outcome:
    from kernels.triton_lang.kernels import softmax
    from kernels.triton_lang.naive import naive_softmax

    pairs = []
    for i, (rows, cols, scale) in enumerate(SOFTMAX):
        x = s.randn(rows, cols, gen=s.generator(i), scale=scale)
        pairs.append((f"softmax {rows}x{cols} scale {scale:g}", naive_softmax(x), softmax(x)))
    return compare_all(pairs)


def matmul_matches(s: Setting) -> Outcome:
    from kernels.triton_lang.kernels import matmul
    from kernels.triton_lang.naive import naive_matmul

    pairs = []
    for i, (M, K, N) in enumerate(MATMUL):
        gen = s.generator(10 + i)
        a, b = s.randn(M, K, gen=gen), s.randn(K, N, gen=gen)
        pairs.append((f"matmul {M}x{K}x{N}", naive_matmul(a, b), matmul(a, b)))
    return compare_all(pairs)


CHECKED = ("softmax_matches", "matmul_matches")

VERIFICATION = Verification(
    "triton",
    __doc__ or "",
    (
        Check(
            "softmax",
            "The Triton fused softmax equals a row-by-row softmax, also for widths that are not a power of two.",
            _interpreted(softmax_matches),
            tolerance=1e-6,
        ),
        Check(
            "matmul",
            "The Triton tiled matmul equals tile-by-tile torch matmul, with edges that do not fill a block.",
            _interpreted(matmul_matches),
            tolerance=1e-5,
        ),
    ),
    shapes=tuple(f"softmax {r}x{c}" for r, c, _ in SOFTMAX) + tuple(f"matmul {m}x{k}x{n}" for m, k, n in MATMUL),
    requires=("triton",),
)
