"""Staged writes for servers that limit the size of one SPARQL Update request.

A transaction's operations (:meth:`kg.store.base.Transaction.commit`) are applied to
staging copies of the graphs they write, in requests small enough for the server,
and then swapped in by one small request: for each graph ``DROP SILENT GRAPH g ;
MOVE SILENT staging TO g``. Until that last request nothing the user sees has
changed, and the server applies it atomically, so the transaction stays atomic.

Staging graphs are named ``urn:techkg:staging:...``; none of TechKG's reads look at
them. Each carries a lease (``<staging> <urn:techkg:staging#lease> expiry``), renewed
while it fills and removed in the swap, so that a later process can tell a staging
graph left behind by a killed one (lease expired) from one that another process is
still filling.

Everything here is text and triples in, text out: :mod:`kg.store.remote` sends it.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import pyoxigraph as ox

from kg.sparqltext import code_only

__all__ = [
    "LEASE",
    "STAGING",
    "StagedPlan",
    "blank_safe",
    "chunks",
    "lease_update",
    "new_staging_graph",
    "parse_data_operation",
    "plan",
    "retarget",
]

STAGING = "urn:techkg:staging:"
#: The lease predicate; its object is the time (Unix seconds) after which the staging
#: graph counts as abandoned.
LEASE = ox.NamedNode("urn:techkg:staging#lease")

_DATA_OP = re.compile(r"^(INSERT|DELETE) DATA \{ GRAPH (<[^<>\s]*>) \{\n(.*)\n\} \}$", re.S)
#: Graph positions in an update: GRAPH <g>, WITH <g>, USING [NAMED] <g>, DROP/CLEAR/CREATE
#: [SILENT] [GRAPH] <g>, and ADD/MOVE/COPY [SILENT] [GRAPH] <g> TO [GRAPH] <g>.
_GRAPH_POSITION = re.compile(
    r"(?i)(\b(?:GRAPH|WITH|USING(?:\s+NAMED)?|TO|INTO|(?:DROP|CLEAR|CREATE|ADD|MOVE|COPY)(?:\s+SILENT)?)\s+)(<[^<>\s]*>)"
)


_PREFIXED_GRAPH = re.compile(r"(?i)\bGRAPH\s+(?![<?$\s])")


def new_staging_graph() -> ox.NamedNode:
    """A fresh staging graph name."""
    return ox.NamedNode(STAGING + uuid.uuid4().hex)


def lease_update(staging: ox.NamedNode, seconds: float) -> str:
    """An update that sets ``staging``'s lease to expire ``seconds`` from now."""
    expiry = ox.Literal(str(int(time.time() + seconds)), datatype=ox.NamedNode(
        "http://www.w3.org/2001/XMLSchema#integer"))
    return (f"DELETE WHERE {{ GRAPH {staging} {{ {staging} {LEASE} ?e }} }} ;\n"
            f"INSERT DATA {{ GRAPH {staging} {{ {staging} {LEASE} {expiry} }} }}")


def parse_data_operation(operation: str) -> tuple[str, ox.NamedNode, list[ox.Triple]] | None:
    """``("INSERT" | "DELETE", graph, triples)`` for the data operations a Transaction
    writes (``INSERT DATA { GRAPH <g> {`` N-Triples ``} }``); None for any other."""
    m = _DATA_OP.match(operation)
    if m is None:
        return None
    graph = ox.NamedNode(m.group(2)[1:-1])
    triples = [ox.Triple(q.subject, q.predicate, q.object)
               for q in ox.parse(m.group(3).encode("utf-8"), format=ox.RdfFormat.N_TRIPLES)]
    return m.group(1), graph, triples


def retarget(operation: str, graphs: Mapping[ox.NamedNode, ox.NamedNode]) -> str:
    """``operation`` writing to (and reading from) the staging graphs instead: every graph
    IRI in a graph position is replaced; IRIs elsewhere (a triple about a graph, in the
    provenance graph for instance) stay as they are."""
    names = {str(g): str(s) for g, s in graphs.items()}
    code = code_only(operation, iris=True)
    out, last = [], 0
    for m in _GRAPH_POSITION.finditer(code):
        iri = m.group(2)
        if iri in names and operation[m.start(2) : m.end(2)] == iri:
            out += [operation[last : m.start(2)], names[iri]]
            last = m.end(2)
    out.append(operation[last:])
    return "".join(out)


def _components(triples: Sequence[ox.Triple]) -> list[list[ox.Triple]]:
    """The triples in groups that share no blank node with another group, in order."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    keys: list[str | None] = []
    for t in triples:
        nodes = [term.value for term in (t.subject, t.object) if isinstance(term, ox.BlankNode)]
        for other in nodes[1:]:
            parent[find(other)] = find(nodes[0])
        keys.append(nodes[0] if nodes else None)
    groups: dict[str, list[ox.Triple]] = {}
    out: list[list[ox.Triple]] = []
    for t, key in zip(triples, keys, strict=True):
        if key is None:
            out.append([t])
            continue
        root = find(key)
        if root not in groups:
            groups[root] = []
            out.append(groups[root])
        groups[root].append(t)
    return out


def chunks(triples: Sequence[ox.Triple], size: int) -> Iterator[list[ox.Triple]]:
    """``triples`` in chunks of at most ``size``; triples that share a blank node stay in
    one chunk (a blank node means one node within one request only), even when that
    makes the chunk larger."""
    batch: list[ox.Triple] = []
    for group in _components(triples):
        if batch and len(batch) + len(group) > size:
            yield batch
            batch = []
        batch.extend(group)
    if batch:
        yield batch


def _data(kind: str, graph: ox.NamedNode, triples: Sequence[ox.Triple]) -> str:
    body = "\n".join(f"{t.subject} {t.predicate} {t.object} ." for t in triples)
    return blank_safe(f"{kind} DATA {{ GRAPH {graph} {{\n{body}\n}} }}")


def blank_safe(operation: str) -> str:
    """An ``INSERT DATA`` that holds blank nodes as the equivalent ``INSERT { ... } WHERE
    {}`` (one solution: each blank node is one new node), which servers that refuse
    blank nodes in data (Virtuoso 7: "not allowed in a constant") accept. Anything else
    is returned as it is."""
    if operation.startswith("INSERT DATA {") and "_:" in code_only(operation):
        return "INSERT {" + operation[len("INSERT DATA {") :] + " WHERE {}"
    return operation


@dataclass
class StagedPlan:
    """The requests of a staged transaction: ``steps`` fill the staging graphs (each
    within the server's limit), ``swap`` moves them in atomically, ``cleanup`` drops
    them after a failure."""

    staging: dict[ox.NamedNode, ox.NamedNode]
    steps: list[str] = field(default_factory=list)
    swap: str = ""

    @property
    def cleanup(self) -> list[str]:
        return [f"DROP SILENT GRAPH {s}" for s in self.staging.values()]


def plan(operations: Sequence[str], graphs: Iterable[ox.NamedNode], limit: int, lease_seconds: float) -> StagedPlan:
    """Stage ``operations`` (which write only ``graphs``) in requests of at most ``limit``
    data triples each (an operation that is not data counts one per line)."""
    staging = {g: new_staging_graph() for g in dict.fromkeys(graphs)}
    result = StagedPlan(staging)
    # A graph that the transaction starts by dropping is staged empty; any other starts as a copy.
    first: dict[ox.NamedNode, bool] = {}
    for op in operations:
        for g in staging:
            if g not in first and str(g) in op:
                first[g] = op == f"DROP SILENT GRAPH {g}"
    result.steps += [lease_update(s, lease_seconds) for s in staging.values()]
    copied = [g for g in staging if not first.get(g, False)]
    result.steps += [f"COPY SILENT {g} TO {staging[g]}" for g in copied]
    # COPY replaced the staging graph, lease and all: renew the leases.
    result.steps += [lease_update(staging[g], lease_seconds) for g in copied]
    pending: list[str] = []
    weight = 0

    def add(op: str, cost: int) -> None:
        nonlocal weight
        if pending and weight + cost > limit:
            result.steps.append(" ;\n".join(pending))
            pending.clear()
            weight = 0
        pending.append(op)
        weight += cost

    for op in operations:
        data = parse_data_operation(op)
        if data is None:
            dropped = next((g for g in staging if op == f"DROP SILENT GRAPH {g}"), None)
            if dropped is not None and first.pop(dropped, False):
                continue  # the transaction starts by dropping it: its staging graph starts empty
            if _PREFIXED_GRAPH.search(code_only(op, iris=True)):
                raise ValueError(f"cannot stage an update that names a graph by a prefixed name: {op[:200]}")
            add(retarget(op, staging), max(1, op.count("\n")))
            if dropped is not None:  # dropping the staging graph dropped its lease too
                add(lease_update(staging[dropped], lease_seconds), 1)
            continue
        kind, graph, triples = data
        target = staging.get(graph, graph)
        for chunk in chunks(triples, limit):
            add(_data(kind, target, chunk), len(chunk))
    if pending:
        result.steps.append(" ;\n".join(pending))
    swap = []
    for g, s in staging.items():
        swap += [f"DELETE WHERE {{ GRAPH {s} {{ {s} {LEASE} ?e }} }}",
                 f"DROP SILENT GRAPH {g}", f"MOVE SILENT {s} TO {g}"]
    result.swap = " ;\n".join(swap)
    return result
