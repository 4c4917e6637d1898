"""The three backends of the contract suite, each holding the same graph: the embedded
store in a directory, ``oxigraph serve`` (with ``--union-default-graph``) and Virtuoso 7
from Debian, with the settings a new user has (see :func:`tests.servers.virtuoso_server`).

The servers are started once per session; the contract tests run on one xdist worker
(``xdist_group("contract")``) so that they share them.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.servers import KG, OxigraphServer, VirtuosoServer, oxigraph_server

BACKENDS = ("embedded", "oxigraph", "virtuoso")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/contract/" in item.nodeid.replace("\\", "/"):
            item.add_marker(pytest.mark.xdist_group("contract"))


@pytest.fixture(scope="session")
def oxigraph_union() -> Iterator[OxigraphServer]:
    """An Oxigraph server whose default graph is the union of its named graphs."""
    with oxigraph_server("--union-default-graph") as server:
        yield server


def run_kg(*args: str, store: str) -> subprocess.CompletedProcess[str]:
    """The real ``kg`` command on ``store``."""
    env = {**os.environ, "COLUMNS": "200", "KG_STORE": store}
    return subprocess.run([str(KG), *args], capture_output=True, text=True, env=env, timeout=600, check=False)


def clear(store_spec: str) -> None:
    """Drop every graph of TechKG's (and any staging graph) from a server."""
    from kg.store.remote import RemoteStore

    with RemoteStore.from_spec(store_spec) as store:
        for graph in store._all_graphs():
            if graph in store.named_graphs() or graph.value.startswith("urn:techkg:"):
                store.update(f"DROP SILENT GRAPH {graph}")


@pytest.fixture(scope="session")
def store_specs(virtuoso: VirtuosoServer, oxigraph_union: OxigraphServer,
                tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A ``--store`` value per backend. Virtuoso is reached without its Graph Store
    endpoint (uploads go in SPARQL updates), Oxigraph with it."""
    return {
        "embedded": str(tmp_path_factory.mktemp("contract") / "store"),
        "oxigraph": oxigraph_union.spec,
        "virtuoso": f"{virtuoso.base}/sparql",
    }


@pytest.fixture(scope="session")
def bulk_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An RDF dump for ``kg import rdf``: more triples than Virtuoso answers at once
    (ResultSetMaxRows 10000), with blank nodes, language tags and typed literals, and a
    few code repositories without a recent push."""
    path = tmp_path_factory.mktemp("bulk") / "orkg-extract.nt"
    ex = "http://example.org/orkg/"
    lines = []
    for i in range(10_500):
        lines.append(f'<{ex}paper{i}> <{ex}title> "Paper {i} \\"quoted\\" ü"@en .')
    for i in range(200):
        lines.append(f"<{ex}paper{i}> <{ex}contribution> _:c{i} .")
        lines.append(f'_:c{i} <{ex}score> "{i / 4}"^^<http://www.w3.org/2001/XMLSchema#decimal> .')
        lines.append(f"_:c{i} <{ex}uses> <https://w3id.org/techkg/id/technique/kda> .")
    schema, tkg, xsd = "https://schema.org/", "https://w3id.org/techkg/ns#", "http://www.w3.org/2001/XMLSchema#"
    for i, pushed in enumerate(("2019-03-31T23:00:00Z", "2021-07-01T00:00:00Z", "2021-07-15T08:30:00Z")):
        repo = f"<https://github.com/example/repo{i}>"  # stale: for stale-repositories and repositories
        lines.append(f"{repo} <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <{schema}SoftwareSourceCode> .")
        lines.append(f'{repo} <{schema}name> "example/repo{i}" .')
        lines.append(f'{repo} <{tkg}pushedAt> "{pushed}"^^<{xsd}dateTime> .')
        if i:
            lines.append(f'{repo} <{tkg}stars> "{100 * i}"^^<{xsd}integer> .')
    lines.append(f"<{ex}tool> <{tkg}repository> <https://github.com/example/repo1> .")
    lines.append(f'<{ex}tool> <http://www.w3.org/2004/02/skos/core#prefLabel> "ORKG tool"@en .')
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
