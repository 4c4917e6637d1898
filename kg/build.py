"""``kg build``: the ontology, the catalog and a reading list into the store, validated.

The three graphs are written in one transaction: either all of them change or none.
Graphs whose content is unchanged are not rewritten, so building twice is a no-op.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import pyoxigraph as ox

from kg.catalog import Catalog, catalog_triples, data_dir, load_catalog
from kg.graphs import CATALOG, ONTOLOGY, graph_name
from kg.reading import ImportReport, import_reading_list, known_status_triples
from kg.store.base import Activity, GraphStore
from kg.validate import Violation, validate_store

__all__ = ["BuildReport", "build", "default_reading_list", "ontology_triples"]


def default_reading_list() -> Path:
    """The reading list shipped with the package (same format as the user's file)."""
    return data_dir() / "reading-list.md"


def ontology_triples() -> list[ox.Triple]:
    raw = (resources.files("kg") / "ontology.ttl").read_bytes()
    return [ox.Triple(q.subject, q.predicate, q.object) for q in ox.parse(raw, format=ox.RdfFormat.TURTLE)]


@dataclass
class BuildReport:
    catalog: Catalog
    reading: ImportReport
    changed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    triples: int = 0
    violations: list[Violation] = field(default_factory=list)

    @property
    def techniques(self) -> int:
        return len(self.catalog.on_page())


def build(
    store: GraphStore,
    *,
    data: Path | None = None,
    reading_list: Path | None = None,
    validate: bool = True,
) -> BuildReport:
    """Load everything ``kg build`` loads. Bad input raises before anything is written."""
    catalog = load_catalog(data)
    reading_path = reading_list or default_reading_list()
    activity = Activity("kg build", used=[str(reading_path)])
    with store.transaction(activity) as tx:
        tx.replace_graph(ONTOLOGY, ontology_triples())
        tx.replace_graph(CATALOG, [*catalog_triples(catalog), *known_status_triples()])
        reading = import_reading_list(store, reading_path, catalog, tx=tx)
        activity.stats["techniques"] = len(catalog.on_page())
    report = BuildReport(
        catalog=catalog,
        reading=reading,
        changed=[graph_name(g) for g in tx.touched],
        unchanged=[graph_name(g) for g in tx.unchanged],
        triples=store.count(),
    )
    if validate:
        report.violations = validate_store(store)
    return report
