"""The layout of the code: no import circles between modules, every module of kg/ in a layer
of the import contracts, and contracts that really fail on a wrong import.

The contracts themselves are in ``pyproject.toml`` ([tool.importlinter]) and ``make test``
runs ``lint-imports`` on them; docs/architecture.md explains the layers. A circle counts
every import statement, those inside functions and under ``TYPE_CHECKING`` too: a module
that imports another only when a function runs still depends on it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.conftest import ROOT

PACKAGES = ("kg", "ingest", "exports", "queries", "kernels", "bench")
CONTRACTS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]


def import_circles(*packages: str) -> list[list[str]]:
    """Every circle of imports between modules of ``packages`` (as importable now): for each
    group of modules that import one another, its shortest circle, as the modules along it
    with the first again at the end."""
    import grimp
    import networkx as nx

    graph = grimp.build_graph(*packages, cache_dir=None)
    edges = nx.DiGraph()
    for module in graph.modules:
        edges.add_edges_from((module, imported) for imported in graph.find_modules_directly_imported_by(module))
    circles = []
    for group in nx.strongly_connected_components(edges):
        if len(group) < 2:
            continue
        inside = edges.subgraph(group)
        circles.append(min(([start, *nx.shortest_path(inside, nxt, start)]
                            for start in sorted(group) for nxt in inside.successors(start)), key=len))
    return sorted(circles)


def test_no_module_imports_back_a_module_that_imports_it() -> None:
    circles = import_circles(*PACKAGES)
    assert not circles, "import circles (move what both sides share to a module both can import):\n" + "\n".join(
        " -> ".join(circle) for circle in circles)


def _layer_modules() -> set[str]:
    (layers,) = [c for c in CONTRACTS if c["type"] == "layers"]
    return {part.strip() for layer in layers["layers"] for part in layer.replace("|", ":").split(":")}


def test_every_module_of_kg_belongs_to_a_layer_of_the_contracts() -> None:
    named = _layer_modules()
    children = {f"kg.{p.stem}" for p in (ROOT / "kg").glob("*.py") if p.stem != "__init__"}
    children |= {f"kg.{p.parent.name}" for p in (ROOT / "kg").glob("*/__init__.py")}
    missing = sorted(children - named)
    assert not missing, (f"{', '.join(missing)} in no layer of the 'layers' contract in pyproject.toml: add each to "
                         "the layer it belongs to (the core's, unless it uses the answer layer or a consumer)")


def _tree(tmp_path: Path) -> Path:
    """A copy of the packages' Python files and of pyproject.toml, for lint-imports to read."""
    for package in PACKAGES:
        for source in (ROOT / package).rglob("*.py"):
            target = tmp_path / source.relative_to(ROOT)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
    shutil.copyfile(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("lint-imports")
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run([str(exe), "--no-cache", "--no-logo", "pyproject.toml"], cwd=tree, env=env,
                          capture_output=True, text=True, timeout=300)


def test_the_contracts_hold_on_a_copy_of_the_tree(tmp_path: Path) -> None:
    proc = _lint(_tree(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize(("module", "line", "contract"), [
    ("kg/vocab.py", "import kg.cli.output", "Layers"),  # the core reaches the CLI
    ("exports/dot.py", "import kg.server.web.models", "Layers"),  # an exporter reaches the server
    ("kg/analytics/files.py", "import ingest.arxiv", "Layers"),  # two independent siblings
    ("queries/__init__.py", "import kg.analytics.answers", "The query library"),
    ("ingest/oai.py", "import torch", "torch is imported only inside kernels/"),
])
def test_a_wrong_import_breaks_the_contract_that_forbids_it(tmp_path: Path, module: str, line: str,
                                                            contract: str) -> None:
    tree = _tree(tmp_path)
    path = tree / module
    path.write_text(path.read_text(encoding="utf-8") + f"\n{line}  # noqa\n", encoding="utf-8")
    proc = _lint(tree)
    assert proc.returncode != 0
    broken = " ".join(proc.stdout.split())  # lint-imports folds long contract names
    assert f"{contract}" in broken and "BROKEN" in broken
    assert line.split()[-1] in broken  # the report names the import


def test_a_new_circle_is_found_and_printed(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    path = tree / "kg" / "graphs.py"  # the views read the graphs: a late import back is a circle all the same
    path.write_text(path.read_text(encoding="utf-8") + "\n\ndef _late() -> None:\n    import kg.views  # noqa\n",
                    encoding="utf-8")
    script = "import json; from tests.test_architecture import import_circles; print(json.dumps(import_circles('kg')))"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), str(ROOT)])}
    proc = subprocess.run([sys.executable, "-c", script], cwd=tree, env=env, capture_output=True, text=True,
                          timeout=300, check=True)
    circles = json.loads(proc.stdout)
    assert any("kg.graphs" in circle and "kg.views" in circle for circle in circles), (circles, proc.stderr)
    assert all(circle[0] == circle[-1] for circle in circles)
