"""Staging: the facts the analytics tables are made of, pulled out of the store in bulk.

Every named graph (except the ontology and the provenance graph) is read as *facts*:
rows ``(graph, subject, key, object, n)`` where ``key`` names one thing the tables use,
such as ``dcterms:title``, ``a:bibo:Document`` (the subject has that type),
``skos:prefLabel@zh`` or ``rdf:_n`` (a member of an ordered list such as an author list;
``n`` is its position).

For each graph a cheap probe finds which keys it holds; then one SELECT per graph (or,
for a big graph, one per key, so that several run side by side) is written by the store
itself as a SPARQL TSV results file (:meth:`GraphStore.select_to_file`; TSV keeps each
term whole, with its datatype or language), and DuckDB reads all the files in one
``INSERT ... SELECT`` from ``read_csv``. On the embedded
store no row passes through Python (a remote store's generic path serialises its rows
once). The type keys are made in SQL from one reading of each graph's ``rdf:type``
triples.

A graph the store keeps an *import copy* of (its content as N-Triples lines, written
when ``kg import rdf`` loaded it whole: :mod:`kg.store.copies`) is read from that file
instead, once, by Arrow (:mod:`kg.analytics.copyrows`): no term passes through the store's
string table, which at 9M triples costs about 45 µs a row. Its facts stream straight into
``staging.facts``; its ``rdf:type`` rows join the store's for the type keys; its lines are
counted on the way, and a copy with more lines than triples (it repeats a line) has its
repeated rows dropped afterwards (:func:`_drop_repeats`). A copy's rows equal the rows the
TSV path makes of the same graph, column for column.

Why SELECTs and not ``Store.dump``: reading the store costs one dictionary lookup per
term decoded, and a dump decodes every term of every triple (predicate and graph too)
on one thread per graph; on a 1.3M-triple graph the dump took 24 s of CPU against 16-19 s
for the per-key SELECTs, which also run side by side.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from kg.analytics.files import staged_graphs, temp_table
from kg.catalog import DIMENSIONS
from kg.vocab import LINEAGE_RELATIONS, NS

if TYPE_CHECKING:
    import duckdb
    import pyarrow as pa
    import pyoxigraph as ox

    from kg.analytics.copyrows import Predicates
    from kg.store.base import GraphStore

__all__ = [
    "CLASSES",
    "Copy",
    "DOCUMENT_TYPES",
    "KEYS",
    "MAX_AUTHOR_POSITION",
    "PREDICATES",
    "REPOSITORY_COUNTS",
    "SPLIT_ABOVE",
    "Key",
    "Task",
    "expand",
    "positions",
    "probe",
    "stage",
    "staged_graphs",
]

#: Positions read from ordered lists such as author lists (rdf:_1 ... rdf:_N).
MAX_AUTHOR_POSITION = 2000
_MEMBER = "rdf:_n"
#: The key of every rdf:type of a bibo:Document.
DOCUMENT_TYPES = "types"

#: A repository's counts (and last push), which each of its snapshots records too.
REPOSITORY_COUNTS: tuple[str, ...] = (
    "tkg:stars", "tkg:forks", "tkg:openIssues", "tkg:watchers", "tkg:contributors", "tkg:pushedAt")

#: Classes whose instances the tables need: the key is ``a:<class>``.
CLASSES: tuple[str, ...] = (
    "tkg:Technique",
    "tkg:TechniqueCategory",
    "bibo:Document",
    "bibo:AcademicArticle",
    "fabio:Preprint",
    "bibo:Report",
    "fabio:BlogPost",
    "bibo:Webpage",
    "foaf:Person",
    "foaf:Organization",
    "foaf:Group",
    "schema:SoftwareSourceCode",
    "tkg:RepositorySnapshot",
    "tkg:ReadingListCategory",
    "tkg:ReadingEvent",
    "tkg:ReadingRemoval",
    "tkg:ReferenceKernel",
    "tkg:VerificationRun",
    "tkg:CheckResult",
    "prov:Derivation",
)

#: Predicates whose values the tables need: the key is the prefixed name.
PREDICATES: tuple[str, ...] = (
    # techniques and categories
    "skos:notation",
    "skos:broader",
    "skos:definition",
    "tkg:position",
    "tkg:onComparisonPage",
    "tkg:firstAuthor",
    "tkg:responsibleTeam",
    "tkg:organization",
    "dcterms:date",
    "tkg:dateNote",
    "tkg:primaryPaper",
    "tkg:repository",
    "tkg:introducesTechnique",
    "tkg:extendsTechnique",
    "tkg:usesTechnique",
    "tkg:evaluatesTechnique",
    "tkg:mentionsTechnique",
    "tkg:headlineResult",
    "tkg:headlineConditional",
    "tkg:addedBy",
    *(prop.value.replace(NS["tkg"].base, "tkg:") for _key, prop, _label in DIMENSIONS),
    # lineage
    *(f"tkg:{relation}" for relation in LINEAGE_RELATIONS),
    "prov:qualifiedDerivation",
    "prov:wasDerivedFrom",
    "prov:entity",
    "tkg:relation",
    "tkg:basis",
    "rdfs:comment",
    # papers, people, organisations
    "dcterms:title",
    "dcterms:issued",
    "dcterms:creator",
    "tkg:venue",
    "tkg:arxivId",
    "bibo:doi",
    "cito:cites",
    "foaf:page",
    "skos:altLabel",
    "schema:license",
    "tkg:arxivPrimaryCategory",
    "tkg:citationKey",
    "tkg:noteOf",
    # citations (kg ingest citations): intents, influence, contexts, Semantic Scholar's counts
    "cito:usesMethodIn",
    "cito:obtainsBackgroundFrom",
    "cito:usesConclusionsFrom",
    "tkg:citesInfluentially",
    "cito:hasCitingEntity",
    "cito:hasCitedEntity",
    "tkg:citationContext",
    "rdf:value",
    "tkg:intent",
    "tkg:recommendedFor",
    "tkg:citationCount",
    "tkg:referenceCount",
    "tkg:influentialCitationCount",
    "bibo:authorList",
    "foaf:name",
    "schema:affiliation",
    "schema:parentOrganization",
    "rdfs:label",
    # repositories
    "schema:name",
    *REPOSITORY_COUNTS,
    "tkg:archived",
    "tkg:latestRelease",
    "tkg:latestReleaseDate",
    "tkg:snapshot",
    "prov:generatedAtTime",
    # reading
    "tkg:readingCategory",
    "tkg:listedStatus",
    "tkg:readingStatus",
    "tkg:statusChangedAt",
    "tkg:addedAt",
    "tkg:hasNote",
    "tkg:deletedAt",
    "tkg:paper",
    "tkg:status",
    "tkg:previousStatus",
    "tkg:via",
    "prov:atTime",
    # kernels
    "tkg:referenceKernel",
    "tkg:kernelForm",
    "tkg:modulePath",
    "tkg:rationale",
    "tkg:verifies",
    "tkg:passed",
    "tkg:torchVersion",
    "tkg:device",
    "tkg:dtype",
    "prov:startedAtTime",
    "prov:endedAtTime",
    "tkg:check",
    "tkg:claim",
    "tkg:maxAbsError",
    "tkg:maxRelError",
    "tkg:tolerance",
    "tkg:durationSeconds",
)


def _iri(name: str) -> str:
    prefix, local = name.split(":", 1)
    return f"<{NS[prefix].base}{local}>"


@dataclass(frozen=True)
class Key:
    """One kind of fact and the SPARQL pattern (binding ?s, ?o, ?n) that yields it."""

    name: str
    predicate: str
    pattern: str


def _keys() -> dict[str, Key]:
    keys: dict[str, Key] = {}
    for cls in CLASSES:
        keys["a:" + cls] = Key("a:" + cls, "rdf:type", f"?s a {_iri(cls)}")
    for pred in PREDICATES:
        keys[pred] = Key(pred, pred, f"?s {_iri(pred)} ?o")
    label = _iri("skos:prefLabel")
    keys["skos:prefLabel"] = Key(
        "skos:prefLabel", "skos:prefLabel", f'?s {label} ?o FILTER(!LANGMATCHES(LANG(?o), "zh"))'
    )
    keys["skos:prefLabel@zh"] = Key(
        "skos:prefLabel@zh", "skos:prefLabel", f'?s {label} ?o FILTER(LANGMATCHES(LANG(?o), "zh"))'
    )
    # Every type of a document (the bibliography lists them all).
    keys[DOCUMENT_TYPES] = Key(DOCUMENT_TYPES, "rdf:type", f"?s a {_iri('bibo:Document')} , ?o")
    # List members: the pattern is made per graph from the positions it uses (see expand).
    keys[_MEMBER] = Key(_MEMBER, "rdf:_1", "")
    return keys


#: Every key, by name.
KEYS: dict[str, Key] = _keys()

#: What the store is asked for instead of the type keys: every rdf:type triple, once. The
#: class keys (``a:<class>``) and :data:`DOCUMENT_TYPES` are made from these rows in SQL
#: (:func:`stage`), as the patterns in :data:`KEYS` define them.
_TYPE = "rdf:type"
_TYPE_PATTERN = "?s a ?o"


def positions(store: GraphStore, graph: ox.NamedNode) -> list[int]:
    """The list positions (rdf:_1, rdf:_2, ...) used in ``graph``, up to MAX_AUTHOR_POSITION."""
    values = " ".join(f"(<{NS['rdf'].base}_{n}> {n})" for n in range(1, MAX_AUTHOR_POSITION + 1))
    rows = store.select(
        f"SELECT ?n WHERE {{ VALUES (?m ?n) {{ {values} }} "
        f"FILTER EXISTS {{ GRAPH {graph} {{ ?s ?m ?o }} }} }}"
    )
    return sorted(int(row["n"].value) for row in rows)  # type: ignore[union-attr]


def _member_patterns(store: GraphStore, graph: ox.NamedNode, split: bool) -> list[str]:
    rdf = NS["rdf"].base
    found = positions(store, graph)
    if split:
        return [f"?s <{rdf}_{n}> ?o BIND({n} AS ?n)" for n in found]
    values = " ".join(f"(<{rdf}_{n}> {n})" for n in found)
    return [f"VALUES (?member ?n) {{ {values} }} ?s ?member ?o"] if found else []


def probe(store: GraphStore, graph: ox.NamedNode) -> list[Key]:
    """The keys ``graph`` holds at least one fact of, found with one cheap EXISTS query."""
    predicates = sorted({k.predicate for k in KEYS.values() if k.predicate != "rdf:type"})
    rows = store.select(
        f"""SELECT ?x WHERE {{
              {{ VALUES ?x {{ {" ".join(_iri(p) for p in predicates)} }}
                 FILTER EXISTS {{ GRAPH {graph} {{ ?s ?x ?o }} }} }}
              UNION
              {{ VALUES ?x {{ {" ".join(_iri(c) for c in CLASSES)} }}
                 FILTER EXISTS {{ GRAPH {graph} {{ ?s a ?x }} }} }} }}"""
    )
    present = set()
    for row in rows:
        iri = row["x"].value  # type: ignore[union-attr]
        for prefix, ns in NS.items():
            if iri.startswith(ns.base):
                present.add(f"{prefix}:{iri[len(ns.base) :]}")
                break
    return [
        k
        for k in KEYS.values()
        if (
            (k.name.removeprefix("a:") if k.name != DOCUMENT_TYPES else "bibo:Document") in present
            if k.predicate == "rdf:type"
            else k.predicate in present
        )
    ]


#: Graphs with more triples than this are read one key at a time, several keys side by
#: side; smaller ones in a single query.
SPLIT_ABOVE = 20_000


@dataclass(frozen=True)
class Task:
    """One extraction query and the TSV results file (columns s, k, o, n) it writes."""

    graph: ox.NamedNode
    parts: tuple[tuple[str, str], ...]  # (key name, pattern)
    path: Path

    @property
    def key(self) -> str | None:
        """The one key of a single-key task (its rows leave ?k unbound: no work per row)."""
        return self.parts[0][0] if len(self.parts) == 1 else None

    @property
    def sparql(self) -> str:
        if self.key is not None:
            branches = self.parts[0][1]
        else:
            branches = " UNION ".join(
                f'{{ {pattern} BIND("{name}" AS ?k) }}' for name, pattern in self.parts
            )
        return f"SELECT ?s ?k ?o ?n WHERE {{ GRAPH {self.graph} {{ {branches} }} }}"


def expand(
    store: GraphStore,
    graphs: Sequence[ox.NamedNode],
    folder: Path,
    sizes: Mapping[str, int | None] | None = None,
) -> list[Task]:
    """The extraction tasks for ``graphs``: one per graph, or, for a graph of more than
    :data:`SPLIT_ABOVE` triples (by ``sizes``), one per key present in it (and one per
    list position)."""
    tasks: list[Task] = []
    for graph in graphs:
        size = (sizes or {}).get(graph.value)
        split = bool(size and size > SPLIT_ABOVE)
        keys = probe(store, graph)
        # Every type key comes from one reading of the graph's rdf:type triples: each
        # subject decoded once, not once per class and again for its document types.
        parts = [(_TYPE, _TYPE_PATTERN)] if any(k.predicate == "rdf:type" for k in keys) else []
        for key in keys:
            if key.predicate == "rdf:type":
                continue
            if key.name == _MEMBER:
                patterns = _member_patterns(store, graph, split)
            else:
                patterns = [key.pattern]
            parts += [(key.name, pattern) for pattern in patterns]
        if not parts:
            continue
        groups = [[part] for part in parts] if split else [parts]
        for group in groups:
            tasks.append(Task(graph, tuple(group), folder / f"{len(tasks):05d}.tsv"))
    return tasks


class Copy(Protocol):
    """What staging needs of a graph's import copy (:class:`kg.store.copies.ImportCopy`)."""

    @property
    def path(self) -> Path: ...
    @property
    def triples(self) -> int: ...
    @property
    def blank_ids(self) -> str: ...


def _copy_predicates() -> Predicates:
    """The predicates staging reads from a copy, each with its key (and list position)."""
    from kg.analytics.copyrows import Predicates

    rdf = NS["rdf"].base
    keys: list[tuple[str, str, int | None]] = [(_iri(_TYPE), _TYPE, None)]
    keys += [(_iri(k.predicate), k.name, None) for k in KEYS.values()
             if k.predicate not in ("rdf:type", "rdf:_1", "skos:prefLabel")]
    keys.append((_iri("skos:prefLabel"), "skos:prefLabel", None))  # split by language in copyrows
    keys += [(f"<{rdf}_{n}>", _MEMBER, n) for n in range(1, MAX_AUTHOR_POSITION + 1)]
    return Predicates.of([k[0] for k in keys], [k[1] for k in keys], [k[2] for k in keys])


def _hold(copies: Mapping[str, Copy], folder: Path) -> dict[str, str]:
    """The files to read the copies from: each linked into ``folder``, because a write to
    the store deletes a graph's copy. A copy gone already is left out (its graph is read
    from the store, whose view still holds it)."""
    held = {}
    for i, (graph, copy) in enumerate(copies.items()):
        link = folder / f"copy-{i}.nt"
        try:
            os.link(copy.path, link)
            held[graph] = str(link)
        except FileNotFoundError:
            continue
        except OSError:  # another file system: read it in place
            held[graph] = str(copy.path)
    return held


def _drop_repeats(con: duckdb.DuckDBPyConnection, graph: int, table: str) -> int:
    """Delete all but one of each set of equal rows of ``graph`` in ``table``; return
    how many went. For a copy that repeats a line (a first load copies the file's lines
    as they are): distinct triples make distinct rows, so a repeated row is a repeated
    line. Rows are compared whole; a hash only picks the few to compare (a DISTINCT over
    every row took 4.3 GB at 9M rows, and DuckDB's ``hash`` of different rows can agree)."""
    con.execute(
        f"""CREATE OR REPLACE TEMP TABLE stage_repeats AS
           WITH twice AS (SELECT hash(s, k, o, n, d) AS h FROM {table} WHERE g = $g
                          GROUP BY h HAVING count(*) > 1)
           SELECT r FROM (SELECT rowid AS r, row_number() OVER (PARTITION BY s, k, o, n, d ORDER BY rowid) AS i
                          FROM {table} WHERE g = $g AND hash(s, k, o, n, d) IN (SELECT h FROM twice))
           WHERE i > 1""",
        {"g": graph},
    )
    try:
        found = con.execute(f"DELETE FROM {table} WHERE rowid IN (SELECT r FROM stage_repeats)").fetchall()
    finally:
        con.execute("DROP TABLE stage_repeats")
    return int(found[0][0]) if found else 0


def stage(
    store: GraphStore,
    con: duckdb.DuckDBPyConnection,
    graphs: Sequence[ox.NamedNode],
    folder: Path,
    *,
    ids: Mapping[str, int],
    sizes: Mapping[str, int | None] | None = None,
    copies: Mapping[str, Copy] | None = None,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    table: str = "staging.facts",
) -> int:
    """Extract the facts of ``graphs`` into ``table`` (``staging.facts``' columns; each
    graph stored as its integer id from ``ids``); return how many were added.

    A graph with an import copy in ``copies`` (by graph IRI) is read from that file, once
    (see the module's docstring); for the others the store writes one TSV file per task,
    ``workers`` at a time, and DuckDB reads all the files in one bulk ``INSERT ... SELECT``."""
    copies = {g.value: copies[g.value] for g in graphs if copies and g.value in copies}
    held = _hold(copies, folder)
    copies = {g: c for g, c in copies.items() if g in held}
    tasks = expand(store, [g for g in graphs if g.value not in copies], folder, sizes)
    if not tasks and not copies:
        return 0
    # Extraction waits on the store as much as on the CPU: one worker more than cores.
    workers = workers or min(8, (os.cpu_count() or 1) + 1)
    # Progress: a step per store task and per block of a copy. A copy is read by Arrow:
    # pyarrow is imported only where there is one.
    steps: dict[str, int] = {}
    if copies:
        import pyarrow as pa

        from kg.analytics.copyrows import Lines, blocks

        steps = {g: blocks(Path(held[g])) for g in copies}
        predicates = _copy_predicates()
    done, total = 0, len(tasks) + sum(steps.values())
    if progress:
        progress(0, total)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for _ in pool.map(lambda t: store.select_to_file(t.sparql, t.path, fmt="tsv"), tasks):
            done += 1
            if progress:
                progress(done, total)
    files = [str(t.path) for t in tasks]
    typed = [str(t.path) for t in tasks if t.key in (None, _TYPE)]
    added = 0
    copy_types: list[pa.RecordBatch] = []
    try:
        temp_table(con, "stage_tasks", {"file": ("VARCHAR", files),
                                        "g": ("INTEGER", [ids[t.graph.value] for t in tasks]),
                                        "k": ("VARCHAR", [t.key for t in tasks])})
        if files:
            added += _count(con.execute(
                f"INSERT INTO {table} SELECT * FROM ({_FROM_STORE}) WHERE k <> '{_TYPE}'", {"files": files}))
        # Each copy read once: its facts streamed into the table, its rdf:type rows kept.
        repeated = []
        for graph, copy in copies.items():
            gid, start = ids[graph], done

            def block(end: int = start + steps[graph]) -> None:
                nonlocal done
                done = min(done + 1, end)
                if progress:
                    progress(done, total)

            lines = Lines(Path(held[graph]), predicates, f"kg{gid}." if copy.blank_ids == "file" else None,
                          workers=min(4, os.cpu_count() or 1), done=block)
            con.register("stage_copy", lines.facts())
            try:
                added += _count(con.execute(f"INSERT INTO {table} SELECT {gid}, s, k, o, n, d FROM stage_copy"))
            finally:
                con.unregister("stage_copy")
            copy_types += [b.append_column("g", pa.array([gid] * b.num_rows, pa.int32())) for b in lines.types]
            if lines.lines != copy.triples:
                repeated.append(gid)
            done = start + steps[graph]
            if progress:
                progress(done, total)
        if typed or copy_types:
            added += _stage_types(con, typed, copy_types, table)
        for gid in repeated:
            added -= _drop_repeats(con, gid, table)
    finally:
        con.execute("DROP TABLE IF EXISTS stage_tasks")
        if copies:  # what Arrow's allocator kept of the parsed blocks goes back, before the tables are made
            del copy_types
            pa.default_memory_pool().release_unused()
    return added


def _count(result: duckdb.DuckDBPyConnection) -> int:
    found = result.fetchall()
    return int(found[0][0]) if found else 0


#: The rows of the TSV files ($files) the store wrote, with their tasks' graphs and keys. TSV
#: keeps every term whole (IRI, literal with its datatype or language); the build's macros
#: take the value and the datatype apart (kg.analytics.materialize).
_FROM_STORE = """
    SELECT g, kg_value(s) AS s, k, kg_value(o) AS o, n, kg_type(o) AS d
    FROM (SELECT t.g, f.s, coalesce(kg_value(f.k), t.k) AS k, f.o, CAST(kg_value(f.n) AS INTEGER) AS n
          FROM read_csv($files, header = true, auto_detect = false, delim = '\t', quote = '', escape = '',
                        filename = true,
                        columns = {'s': 'VARCHAR', 'k': 'VARCHAR', 'o': 'VARCHAR', 'n': 'VARCHAR'}) AS f
          JOIN stage_tasks AS t ON t.file = f.filename)
    WHERE k IS NOT NULL"""


def _stage_types(con: duckdb.DuckDBPyConnection, files: list[str], copy_types: list[pa.RecordBatch],
                 table: str) -> int:
    """The type keys, as their patterns in KEYS define them, from the rdf:type rows of the
    store's TSV ``files`` and of the copies (``copy_types``: g, s, o, d): a:<class> for
    each subject of that class, and every type of a bibo:Document."""
    if copy_types:  # (Arrow only where a copy was read)
        import pyarrow as pa

        schema = pa.schema([("s", pa.string()), ("o", pa.string()), ("d", pa.string()), ("g", pa.int32())])
        con.register("stage_copy_types", pa.Table.from_batches(copy_types, schema))
    classes = [KEYS["a:" + c] for c in CLASSES]
    temp_table(con, "stage_classes", {"k": ("VARCHAR", [k.name for k in classes]),
                                      "iri": ("VARCHAR", [_iri(k.name[2:])[1:-1] for k in classes])})
    rows = " UNION ALL ".join([*([f"SELECT g, s, o, d FROM ({_FROM_STORE}) WHERE k = '{_TYPE}'"] if files else []),
                               *(["SELECT g, s, o, d FROM stage_copy_types"] if copy_types else [])])
    try:
        return _count(con.execute(
            f"""INSERT INTO {table}
                WITH ty AS MATERIALIZED ({rows})
                SELECT ty.g, ty.s, c.k, NULL, NULL, NULL
                FROM ty JOIN stage_classes AS c ON c.iri = ty.o AND ty.d IS NULL
                UNION ALL
                SELECT ty.g, ty.s, '{DOCUMENT_TYPES}', ty.o, NULL, ty.d FROM ty
                SEMI JOIN (SELECT g, s FROM ty WHERE o = '{_iri("bibo:Document")[1:-1]}' AND d IS NULL) AS doc
                  ON doc.g = ty.g AND doc.s = ty.s""",
            {"files": files} if files else {}))
    finally:
        if copy_types:
            con.unregister("stage_copy_types")
        con.execute("DROP TABLE IF EXISTS stage_classes")
