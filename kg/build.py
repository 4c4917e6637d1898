"""``kg build``: the ontology and the catalog into the store, the reading list seeded or
replaced, the result validated.

- The ontology and catalog graphs are TechKG's (package-owned): every build writes them
  from the package's files, and each records the files it was made from.
- The reading list is the user's. The bundled one seeds a store that has none; after
  that, only an explicit ``kg build -r FILE`` (or ``kg import reading-list FILE``)
  replaces it, on purpose and with a snapshot first.
- Nothing changed, nothing done: a hash of every input (the catalog files, the ontology,
  TechKG's own modules that turn them into triples, and the ``-r`` file) is recorded in the
  provenance graph; a build whose inputs hash the same skips parsing and writing, and
  validation answers from its cache. ``force=True`` builds anyway.

Everything a build writes goes in one transaction: either all of it changes or none.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import pyoxigraph as ox

from kg.graphs import CATALOG, ONTOLOGY, PROVENANCE, READING_LIST, graph_name
from kg.store.base import Activity, GraphStore, Transaction
from kg.store.provenance import source_node
from kg.validate import Violation, cache_for, validate_store
from kg.version import __version__
from kg.vocab import TKG, text

if TYPE_CHECKING:  # a build with nothing to do parses nothing, so it imports neither
    from kg.catalog import Catalog
    from kg.reading import ImportReport

__all__ = [
    "BuildReport",
    "build",
    "build_inputs",
    "catalog_counts",
    "catalog_sources",
    "default_reading_list",
    "ontology_triples",
    "store_summary",
    "up_to_date",
]


def data_dir() -> Path:
    """The catalog shipped with the package (as kg.catalog.data_dir, without importing it)."""
    return Path(str(resources.files("kg") / "data"))


def default_reading_list() -> Path:
    """The reading list shipped with the package (same format as the user's file)."""
    return data_dir() / "reading-list.md"


def ontology_path() -> Path:
    return Path(str(resources.files("kg") / "ontology.ttl"))


def ontology_triples() -> list[ox.Triple]:
    raw = ontology_path().read_bytes()
    return [ox.Triple(q.subject, q.predicate, q.object) for q in ox.parse(raw, format=ox.RdfFormat.TURTLE)]


def catalog_sources(data: Path | None = None) -> list[Path]:
    """The TOML files a catalog is made from."""
    root = data or data_dir()
    return sorted([*root.glob("*.toml"), *(root / "techniques").glob("*.toml")])


def build_inputs(data: Path | None = None, reading_list: Path | None = None, *, extra: Sequence[Path] = ()) -> str:
    """One hash of everything a build reads: the catalog files, the ontology, the modules
    of TechKG that turn them into triples, the reading list given with ``-r`` and
    ``extra`` files (the CLI adds the kernel registry it records). Reading and hashing
    them takes a few milliseconds; parsing them is what a no-op skips."""
    digest = hashlib.sha256(f"techkg {__version__}\n".encode())
    code = Path(__file__).parent
    files = [*catalog_sources(data), ontology_path(), *sorted(code.glob("*.py")), *extra]
    if reading_list is not None:
        files.append(reading_list)
    for path in files:
        digest.update(f"{path.name}\n".encode())
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(b"(unreadable)")
    return digest.hexdigest()


def _recorded_inputs(store: GraphStore) -> str | None:
    rows = store.select(f"SELECT ?h WHERE {{ GRAPH {PROVENANCE} {{ {CATALOG} tkg:buildInputs ?h }} }} LIMIT 1")
    value = rows.rows[0]["h"] if rows.rows else None
    return value.value if isinstance(value, ox.Literal) else None


def up_to_date(store: GraphStore, inputs: str) -> bool:
    """Whether the last build read exactly these inputs, and left a reading list."""
    return _recorded_inputs(store) == inputs and store.count(READING_LIST) > 0


@dataclass
class ReadingSummary:
    """The reading list after a build, counted as every surface counts it (:mod:`kg.counts`):
    ``entries`` papers with a status, ``listed`` of them from the list file (``source``) and
    ``added`` one by one."""

    entries: int = 0
    read: int = 0
    to_read: int = 0
    with_note: int = 0
    categories: int = 0
    source: str | None = None
    listed: int = 0
    added: int = 0


@dataclass
class BuildReport:
    techniques: int
    lineage_only_parents: int
    categories: int
    #: Every paper in the graph, and those of the catalog's bibliography (kg.counts).
    papers: int
    lineage_edges: int
    reading: ReadingSummary
    catalog_papers: int = 0
    #: The import, when this build imported a reading list (seeded or replaced).
    imported: ImportReport | None = None
    catalog: Catalog | None = None
    up_to_date: bool = False
    changed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    triples: int = 0
    violations: list[Violation] = field(default_factory=list)


def catalog_counts(store: GraphStore) -> dict[str, int]:
    """Techniques on the comparison page, lineage-only parents, categories, papers and
    lineage edges (each typed derivation counts once, however many children share a parent)."""

    def count(pattern: str) -> int:
        value = store.select(f"SELECT (COUNT(DISTINCT ?t) AS ?n) WHERE {{ {pattern} }}").rows[0]["n"]
        return int(value.value) if isinstance(value, ox.Literal) else 0

    return {
        "techniques": count("?t a tkg:Technique ; tkg:onComparisonPage true"),
        "lineage_only_parents": count("?t a tkg:Technique ; tkg:onComparisonPage false"),
        "categories": count("?t a tkg:TechniqueCategory"),
        "papers": count("?t a bibo:Document"),
        "lineage_edges": count("?child prov:qualifiedDerivation ?t"),
    }


def store_summary(store: GraphStore) -> tuple[dict[str, int], ReadingSummary]:
    """The counts a build reports, read from the graph (:mod:`kg.counts`: the same counts as
    ``kg stats`` and the workbench)."""
    from kg.counts import catalog_paper_count, reading_counts

    counts = {**catalog_counts(store), "catalog_papers": catalog_paper_count(store)}
    r = reading_counts(store)
    sources = store.select(
        f"SELECT ?src WHERE {{ GRAPH {PROVENANCE} {{ {READING_LIST} prov:hadPrimarySource ?src }} }}"
    ).records()
    reading = ReadingSummary(r.papers, r.read, r.to_read, r.with_note, r.categories,
                             str(sources[0]["src"]) if sources else None, r.listed, r.added)
    return counts, reading


def build(
    store: GraphStore,
    *,
    data: Path | None = None,
    reading_list: Path | None = None,
    validate: bool = True,
    accept_counts: bool = False,
    force: bool = False,
    extra_inputs: Sequence[Path] = (),
    also: Callable[[Transaction], None] | None = None,
) -> BuildReport:
    """Build the graph (see the module documentation). Bad input raises before anything is
    written; ``reading_list`` replaces the user's list (counts checked against its header
    unless ``accept_counts``). ``also`` adds writes of the caller's to the build's one
    transaction (the CLI records the kernel registry, one of ``extra_inputs``), so that a
    build killed at any moment never leaves the inputs recorded as built without them."""
    inputs = build_inputs(data, reading_list, extra=extra_inputs)
    if not force and up_to_date(store, inputs):
        counts, reading = store_summary(store)
        report = BuildReport(counts["techniques"], counts["lineage_only_parents"], counts["categories"],
                             counts["papers"], counts["lineage_edges"], reading,
                             catalog_papers=counts["catalog_papers"], up_to_date=True,
                             triples=store.count(),
                             unchanged=[graph_name(g) for g in (ONTOLOGY, CATALOG, READING_LIST)])
    else:
        report = _write(store, data=data, reading_list=reading_list, inputs=inputs, accept_counts=accept_counts,
                        also=also)
    if validate:
        report.violations = validate_store(store, cache=cache_for(store))
    return report


def _write(store: GraphStore, *, data: Path | None, reading_list: Path | None, inputs: str,
           accept_counts: bool, also: Callable[[Transaction], None] | None) -> BuildReport:
    from kg.catalog import catalog_triples, derivation_iri, load_catalog
    from kg.reading import import_reading_list, known_status_triples

    catalog = load_catalog(data)
    seed = reading_list is None and store.count(READING_LIST) == 0
    activity = Activity("kg build", used=[str(p) for p in catalog_sources(data)])
    imported = None
    with store.transaction(activity) as tx:
        tx.replace_graph(ONTOLOGY, ontology_triples(), sources=[str(ontology_path())])
        tx.replace_graph(CATALOG, [*catalog_triples(catalog), *known_status_triples()],
                         sources=[str(p) for p in catalog_sources(data)])
        if reading_list is not None or seed:
            path = reading_list or default_reading_list()
            activity.used.append(str(path))
            imported = import_reading_list(store, path, catalog, tx=tx, accept_counts=accept_counts)
        activity.stats["techniques"] = len(catalog.on_page())
        # Which catalog file defines each node, so that kg provenance cites the file of a fact
        # (lineage.toml for the facts of a lineage edge: kg.provenance).
        defined = [*((t.where.path, t.iri) for t in catalog.techniques.values()),
                   *((p.where.path, p.iri) for p in catalog.papers.values()),
                   *((e.where.path, derivation_iri(e)) for e in catalog.edges)]
        stamps = [f"{CATALOG} {TKG.buildInputs} {text(inputs, None)} ."]
        stamps += [f"{source_node(path)} {TKG.defines} {node} ." for path, node in defined]
        tx.update_after(f"DELETE WHERE {{ GRAPH {PROVENANCE} {{ {CATALOG} tkg:buildInputs ?h }} }} ;\n"
                        f"DELETE WHERE {{ GRAPH {PROVENANCE} {{ ?file tkg:defines ?node }} }} ;\n"
                        f"INSERT DATA {{ GRAPH {PROVENANCE} {{ {' '.join(stamps)} }} }}")
        if also is not None:
            also(tx)
    counts, reading = store_summary(store)
    if imported is not None:
        reading.source = imported.path
    on_page = len(catalog.on_page())
    return BuildReport(
        techniques=on_page,
        lineage_only_parents=len(catalog.techniques) - on_page,
        categories=len(catalog.categories),
        papers=counts["papers"],
        catalog_papers=len(catalog.papers),
        lineage_edges=len(catalog.edges),
        reading=reading,
        imported=imported,
        catalog=catalog,
        changed=[graph_name(g) for g in tx.touched],
        unchanged=[graph_name(g) for g in tx.unchanged],
        triples=store.count(),
    )

