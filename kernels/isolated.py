"""Mutants on a GPU, run in child processes that a lost CUDA context cannot take down.

On the CPU a mutant that indexes out of range raises, the check is reported as broken and
the next mutant runs. On a GPU the same bug is a device-side assert, and after one the
process's CUDA context refuses every later call: the mutants after it would all "crash".
So on CUDA the mutants run in a child process (``python -m kernels.isolated DEVICE``,
the planned mutants as JSON on stdin, one :class:`~kernels.mutation.MutantRun` per line
on stdout). The child checks after each mutant that CUDA still answers and stops with
:data:`LOST` when it does not; the parent then starts a fresh child for the rest. A child
that dies in the middle of a mutant records that mutant as crashed. A crash never counts
as a kill, here as in-process.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from collections.abc import Callable, Sequence

from kernels.mutation import Mutant, MutantRun, declared_mutants, run_mutant
from kernels.registry import Entry, entry

__all__ = ["LOST", "run_isolated"]

#: The child's exit status after a mutant left the CUDA context unusable.
LOST = 3


def run_isolated(planned: Sequence[tuple[Entry, Mutant]], device: str, on_result: Callable[[MutantRun], None]) -> None:
    """Run ``planned`` on ``device`` in child processes, calling ``on_result`` with each
    mutant's run in order."""
    todo = list(planned)
    while todo:
        names = json.dumps([[e.technique, m.name] for e, m in todo])
        with subprocess.Popen([sys.executable, "-m", "kernels.isolated", device], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True) as child:
            assert child.stdin is not None and child.stdout is not None
            child.stdin.write(names)
            child.stdin.close()
            for line in child.stdout:
                on_result(MutantRun(**json.loads(line)))
                todo.pop(0)
            status = child.wait()
        if todo and status != LOST:  # the child died inside todo[0]
            e, m = todo.pop(0)
            on_result(_crashed(e, m, f"the check's process died (exit status {status})"))


def _crashed(e: Entry, m: Mutant, detail: str) -> MutantRun:
    return MutantRun(e.technique, m.name, m.bug, m.check, "crashed", "", float("nan"), float("nan"), detail, 0.0,
                     m.kind)


def _cuda_answers() -> bool:
    import torch

    try:
        torch.cuda.synchronize()
        return bool(torch.ones(1, device="cuda").sum().item() == 1.0)
    except Exception:  # noqa: BLE001 - any error means the context is gone
        return False


def _child(device: str) -> int:
    for technique, name in json.loads(sys.stdin.read()):
        e = entry(technique)
        m = next(m for m in declared_mutants(e) if m.name == name)
        try:
            run = run_mutant(e, m, device=device)
        except Exception as exc:  # noqa: BLE001 - raised outside a check, e.g. by a lost context
            run = _crashed(e, m, f"raised {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
        print(json.dumps(dataclasses.asdict(run)), flush=True)
        if device.startswith("cuda") and not _cuda_answers():
            return LOST
    return 0


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1]))
