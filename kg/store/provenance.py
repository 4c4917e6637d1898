"""What the provenance graph records of a write: the activity (one run that writes), each
graph it generated (when, its content hash, its triple count, what it was made from).

The store's transactions write these records (:mod:`kg.store.base`); snapshots compare
the user's graphs by their content hashes (:mod:`kg.store.snapshots`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import pyoxigraph as ox

from kg.graphs import PROVENANCE
from kg.version import __version__
from kg.vocab import DCTERMS, ID, PROV, RDF, RDFS, SCHEMA, TKG, datetime_literal, integer, text

__all__ = ["SOFTWARE_AGENT", "Activity", "content_hash", "lines_hash", "now", "ntriples", "provenance_update",
           "source_node"]

SOFTWARE_AGENT = ID["agent/techkg-" + __version__]


def content_hash(triples: Iterable[ox.Triple]) -> str:
    """Order-independent SHA-256 of a set of triples (stable when they hold no blank nodes)."""
    lines = sorted({f"{t.subject} {t.predicate} {t.object} ." for t in triples})
    digest = hashlib.sha256()
    for line in lines:
        digest.update(line.encode())
        digest.update(b"\n")
    return digest.hexdigest()


def lines_hash(lines: bytes) -> str:
    """:func:`content_hash` of a graph given as N-Triples lines as Oxigraph writes them (one
    triple a line; ``Store.dump``, ``serialize``): the same digest, since each line is the
    text :func:`content_hash` makes of its triple, without a Python object per triple."""
    digest = hashlib.sha256()
    for line in sorted(set(lines.decode("utf-8").split("\n")) - {""}):
        digest.update(line.encode())
        digest.update(b"\n")
    return digest.hexdigest()


def ntriples(triples: Iterable[ox.Triple]) -> str:
    """The triples as N-Triples lines (the body of an ``INSERT DATA`` block)."""
    return "\n".join(f"{t.subject} {t.predicate} {t.object} ." for t in triples)


def now() -> dt.datetime:
    """The time now, in UTC (when an activity starts and ends)."""
    return dt.datetime.now(dt.UTC)


@dataclass
class Activity:
    """One run that writes to the store: ``kg build``, an ingest, a sync, a verification.

    ``used`` lists what it read (files, URLs without credentials); ``stats`` holds the
    counts it reports (added, updated, unchanged, missing, failed).
    """

    label: str
    used: list[str] = field(default_factory=list)
    stats: dict[str, int] = field(default_factory=dict)
    started: dt.datetime = field(default_factory=now)
    iri: ox.NamedNode = field(default_factory=lambda: ID["activity/" + uuid.uuid4().hex])

    def triples(self, ended: dt.datetime) -> list[ox.Triple]:
        a = self.iri
        out = [
            ox.Triple(a, RDF.type, PROV.Activity),
            ox.Triple(a, RDFS.label, text(self.label, None)),
            ox.Triple(a, PROV.startedAtTime, datetime_literal(self.started)),
            ox.Triple(a, PROV.endedAtTime, datetime_literal(ended)),
            ox.Triple(a, PROV.wasAssociatedWith, SOFTWARE_AGENT),
            ox.Triple(SOFTWARE_AGENT, RDF.type, PROV.SoftwareAgent),
            ox.Triple(SOFTWARE_AGENT, RDFS.label, text("TechKG", None)),
            ox.Triple(SOFTWARE_AGENT, SCHEMA.softwareVersion, text(__version__, None)),
        ]
        for used in self.used:
            out.append(ox.Triple(a, PROV.used, source_node(used)))
        for key, value in sorted(self.stats.items()):
            out.append(ox.Triple(a, TKG[key], integer(value)))
        return out


def source_node(used: str) -> ox.NamedNode:
    """The IRI of something a run read: a URL as it is, a local file as an IRI that is the
    same on every installation (:func:`kg.sources.source_iri`)."""
    from kg.sources import source_iri

    return source_iri(used)


def provenance_update(
    activity: Activity,
    graphs: Mapping[ox.NamedNode, tuple[str | None, int | None]],
    ended: dt.datetime,
    *,
    sources: Mapping[ox.NamedNode, Sequence[str]] | None = None,
    dropped: Iterable[ox.NamedNode] = (),
) -> str:
    """Update operations that record ``activity`` as the last generator of ``graphs``
    (with the files or URLs each was made from, ``sources``), and forget ``dropped`` graphs.

    Each graph's previous generating activity is removed once no graph refers to it,
    so the provenance graph holds one record per graph, not one per run.
    """
    ops = []
    for graph in [*graphs, *dropped]:
        ops.append(
            f"""DELETE {{ GRAPH {PROVENANCE} {{ ?act ?p ?o }} }}
WHERE {{ GRAPH {PROVENANCE} {{ {graph} prov:wasGeneratedBy ?act . ?act ?p ?o .
  FILTER NOT EXISTS {{ ?other prov:wasGeneratedBy ?act . FILTER(?other != {graph}) }} }} }}"""
        )
        ops.append(f"DELETE WHERE {{ GRAPH {PROVENANCE} {{ {graph} ?p ?o }} }}")
    triples = activity.triples(ended)
    stamp = datetime_literal(ended)
    for graph, (digest, count) in graphs.items():
        triples += [
            ox.Triple(graph, RDF.type, PROV.Bundle),
            ox.Triple(graph, PROV.wasGeneratedBy, activity.iri),
            ox.Triple(graph, DCTERMS.modified, stamp),
        ]
        if digest is not None:
            triples.append(ox.Triple(graph, TKG.contentHash, text(digest, None)))
        if count is not None:
            triples.append(ox.Triple(graph, TKG.tripleCount, integer(count)))
        for used in (sources or {}).get(graph, ()):
            triples.append(ox.Triple(graph, PROV.hadPrimarySource, source_node(used)))
    ops.append(f"INSERT DATA {{ GRAPH {PROVENANCE} {{\n{ntriples(triples)}\n}} }}")
    return " ;\n".join(ops)
