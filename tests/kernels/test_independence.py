"""A reference form never shares code with the structured form it checks.

Read from the import statements of every kernel folder:

- a ``naive.py`` takes code only from the pinned formulas (``kernels.formulas``), from
  other naive forms and from the simulation and memory infrastructure; from any other
  module it takes data alone: constants, and classes whose only methods are plumbing
  (packing tensors in and out);
- no structured form takes a function or class from ``kernels.formulas`` or from a naive
  form (constants are fine: SiTU's β is one number, written once).

The only exception is the workload a distributed reference trains (FSDP's toy model):
it is the input both sides are given, not the technique either side implements.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

from kernels.registry import entries

ROOT = Path(__file__).resolve().parents[2] / "kernels"
WITH_CODE = [e for e in entries() if e.has_code]
#: Modules a naive form may take code from.
REFERENCE_SIDE = ("kernels.formulas", "kernels.memory", "kernels.simulated")
#: Methods a shared data class may have: packing its tensors in and out, and its size.
PLUMBING = {"tensors", "from_tensors", "with_tensors", "count", "numel", "add"}
#: The workload a distributed reference trains: given to both sides alike.
WORKLOAD = {("kernels.fsdp1.model", "loss")}


def _imports(path: Path) -> list[tuple[str, str]]:
    """(module, name) for every ``from kernels... import name`` in a file, at any depth."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("kernels"):
            found += [(node.module or "", alias.name) for alias in node.names]
    return found


def _plumbing_only(cls: type) -> list[str]:
    own = [n for n, v in vars(cls).items() if not n.startswith("__") and (callable(v) or isinstance(v, property))]
    return [n for n in own if n not in PLUMBING and not isinstance(vars(cls)[n], staticmethod | classmethod)] + [
        n for n, v in vars(cls).items() if isinstance(v, staticmethod | classmethod) and n not in PLUMBING
    ]


@pytest.mark.parametrize("item", WITH_CODE, ids=[e.technique for e in WITH_CODE])
def test_a_naive_form_takes_no_code_from_the_structured_side(item) -> None:  # type: ignore[no-untyped-def]
    naive = ROOT / item.module.removeprefix("kernels.") / "naive.py"
    problems = []
    for module, name in _imports(naive):
        if module in REFERENCE_SIDE or module.endswith(".naive") or (module, name) in WORKLOAD:
            continue
        value = getattr(importlib.import_module(module), name)
        if inspect.isclass(value):
            extra = _plumbing_only(value)
            if extra:
                problems.append(f"{module}.{name} carries code: {extra}")
        elif callable(value):
            problems.append(f"{module}.{name} is a function of the structured side")
    assert not problems, f"{naive.relative_to(ROOT.parent)}: " + "; ".join(problems)


def _structured_files() -> list[Path]:
    skip = {"naive.py", "verification.py", "mutants.py", "__init__.py"}
    return sorted(p for p in ROOT.rglob("*.py") if p.name not in skip and p.parent != ROOT) + [ROOT / "experts.py"]


@pytest.mark.parametrize("path", _structured_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_structured_form_takes_code_from_a_reference(path: Path) -> None:
    problems = []
    for module, name in _imports(path):
        if module == "kernels.formulas" or module.endswith(".naive"):
            value = getattr(importlib.import_module(module), name)
            if inspect.isfunction(value) or inspect.isclass(value):
                problems.append(f"{module}.{name}")
    assert not problems, f"{path.relative_to(ROOT.parent)} uses reference code: {problems}"


def test_the_audit_sees_a_shared_helper() -> None:
    """The rule bites: today's naive MLA written with the absorbed form's RoPE would fail it."""
    from kernels.mla import config

    assert callable(config.apply_rope) and not inspect.isclass(config.apply_rope)
    source = "from kernels.mla.config import MLAConfig, apply_rope\n"
    imported = [
        (n.module, a.name) for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ImportFrom) for a in n.names
    ]
    flagged = [name for module, name in imported if callable(getattr(importlib.import_module(module), name))]
    assert flagged == ["MLAConfig", "apply_rope"]
    assert _plumbing_only(config.MLAConfig) == [] and "logits" not in PLUMBING
