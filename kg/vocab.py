"""Namespaces and the terms TechKG mints, as pyoxigraph terms.

Standard vocabularies are used wherever one fits (SKOS, PROV-O, DCTERMS, BIBO,
FaBiO, FOAF, schema.org, CiTO). The ``TKG`` namespace holds only what none of them
covers; ``kg/ontology.ttl`` documents every ``TKG`` term and a test keeps the two in
step.
"""

from __future__ import annotations

import datetime as _dt
from functools import cache

from pyoxigraph import Literal, NamedNode

__all__ = [
    "BIBO",
    "CITO",
    "DCTERMS",
    "FABIO",
    "FOAF",
    "GRAPH_BASE",
    "ID",
    "LINEAGE_RELATIONS",
    "NS",
    "OWL",
    "PREFIXES",
    "PROV",
    "RDF",
    "RDFS",
    "SCHEMA",
    "SH",
    "SKOS",
    "TKG",
    "XSD",
    "Namespace",
    "boolean",
    "date_literal",
    "datetime_literal",
    "integer",
    "text",
]


class Namespace:
    """An IRI prefix; ``NS.term`` and ``NS["term"]`` give a cached NamedNode."""

    def __init__(self, base: str) -> None:
        self.base = base

    @cache  # noqa: B019 - namespaces live for the whole process
    def __getitem__(self, name: str) -> NamedNode:
        return NamedNode(self.base + name)

    def __getattr__(self, name: str) -> NamedNode:
        if name.startswith("__"):
            raise AttributeError(name)
        return self[name]

    def __contains__(self, node: object) -> bool:
        return isinstance(node, NamedNode) and node.value.startswith(self.base)

    def __repr__(self) -> str:
        return f"Namespace({self.base!r})"


BASE = "https://w3id.org/techkg/"
TKG = Namespace(BASE + "ns#")
ID = Namespace(BASE + "id/")
GRAPH_BASE = BASE + "graph/"

RDF = Namespace("http://www.w3.org/1999/02/22-rdf-syntax-ns#")
RDFS = Namespace("http://www.w3.org/2000/01/rdf-schema#")
XSD = Namespace("http://www.w3.org/2001/XMLSchema#")
OWL = Namespace("http://www.w3.org/2002/07/owl#")
SH = Namespace("http://www.w3.org/ns/shacl#")
SKOS = Namespace("http://www.w3.org/2004/02/skos/core#")
PROV = Namespace("http://www.w3.org/ns/prov#")
DCTERMS = Namespace("http://purl.org/dc/terms/")
BIBO = Namespace("http://purl.org/ontology/bibo/")
FABIO = Namespace("http://purl.org/spar/fabio/")
CITO = Namespace("http://purl.org/spar/cito/")
FOAF = Namespace("http://xmlns.com/foaf/0.1/")
SCHEMA = Namespace("https://schema.org/")

NS: dict[str, Namespace] = {
    "tkg": TKG,
    "id": ID,
    "rdf": RDF,
    "rdfs": RDFS,
    "xsd": XSD,
    "owl": OWL,
    "sh": SH,
    "skos": SKOS,
    "prov": PROV,
    "dcterms": DCTERMS,
    "bibo": BIBO,
    "fabio": FABIO,
    "cito": CITO,
    "foaf": FOAF,
    "schema": SCHEMA,
}
#: Prefix map for SPARQL text and serialisers.
PREFIXES: dict[str, str] = {name: ns.base for name, ns in NS.items()}

#: Typed lineage relations, each ``rdfs:subPropertyOf prov:wasDerivedFrom``,
#: pointing from the derived technique to its parent.
LINEAGE_RELATIONS: tuple[str, ...] = (
    "refines",
    "generalizes",
    "specializes",
    "replaces",
    "combines",
    "extends",
    "inverts",
    "reimplements",
    "portsTo",
    "buildsOn",
    "implements",
    "derivesFrom",
)


def text(value: str, lang: str | None = "en") -> Literal:
    """A language-tagged string (English by default); ``lang=None`` gives xsd:string."""
    return Literal(value, language=lang) if lang else Literal(value)


def integer(value: int) -> Literal:
    return Literal(str(int(value)), datatype=XSD.integer)


def boolean(value: bool) -> Literal:
    return Literal("true" if value else "false", datatype=XSD.boolean)


def date_literal(value: str) -> Literal:
    """``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD`` as xsd:gYear, xsd:gYearMonth or xsd:date."""
    parts = value.split("-")
    if len(parts) == 1:
        return Literal(value, datatype=XSD.gYear)
    if len(parts) == 2:
        return Literal(value, datatype=XSD.gYearMonth)
    return Literal(value, datatype=XSD.date)


def datetime_literal(value: _dt.datetime, *, precise: bool = False) -> Literal:
    """An aware datetime as xsd:dateTime in UTC, to the second (to the microsecond when
    ``precise``, for runs whose order matters within one second)."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=_dt.UTC)
    value = value.astimezone(_dt.UTC)
    if not precise:
        value = value.replace(microsecond=0)
    return Literal(value.isoformat().replace("+00:00", "Z"), datatype=XSD.dateTime)
