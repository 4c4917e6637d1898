"""SHACL validation of the graph (``kg validate``, and the end of ``kg build``).

The shapes in ``kg/shapes.ttl`` are compiled once per process into SPARQL queries
(:mod:`kg.shacl`) that the store answers over the union of its graphs, so nothing is
copied out of the store and memory stays flat however large the graph grows.

Validating only what changed: with a :class:`ValidationCache` (the embedded store keeps
one in ``DIR/validation.json``), each run records every graph's state (triple count, last
change and content hash from the provenance graph) together with the predicates and classes
it holds, and the violations each constraint found. The next run re-evaluates only the
constraints whose predicates or classes occur in a graph that changed since (as it was then,
or as it is now); the others keep their recorded answer. Which of the shapes' predicates and
classes a graph holds is one index probe each, so this works the same for an import of
millions of triples. When no graph changed, nothing is evaluated at all. A change to the
shapes or to class hierarchy (rdfs:subClassOf) evaluates everything.

A constraint that is evaluated runs over the whole union (a new type or value in the changed
graph can make a node of another graph violate it). Its query is written to scale: scans,
groupings and anti-joins rather than a lookup per triple (see :mod:`kg.shacl`).

Each violation names the focus node, the property and the fix (the shapes' own
sh:message), and the named graphs that hold the node's offending facts, so a hint can say
whether to fix a data file, an import or your own data.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from kg.results import python_value
from kg.store.base import GraphStore

__all__ = [
    "ValidationCache",
    "ValidationRun",
    "Violation",
    "ontology_text",
    "pyshacl_violations",
    "shapes_text",
    "validate_store",
    "validate_triples",
]

SUBCLASS = "http://www.w3.org/2000/01/rdf-schema#subClassOf"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"


@dataclass(frozen=True)
class Violation:
    focus: str
    path: str | None
    message: str
    severity: str
    value: str | None = None
    #: The named graphs that hold the focus node's facts at ``path`` (or about it).
    graphs: tuple[str, ...] = ()

    def __str__(self) -> str:
        where = f"{self.focus}" + (f" {self.path}" if self.path else "")
        return f"{where}: {self.message}"

    def key(self) -> tuple[str, str, str, str]:
        return (self.focus, self.path or "", self.message, self.value or "")


def shapes_text() -> str:
    return (resources.files("kg") / "shapes.ttl").read_text(encoding="utf-8")


def ontology_text() -> str:
    return (resources.files("kg") / "ontology.ttl").read_text(encoding="utf-8")


def _shapes_key(text: str) -> str:
    from kg.shacl import COMPILER_VERSION

    return hashlib.sha256((COMPILER_VERSION + text).encode()).hexdigest()


@lru_cache(maxsize=4)
def _compiled(text: str) -> tuple[str, list[Any]]:
    from kg.shacl import compile_shapes

    return _shapes_key(text), compile_shapes(text)


@dataclass
class ValidationRun:
    """What one validation did: the violations, and how much it evaluated."""

    violations: list[Violation]
    evaluated: int = 0
    reused: int = 0
    changed_graphs: list[str] = field(default_factory=list)
    seconds: float = 0.0


class ValidationCache:
    """The last validation's graph states and answers, in a JSON file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def save(self, data: dict[str, Any]) -> None:
        tmp = self.path.with_name(f".{self.path.name}.{uuid.uuid4().hex}.tmp")
        try:
            tmp.write_text(json.dumps(data), encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError:  # a read-only store folder: validation still works, just not incrementally
            tmp.unlink(missing_ok=True)


def cache_for(store: GraphStore) -> ValidationCache | None:
    """The validation cache of a store: ``DIR/validation.json`` for an embedded store on
    disk, and for a server one file per endpoint in the user's data directory (as its
    snapshots: kg.snapshots); an in-memory store validates in full."""
    path = getattr(store, "path", None)
    if isinstance(path, Path):
        return ValidationCache(path / "validation.json")
    if not store.batches_queries:
        return None
    from platformdirs import user_data_path

    folder = user_data_path("techkg", appauthor=False) / "validation" / hashlib.sha256(
        store.location.encode()).hexdigest()[:16]
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "endpoint.txt").write_text(store.location + "\n", encoding="utf-8")
    except OSError:
        return None
    return ValidationCache(folder / "validation.json")


def _graph_states(store: GraphStore) -> dict[str, list[Any]]:
    """Each graph's state: its size, last change and content hash from the provenance graph.
    The provenance graph records its own changes nowhere: every write changes the record
    of some other graph, so its state is the digest of theirs.

    The size is the triple count the provenance graph records (every write records the
    graph anew, with its count where the writer knows it); only a graph without one is
    counted, so that checking a store of millions of triples for changes reads no quads."""
    from kg.graphs import PROVENANCE

    recorded: dict[str, list[Any]] = {}
    for row in store.select(f"""SELECT ?g ?modified ?hash ?count WHERE {{ GRAPH {PROVENANCE} {{
            ?g dcterms:modified ?modified .
            OPTIONAL {{ ?g tkg:contentHash ?hash }} OPTIONAL {{ ?g tkg:tripleCount ?count }} }} }}"""):
        g, count = row["g"], row["count"]
        if isinstance(g, ox.NamedNode):
            recorded[g.value] = [int(count.value) if isinstance(count, ox.Literal) else None,
                                 row["modified"].value,  # type: ignore[union-attr]
                                 row["hash"].value if isinstance(row["hash"], ox.Literal) else None]
    # A server may also be written by other clients, which leave no record: there every
    # graph is counted as it is (one grouped count), so that a write of theirs that adds or
    # removes triples is seen as a change.
    counted: dict[str, int] = {}
    if store.batches_queries:
        for row in store.select("SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g").rows:
            g, n = row.get("g"), row.get("n")
            if isinstance(g, ox.NamedNode) and isinstance(n, ox.Literal):
                counted[g.value] = int(n.value)
    states: dict[str, list[Any]] = {}
    for graph in store.named_graphs():
        state = recorded.get(graph.value, [None, None, None])
        size = counted.get(graph.value, state[0])
        states[graph.value] = [store.count(graph) if size is None else size, state[1], state[2]]
    if PROVENANCE.value in states:
        others = json.dumps(sorted((g, s) for g, s in states.items() if g != PROVENANCE.value))
        states[PROVENANCE.value][2] = hashlib.sha256(others.encode()).hexdigest()
    return states


def _vocabulary(store: GraphStore, graph: str, predicates: set[str], classes: set[str]) -> dict[str, list[str]]:
    """Which of ``predicates`` (those the shapes name) and ``classes`` (those they name, with
    their subclasses) a graph holds: one index probe each, whatever the graph's size."""
    g = ox.NamedNode(graph)
    if store.batches_queries:  # a server: two requests, each value tested with EXISTS (it stops at a match)
        def held_values(values: set[str], pattern: str) -> list[str]:
            if not values:
                return []
            block = " ".join(str(ox.NamedNode(v)) for v in sorted(values))
            rows = store.select(f"SELECT ?v WHERE {{ VALUES ?v {{ {block} }} "
                                f"FILTER EXISTS {{ GRAPH {g} {{ {pattern} }} }} }}").rows
            return sorted(v.value for v in (r.get("v") for r in rows) if isinstance(v, ox.NamedNode))

        found = held_values(predicates, "?s ?v ?o")
        return {"predicates": found,
                "classes": held_values(classes, f"?s {ox.NamedNode(RDF_TYPE)} ?v") if RDF_TYPE in found else []}

    def holds(p: str, o: str | None = None) -> bool:
        return store.ask(f"ASK {{ GRAPH {g} {{ ?s {ox.NamedNode(p)} {'?o' if o is None else ox.NamedNode(o)} }} }}")

    held = sorted(p for p in predicates if holds(p))
    return {"predicates": held, "classes": sorted(c for c in classes if holds(RDF_TYPE, c)) if RDF_TYPE in held else []}


def validate_store(
    store: GraphStore,
    *,
    cache: ValidationCache | None = None,
    full: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> list[Violation]:
    """Validate the union of all named graphs; see :func:`validate` for ``cache``."""
    return validate(store, cache=cache, full=full, progress=progress).violations


def validate(
    store: GraphStore,
    *,
    cache: ValidationCache | None = None,
    full: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> ValidationRun:
    """Validate the union of all named graphs. With a ``cache``, evaluate only what may
    have changed since the run that wrote it (everything when ``full``)."""
    from kg.shacl import prebind, subclass_closure, with_subclasses

    started = time.perf_counter()
    text = shapes_text()
    shapes_key = _shapes_key(text)
    states = _graph_states(store)
    previous = (cache.load() if cache is not None else {}) if not full else {}
    if previous.get("shapes") != shapes_key:
        previous = {}
    old_graphs: dict[str, Any] = previous.get("graphs", {})
    if previous and "violations" in previous and {g: e.get("state") for g, e in old_graphs.items()} == states:
        # Nothing changed since the last run: its answer stands, nothing is compiled or evaluated.
        found = [Violation(v[0], v[1], v[2], v[3], v[4], tuple(v[5])) for v in previous["violations"]]
        return ValidationRun(found, reused=len(previous.get("answers", {})),
                             seconds=time.perf_counter() - started)
    _, constraints = _compiled(text)
    answers: dict[str, list[list[Any]]] = previous.get("answers", {})
    changed = sorted({g for g in states if old_graphs.get(g, {}).get("state") != states[g]}
                     | {g for g in old_graphs if g not in states})
    pairs = [(str(r["sub"]), str(r["sup"])) for r in store.select(
        "SELECT DISTINCT ?sub ?sup WHERE { ?sub rdfs:subClassOf ?sup FILTER(isIRI(?sub) && isIRI(?sup)) }"
    ).records()]
    below = subclass_closure(pairs)
    named_predicates = {RDF_TYPE, SUBCLASS}.union(*(c.predicates for c in constraints))
    named_classes = set().union(*(c.classes | set().union(*(below.get(k, set()) for k in c.classes))
                                  for c in constraints))
    # (Listed only where a cache keeps them, or a previous run's answers may be reused.)
    vocab = {g: _vocabulary(store, g, named_predicates, named_classes)
             for g in changed if g in states and (cache is not None or previous)}
    # What the changed graphs hold, now and as recorded at the last run.
    everything = not previous
    preds: set[str] = set()
    classes: set[str] = set()
    for g in changed:
        for known in (vocab.get(g, {"predicates": [], "classes": []}), old_graphs.get(g, {}).get("vocab")):
            if known is None:
                if g in old_graphs:  # recorded by an older TechKG, or too large to list then
                    everything = True
                continue
            preds.update(known["predicates"])
            classes.update(known["classes"])
    if SUBCLASS in preds:
        everything = True
    run = ValidationRun([], changed_graphs=changed)
    todo = []
    for c in constraints:
        relevant = everything or c.id not in answers or bool(c.predicates & preds) or any(
            cls in classes or below.get(cls, set()) & classes for cls in c.classes)
        if relevant:
            todo.append(c)
        else:
            run.reused += 1
    if getattr(store, "batches_queries", False):  # a server: a few requests instead of one per question
        for c, records in _evaluate_batched(store, todo, below):
            answers[c.id] = [_row(c, r) for r in records]
            run.evaluated += 1
        if progress is not None and todo:
            progress(len(todo), len(todo))
        todo = []
    for i, c in enumerate(todo):
        if c.focus is None:
            records = store.select(with_subclasses(_query_for(store, c, below), below)).records()
        else:
            records = []
            for focus in store.select(with_subclasses(c.focus, below)):
                node = focus["this"]
                if isinstance(node, ox.NamedNode | ox.BlankNode):
                    records += store.select(prebind(c.query, str(node))).records()
        answers[c.id] = [_row(c, r) for r in records]
        run.evaluated += 1
        if progress is not None:
            progress(i + 1, len(todo))
    live = {c.id for c in constraints}
    answers = {k: v for k, v in answers.items() if k in live}
    found = [Violation(*a[:5]) for key in sorted(answers) for a in answers[key]]
    unique = {v.key(): v for v in found}
    run.violations = _with_graphs(store, sorted(unique.values(), key=lambda v: (v.focus, v.path or "", v.message)))
    if cache is not None:
        graphs_out = {}
        for g, state in states.items():
            entry: dict[str, Any] = {"state": state}
            if g in changed:
                entry["vocab"] = vocab[g]
            elif "vocab" in old_graphs.get(g, {}):
                entry["vocab"] = old_graphs[g]["vocab"]
            graphs_out[g] = entry
        cache.save({"shapes": shapes_key, "graphs": graphs_out, "answers": answers,
                    "violations": [[v.focus, v.path, v.message, v.severity, v.value, list(v.graphs)]
                                   for v in run.violations]})
    run.seconds = time.perf_counter() - started
    return run


#: Below this many rows to test, a constraint is asked with a lookup per row (see
#: :attr:`kg.shacl.Constraint.lookup`); from it on, with one anti-join.
FEW = 2_000


def _query_for(store: GraphStore, c: Any, below: dict[str, set[str]]) -> str:
    """The constraint's query, or its lookup form where its probe has few solutions."""
    from kg.shacl import with_subclasses

    if c.lookup is None or c.probe is None:
        return str(c.query)
    probe = with_subclasses(f"SELECT (COUNT(*) AS ?n) WHERE {{ {{ SELECT * WHERE {{ {c.probe} }} LIMIT {FEW} }} }}",
                            below)
    few = int(str(store.select(probe).records()[0]["n"])) < FEW
    return str(c.lookup if few else c.query)


#: Requests in flight at once to a server that takes its questions one by one.
SIDE_BY_SIDE = 4
_TAG = "kgConstraint_"
_PREFIX = re.compile(r"(?im)^\s*PREFIX\s+([A-Za-z0-9_.\-]*):\s*<([^<>]*)>")


def _evaluate_batched(store: GraphStore, todo: Sequence[Any], below: dict[str, set[str]]
                      ) -> list[tuple[Any, list[dict[str, Any]]]]:
    """Every constraint of ``todo`` with its violation records, asked in a few requests: the
    focus nodes of the SPARQL-based ones together, the other constraints the store's
    ``query_batch`` at a time as one UNION whose branches are tagged (the answers are those
    of asking each alone: a branch is its question as a sub-select; a batch the server
    refuses is asked question by question), and a SPARQL-based constraint once per focus
    node. Where the batch is one question, :data:`SIDE_BY_SIDE` requests go at once."""
    from kg.shacl import prebind, with_subclasses

    focused = [c for c in todo if c.focus is not None]
    foci = _batched(store, [(c.id, with_subclasses(str(c.focus), below)) for c in focused])
    # Each constraint in its anti-join form: a server plans FILTER NOT EXISTS and MINUS alike,
    # and choosing between them (kg.validate.FEW) would cost one more request each.
    answered = _batched(store, [(c.id, with_subclasses(str(c.query), below)) for c in todo if c.focus is None])
    prebound = [(f"{c.id}#{k}", prebind(c.query, str(focus["this"]))) for c in focused
                for k, focus in enumerate(foci.get(c.id, []))
                if isinstance(focus.get("this"), ox.NamedNode | ox.BlankNode)]
    answered.update(_batched(store, prebound, batch=1))  # each alone: a server compiles a UNION of them slowly
    out = []
    for c in todo:
        rows = answered.get(c.id, []) if c.focus is None else [
            r for key, found in answered.items() if key.startswith(c.id + "#") for r in found]
        out.append((c, [{k: python_value(v) for k, v in r.items()} for r in rows]))
    return out


def _batched(store: GraphStore, questions: Sequence[tuple[str, str]], *, batch: int | None = None
             ) -> dict[str, list[dict[str, Any]]]:
    """tag → the rows (terms) of each tagged SELECT, asked ``batch`` (the store's
    ``query_batch``) at a time (see :func:`_evaluate_batched`); a row keeps only what its own
    question projects."""
    from concurrent.futures import ThreadPoolExecutor

    from kg.errors import KGError
    from kg.sparqltext import query_parts

    size = batch or store.query_batch
    out: dict[str, list[dict[str, Any]]] = {tag: [] for tag, _ in questions}
    if size <= 1:
        if questions:  # the first alone: it finds out what the server does, once
            out[questions[0][0]] = store.select(questions[0][1]).rows
        with ThreadPoolExecutor(SIDE_BY_SIDE) as pool:
            for (tag, _text), rows in zip(questions[1:], pool.map(lambda q: store.select(q[1]).rows, questions[1:]),
                                          strict=True):
                out[tag] = rows
        return out
    for start in range(0, len(questions), size):
        chunk = questions[start : start + size]
        prefixes: dict[str, str] = {}
        branches, projected = [], {}
        for tag, text in chunk:
            parts = query_parts(text)
            for name, iri in _PREFIX.findall(text[: parts.form_start]):
                if prefixes.setdefault(name, iri) != iri:
                    raise ValueError(f"two questions declare the prefix {name}: differently")
            projected[tag] = parts.projection
            branches.append(f'{{ {{ {text[parts.form_start:]} }} BIND("{tag}" AS ?{_TAG}) }}')
        prologue = "".join(f"PREFIX {name}: <{iri}>\n" for name, iri in prefixes.items())
        try:
            rows = store.select(prologue + "SELECT * WHERE {\n" + "\nUNION\n".join(branches) + "\n}").rows
        except KGError:  # refused as a whole (a planner's estimate, a size limit): one by one
            rows = [{**r, _TAG: ox.Literal(tag)} for tag, text in chunk for r in store.select(text).rows]
        for row in rows:
            tag = str(python_value(row.pop(_TAG)))
            keep = projected.get(tag)
            out[tag].append({k: v for k, v in row.items() if keep is None and v is not None or keep and k in keep})
    return out


def _row(c: Any, record: dict[str, Any]) -> list[Any]:
    message = c.message
    for name, value in record.items():
        message = message.replace("{$" + name + "}", str(value)).replace("{?" + name + "}", str(value))
    value = record.get("value")
    # A SPARQL constraint may name the property it is about in ?path (SHACL's sh:resultPath).
    path = str(record["path"]) if record.get("path") is not None else c.path
    return [str(record["this"]), path, message, c.severity, None if value is None else str(value)]


def _with_graphs(store: GraphStore, violations: Sequence[Violation]) -> list[Violation]:
    """Each violation with the named graphs holding its focus node's facts (at its path)."""
    if not violations:
        return []
    from kg.graphs import PROVENANCE, graph_name

    out = []
    for v in violations[:200]:
        focus = ox.NamedNode(v.focus) if not v.focus.startswith("_:") else None
        if focus is None:
            out.append(v)
            continue
        where = "SELECT DISTINCT ?g WHERE {{ GRAPH ?g {{ {} {} ?o }} FILTER(?g != {}) }}"
        rows = store.select(where.format(focus, f"<{v.path}>" if v.path else "?p", PROVENANCE))
        if not rows.rows and v.path:
            rows = store.select(where.format(focus, "?p", PROVENANCE))
        graphs = tuple(sorted(graph_name(r["g"]) for r in rows if isinstance(r["g"], ox.NamedNode)))
        out.append(Violation(v.focus, v.path, v.message, v.severity, v.value, graphs))
    return out + list(violations[200:])


def validate_triples(ntriples: str) -> list[Violation]:
    """Validate N-Triples text against kg/shapes.ttl; return the violations (empty = valid)."""
    from kg.store.embedded import OxigraphStore

    store = OxigraphStore(None)
    try:
        store.update(f"INSERT DATA {{ GRAPH <urn:techkg:validate> {{\n{ntriples}\n}} }}")
        return [Violation(v.focus, v.path, v.message, v.severity, v.value)
                for v in validate_store(store, full=True)]
    finally:
        store.close()


def pyshacl_violations(ntriples: str) -> list[Violation]:
    """The same check with pySHACL over an rdflib copy: the reference the tests compare
    the compiled queries with (and the engine TechKG used before)."""
    import pyshacl
    from rdflib import Graph, URIRef
    from rdflib.namespace import SH

    data = Graph()
    data.parse(data=ntriples, format="nt")
    shapes = Graph()
    shapes.parse(data=shapes_text(), format="turtle")
    _conforms, report, _text = pyshacl.validate(
        data, shacl_graph=shapes, inference="none", allow_warnings=True, advanced=True
    )
    out = []
    for result in report.subjects(predicate=None, object=SH.ValidationResult):
        focus = report.value(result, SH.focusNode)
        path = report.value(result, SH.resultPath)
        message = report.value(result, SH.resultMessage)
        severity = report.value(result, SH.resultSeverity)
        value = report.value(result, SH.value)
        out.append(
            Violation(
                focus=str(focus),
                path=str(path) if isinstance(path, URIRef) else None,
                message=str(message) if message is not None else "violates a shape",
                severity=str(severity).rsplit("#", 1)[-1] if severity is not None else "Violation",
                value=str(value) if value is not None else None,
            )
        )
    return sorted(out, key=lambda v: (v.focus, v.path or "", v.message))
