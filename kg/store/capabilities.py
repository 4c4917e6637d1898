"""What one SPARQL server does and does not do, found out once per store.

rdflib's store plugins declare their capabilities as class attributes
(``context_aware``, ``transaction_aware``, ...). A remote server cannot be known in
advance, so :class:`Capabilities` holds the same kind of declarations for the server
behind one :class:`~kg.store.remote.RemoteStore`, each settled the first time it
matters (by the server's name, by a small probe query, or by what an answer shows)
and then kept for the life of the store. The remote store reads them to decide how
to write and which rewrites of :mod:`kg.sparqlrewrite` a query needs.

The probes need no data: they bind constants with VALUES, so they give the same
answer on an empty store as on a full one.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "GRAPHS_BY_NAME",
    "GRAPHS_OF_TRIPLES",
    "ORDER_BY_ALIAS_PROBE",
    "SAME_TERM_PROBE",
    "VALUES_PATH_PROBE",
    "Capabilities",
    "row_probe",
]

#: A VALUES binding beside a property path: a correct server answers one row (the
#: zero-length path from the bound node to itself) or none (if it matches only nodes of
#: its data). Virtuoso 7 says "transitive start not given" here, and when more of the
#: query surrounds the path it ignores the binding or misjoins what is beside it.
VALUES_PATH_PROBE = (
    "SELECT ?x WHERE { VALUES ?a { <urn:techkg:probe:a> } ?a <urn:techkg:probe:p>* ?x }"
)
#: ORDER BY an expression over an aggregate's alias: two rows, (2 3) before (1 5).
ORDER_BY_ALIAS_PROBE = (
    "SELECT ?x (SAMPLE(?y) AS ?n) WHERE { VALUES (?x ?y) { (1 5) (2 3) } } GROUP BY ?x ORDER BY (!BOUND(?n)) ?n"
)

#: sameTerm of a simple literal and itself: one row. Virtuoso 7 answers none: its sameTerm
#: never matches a simple literal (though "kernel" = "kernel"), and over stored values a
#: disjunction of two sameTerm tests matches nothing.
SAME_TERM_PROBE = 'SELECT ?x WHERE { VALUES ?v { "a" } BIND(1 AS ?x) FILTER(sameTerm(?v, "a")) }'


#: The non-empty named graphs, found from the dataset's graph names: Oxigraph lists them
#: without reading their triples (at 9.4M quads, 0.01 s against 3.6 s for
#: :data:`GRAPHS_OF_TRIPLES`). Virtuoso 7 answers none.
GRAPHS_BY_NAME = "SELECT ?g WHERE { GRAPH ?g { } FILTER EXISTS { GRAPH ?g { ?s ?p ?o } } }"
#: The named graphs that hold triples, found from the triples. GROUP BY, not DISTINCT:
#: Virtuoso 7 answers the same question twenty times faster so.
GRAPHS_OF_TRIPLES = "SELECT ?g WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g"


def row_probe(rows: int) -> str:
    """A query with ``rows`` one-character solutions and no data: a server that caps
    results answers fewer, which reveals its cap."""
    digits = "{ 0 1 2 3 4 5 6 7 8 9 }"
    blocks: list[str] = []
    n = 1
    while n < rows:
        blocks.append(f"VALUES ?d{len(blocks)} {digits}")
        n *= 10
    return f"SELECT ?x WHERE {{ {' '.join(blocks)} BIND(1 AS ?x) }} LIMIT {rows}"


#: What is known of servers by name, before any probe. Virtuoso 7 compiles an update to
#: SQL and refuses one over 10,000 lines of it ("SP031"): about 1,000 data triples, and
#: past a few hundred each request gets slower per triple.
#: Virtuoso also applies the operations of one request one by one: when one fails, those
#: before it stay written.
#: Virtuoso 7 drops the OPTIONALs that follow an OPTIONAL ending in a BIND (whatever the
#: bindings; no probe without data shows it), so such BINDs move after their groups.
#: Its TSV results drop language tags ("KDA", not "KDA"@en): TechKG writes TSV itself.
#: Virtuoso's Graph Store endpoint (/sparql-graph-crud, granted with SPARQL_UPDATE) parses
#: an upload natively, tens of times faster than INSERT DATA, which it compiles to SQL.
_KNOWN: dict[str, dict[str, int | bool | str]] = {
    "virtuoso": {"update_triples": 400, "atomic_updates": False, "graph_store": "/sparql-graph-crud",
                 "optional_bind": False, "tsv_terms": False, "graphs_by_name": False}}


@dataclass
class Capabilities:
    """The declared capabilities of one server; None means not found out yet."""

    #: The product in the server's ``Server`` header, lower-cased ("virtuoso", "oxigraph").
    server: str | None = None
    #: Whether the default graph is the union of the named graphs.
    union_default: bool | None = None
    #: Whether VALUES blocks bind variables as constants would (probed beside a property
    #: path, where Virtuoso 7 fails plainly). Where not, every single-term binding is
    #: written as a constant: such a server misjoins VALUES elsewhere too (Virtuoso drops
    #: an OPTIONAL that follows one holding a BIND, beside a VALUES block).
    values_bind: bool | None = None
    #: Whether a BIND may end an OPTIONAL group (where not: kg.sparqlrewrite.binds_after_optionals).
    optional_bind: bool | None = None
    #: Whether the server's own TSV results write every term whole (where not, TechKG
    #: fetches SPARQL results and writes the TSV).
    tsv_terms: bool | None = None
    #: Whether the server lists its named graphs by name (:data:`GRAPHS_BY_NAME`), not only
    #: from their triples.
    graphs_by_name: bool | None = None
    #: Whether ORDER BY may use an expression over an aggregate's alias.
    order_by_alias: bool | None = None
    #: Whether sameTerm against a constant can be trusted (where not, it is written as the
    #: equality it means: kg.sparqlrewrite.same_term_as_equality).
    same_term: bool | None = None
    #: Whether one update request of several operations is applied all or nothing (where
    #: not, a transaction of several operations is always staged).
    atomic_updates: bool | None = None
    #: The most data triples one update request may carry; None: no limit known.
    update_triples: int | None = None
    #: Where the server takes Graph Store Protocol uploads when the store names no ``gsp=``
    #: (relative to the query URL; "" where it refused one: uploads go in INSERT DATA).
    graph_store: str | None = None
    #: The most rows (or triples) one answer holds (Virtuoso: ResultSetMaxRows); None: none seen.
    row_cap: int | None = None
    #: The longest answer seen whole (and proven uncapped by a probe).
    uncapped: int = 0

    def saw_server(self, header: str) -> None:
        """Record the ``Server`` header of the first answer, and what that name implies."""
        if self.server is not None:
            return
        self.server = header.split("/")[0].strip().lower()
        for key, value in _KNOWN.get(self.server, {}).items():
            if getattr(self, key) is None:
                setattr(self, key, value)
