"""The graph as RDF: Turtle, N-Triples, N-Quads, TriG and JSON-LD, of the whole dataset
or of one named graph, private state left out unless asked for.

JSON-LD is written in compact form against the published TechKG context
(``exports/assets/techkg.context.jsonld``, at :data:`CONTEXT_URL`): every IRI in one of
our namespaces is written ``prefix:local``. By default the context is embedded so the
file expands anywhere without a network; ``context="url"`` refers to the published
context instead, and :func:`document_loader` lets pyld resolve that URL offline.
Expanding the document gives back exactly the triples (or quads) that were exported.
"""

from __future__ import annotations

import io
import json
from collections import defaultdict
from collections.abc import Iterable
from functools import cache, lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

import pyoxigraph as ox

from exports.privacy import PRIVATE_GRAPHS, is_private, private_class_nodes, public_filter
from kg.errors import ExportError
from kg.graphs import graph_iri, graph_name
from kg.results import serialize_triples
from kg.store.base import GraphStore
from kg.vocab import RDF, XSD

if TYPE_CHECKING:
    from exports.lineage import Lineage

__all__ = [
    "CONTEXT_URL",
    "RDF_EXPORT_FORMATS",
    "context",
    "document_loader",
    "export_statements",
    "jsonld_document",
    "lineage_statements",
    "render_lineage_jsonld",
    "render_rdf",
]

#: Where the TechKG JSON-LD context is published.
CONTEXT_URL = "https://w3id.org/techkg/context.jsonld"

#: RDF formats of ``kg export rdf``: name → (usual suffixes, keeps graph names).
RDF_EXPORT_FORMATS: dict[str, tuple[tuple[str, ...], bool]] = {
    "turtle": ((".ttl",), False),
    "ntriples": ((".nt",), False),
    "nquads": ((".nq",), True),
    "trig": ((".trig",), True),
    "jsonld": ((".jsonld", ".json"), True),
}


@cache
def _context_file() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((resources.files("exports") / "assets" / "techkg.context.jsonld")
                                      .read_text(encoding="utf-8"))
    return data


def context() -> dict[str, str]:
    """The published @context: one prefix per TechKG namespace and standard vocabulary."""
    return dict(_context_file()["@context"])


def document_loader(url: str, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """A pyld document loader that serves the published context from the package and
    refuses every other URL (exports never need the network to be read back)."""
    if url.rstrip("/") != CONTEXT_URL:
        from pyld.jsonld import JsonLdError

        raise JsonLdError(f"TechKG's loader only serves {CONTEXT_URL}, not {url}", "jsonld.LoadDocumentError",
                          code="loading document failed")
    return {"contentType": "application/ld+json", "contextUrl": None, "documentUrl": CONTEXT_URL,
            "document": _context_file()}


# -- reading the store ------------------------------------------------------------------


def export_statements(store: GraphStore, *, graph: str | None = None, include_private: bool = False,
                      ) -> list[ox.Quad]:
    """The quads to export: of one named graph (by short name or IRI), or of all of them."""
    if graph is not None:
        target = graph_iri(graph)
        if target in PRIVATE_GRAPHS and not include_private:
            raise ExportError(f"the {graph_name(target)!r} graph holds private reading state",
                              hint="Pass --include-private to export it anyway.")
        if target not in store.named_graphs():
            names = ", ".join(graph_name(g) for g in store.named_graphs()) or "none"
            raise ExportError(f"the store has no named graph {graph!r}", hint=f"Its graphs are: {names}.")
        graphs = [target]
    else:
        graphs = [g for g in store.named_graphs() if include_private or g not in PRIVATE_GRAPHS]
    # The store's own dump is far faster than a CONSTRUCT per graph; the privacy rule is
    # then applied to the parsed quads (private_nodes: the nodes of private classes).
    private_nodes = frozenset() if include_private else private_class_nodes(store)
    out: list[ox.Quad] = []
    if graph is None:
        buffer = io.BytesIO()
        store.dump(buffer, fmt=ox.RdfFormat.N_QUADS)
        for quad in ox.parse(buffer.getvalue(), format=ox.RdfFormat.N_QUADS):
            if isinstance(quad.graph_name, ox.NamedNode) and quad.graph_name in graphs and (
                    include_private or not is_private(quad, private_nodes)):
                out.append(quad)
        return out
    for g in graphs:
        buffer = io.BytesIO()
        store.dump(buffer, fmt=ox.RdfFormat.N_TRIPLES, graph=g)
        for t in ox.parse(buffer.getvalue(), format=ox.RdfFormat.N_TRIPLES):
            quad = ox.Quad(t.subject, t.predicate, t.object, g)
            if include_private or not is_private(quad, private_nodes):
                out.append(quad)
    return out


def lineage_statements(lineage: Lineage) -> list[ox.Triple]:
    """The store's triples about the nodes of a lineage export: its techniques with their
    categories, people and qualified derivations, and the papers and repositories it shows."""
    store = lineage.store
    if store is None:
        raise ExportError("this lineage was built without a store, so its triples are unknown")
    keep = "" if lineage.options.include_private else public_filter()
    subjects = list(lineage.graph.nodes)
    extra: set[str] = set()
    for node in subjects:
        if lineage.graph.nodes[node]["kind"] != "technique":
            continue
        rows = store.select(
            """SELECT ?t ?n WHERE {
                 { ?t skos:broader ?n } UNION { ?t tkg:firstAuthor|tkg:responsibleTeam|tkg:organization ?n }
                 UNION { ?t prov:qualifiedDerivation ?n } UNION { ?t tkg:evidence ?n } }""",
            {"t": ox.NamedNode(node)},
        )
        extra.update(r["n"].value for r in rows if isinstance(r["n"], ox.NamedNode))
    out: list[ox.Triple] = []
    for subject in [*subjects, *sorted(extra - set(subjects))]:
        rows = store.select(f"SELECT ?s ?p ?o WHERE {{ ?s ?p ?o {keep} }}", {"s": ox.NamedNode(subject)})
        for r in rows:
            s, p, o = r["s"], r["p"], r["o"]
            assert isinstance(s, ox.NamedNode) and isinstance(p, ox.NamedNode) and o is not None
            out.append(ox.Triple(s, p, o))
    return list(dict.fromkeys(out))


# -- JSON-LD ----------------------------------------------------------------------------


@lru_cache(maxsize=8192)
def _compact(iri: str, prefixes: tuple[tuple[str, str], ...]) -> str:
    for name, base in prefixes:
        if iri.startswith(base):
            local = iri[len(base):]
            if local and not local.startswith("//"):
                return f"{name}:{local}"
    return iri


def _node_ref(term: ox.NamedNode | ox.BlankNode, prefixes: tuple[tuple[str, str], ...]) -> str:
    return "_:" + term.value if isinstance(term, ox.BlankNode) else _compact(term.value, prefixes)


def _value(term: Any, prefixes: tuple[tuple[str, str], ...]) -> Any:
    if isinstance(term, ox.NamedNode | ox.BlankNode):
        return {"@id": _node_ref(term, prefixes)}
    if isinstance(term, ox.Literal):
        if term.language:
            return {"@value": term.value, "@language": term.language}
        if term.datatype == XSD.string:
            return term.value
        return {"@value": term.value, "@type": _compact(term.datatype.value, prefixes)}
    raise ExportError(f"JSON-LD 1.1 cannot hold the RDF-star term {term}",
                      hint="Export this graph as N-Quads or Turtle instead.")


def _order(term: Any) -> tuple[int, str, str]:
    if isinstance(term, ox.NamedNode):
        return (0, term.value, "")
    if isinstance(term, ox.BlankNode):
        return (1, term.value, "")
    return (2, term.value, term.language or term.datatype.value)


def _nodes(statements: Iterable[ox.Triple | ox.Quad], prefixes: tuple[tuple[str, str], ...]) -> list[dict[str, Any]]:
    by_subject: dict[Any, dict[str, list[Any]]] = defaultdict(lambda: defaultdict(list))
    for st in statements:
        by_subject[st.subject][st.predicate.value].append(st.object)
    keys: dict[str, str] = {}  # predicate IRI -> compact key, computed once per predicate
    nodes = []
    for subject in sorted(by_subject, key=_order):
        node: dict[str, Any] = {"@id": _node_ref(subject, prefixes)}
        properties = by_subject[subject]
        types = [o for o in properties.get(RDF.type.value, []) if isinstance(o, ox.NamedNode | ox.BlankNode)]
        if types:
            node["@type"] = sorted({_node_ref(t, prefixes) for t in types})
        for predicate in sorted(properties):
            values = [o for o in properties[predicate] if not (predicate == RDF.type.value and o in types)]
            if values:
                key = keys.get(predicate) or keys.setdefault(predicate, _compact(predicate, prefixes))
                node[key] = [_value(v, prefixes) for v in sorted(set(values), key=_order)]
        nodes.append(node)
    return nodes


def jsonld_document(statements: Iterable[ox.Triple | ox.Quad], *, context_ref: str = "inline",
                    named_graphs: bool = True) -> dict[str, Any]:
    """Compact JSON-LD of ``statements``; quads keep their graph unless ``named_graphs`` is off."""
    ctx = context()
    prefixes = tuple(sorted(ctx.items(), key=lambda kv: -len(kv[1])))
    doc: dict[str, Any] = {"@context": ctx if context_ref == "inline" else CONTEXT_URL}
    statements = list(statements)
    by_graph: dict[Any, list[ox.Triple | ox.Quad]] = defaultdict(list)
    for st in statements:
        g = st.graph_name if named_graphs and isinstance(st, ox.Quad) else None
        by_graph[None if isinstance(g, ox.DefaultGraph) else g].append(st)
    top = _nodes(by_graph.pop(None, []), prefixes)
    for g in sorted(by_graph, key=str):
        top.append({"@id": _node_ref(g, prefixes), "@graph": _nodes(by_graph[g], prefixes)})
    doc["@graph"] = top
    return doc


def _json(doc: dict[str, Any], *, indent: bool = True) -> bytes:
    text = json.dumps(doc, ensure_ascii=False, indent=1 if indent else None,
                      separators=None if indent else (",", ":"))
    return (text + "\n").encode("utf-8")


# -- rendering --------------------------------------------------------------------------


def render_rdf(store: GraphStore, fmt: str, *, graph: str | None = None, include_private: bool = False,
               context_ref: str = "inline") -> bytes:
    """The dataset (or one named graph) in ``fmt``: turtle, ntriples, nquads, trig or jsonld.

    Triple formats of the whole dataset hold the union of its graphs; N-Quads, TriG and
    JSON-LD keep each triple's graph.
    """
    if fmt not in RDF_EXPORT_FORMATS:
        raise ExportError(f"unknown RDF format {fmt!r}", hint="Use one of: " + ", ".join(RDF_EXPORT_FORMATS))
    quads = export_statements(store, graph=graph, include_private=include_private)
    if fmt == "jsonld":
        # Indentation only while a person might read it; a whole large store is written compactly.
        return _json(jsonld_document(quads, context_ref=context_ref, named_graphs=graph is None),
                     indent=len(quads) <= 50_000)
    if RDF_EXPORT_FORMATS[fmt][1]:
        return serialize_triples(quads, fmt)
    triples = list(dict.fromkeys(ox.Triple(q.subject, q.predicate, q.object) for q in quads))
    return serialize_triples(triples, fmt)


def render_lineage_jsonld(lineage: Lineage) -> bytes:
    """The lineage export as JSON-LD: the store's own triples about its nodes."""
    statements = lineage_statements(lineage)
    if not lineage.options.include_private:
        statements = [t for t in statements if not is_private(t)]
    return _json(jsonld_document(statements))

