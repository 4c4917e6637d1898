"""What stays out of an export unless the user asks for it with ``--include-private``.

A reader's reading state is private: each paper's status and its history, when it was
added, whether the reader keeps a note and the notes themselves (with their history), the
techniques they follow, the links of their
reading list (notes, PDFs, tags) and everything a Zotero sync keeps about its state.
The vocabulary that *defines* these terms (the ontology) is not private; its use is.

Every export goes through this module, so the rule lives in one place: the SPARQL
filter :func:`public_filter` for exports that read the store, and
:func:`is_private` for triples already in hand.
"""

from __future__ import annotations

from pyoxigraph import NamedNode, Quad, Triple

from kg.graphs import FOLLOWS, READING, ZOTERO_SYNC
from kg.store.base import GraphStore
from kg.vocab import ID, RDF, TKG

__all__ = [
    "PRIVATE_CLASSES",
    "PRIVATE_GRAPHS",
    "PRIVATE_IRI_PREFIXES",
    "PRIVATE_PREDICATES",
    "is_private",
    "private_class_nodes",
    "public_filter",
]

#: Named graphs that hold nothing but private state.
PRIVATE_GRAPHS: tuple[NamedNode, ...] = (READING, ZOTERO_SYNC, FOLLOWS)

#: Properties whose every use is private.
PRIVATE_PREDICATES: tuple[NamedNode, ...] = (
    TKG.readingStatus,
    TKG.listedStatus,
    TKG.statusChangedAt,
    TKG.addedAt,
    TKG.hasNote,
    TKG.noteOf,
    TKG.previousStatus,
    TKG.deletedAt,
    TKG.follows,
    TKG.followedAt,
    TKG.linkLabel,
    TKG.link,
    # What a Zotero sync keeps: the user's library id, note keys and raw sync records.
    TKG.library,
    TKG.noteKey,
    TKG.graphSnapshot,
    TKG.baseRecord,
    TKG.remoteRecord,
    TKG.authoredRecord,
    TKG.zoteroItem,
    TKG.zoteroKey,
    TKG.tag,
)

#: Nodes of these classes are private, with every triple about them or pointing at them.
PRIVATE_CLASSES: tuple[NamedNode, ...] = (
    TKG.ReadingEvent,
    TKG.ReadingRemoval,
    TKG.ReadingStatus,
    TKG.Note,
    TKG.NoteEvent,
    TKG.SyncState,
    TKG.SyncConflict,
    TKG.ZoteroItem,
)

#: IRIs minted for private things: statuses, their scheme, reading events and notes.
PRIVATE_IRI_PREFIXES: tuple[str, ...] = (
    ID.base + "status/",
    ID.base + "scheme/reading-status",
    ID.base + "reading-event/",
    ID.base + "note/",
)


_PRIVATE_PREDICATES = frozenset(PRIVATE_PREDICATES)
_PRIVATE_CLASSES = frozenset(PRIVATE_CLASSES)


def _private_iri(value: str) -> bool:
    return value.startswith(PRIVATE_IRI_PREFIXES) or any(value == g.value for g in PRIVATE_GRAPHS)


def is_private(statement: Triple | Quad, private_nodes: frozenset[str] = frozenset()) -> bool:
    """Whether one triple (or quad) is private. ``private_nodes`` holds IRIs known to be
    of a private class (see :data:`PRIVATE_CLASSES`)."""
    if isinstance(statement, Quad) and statement.graph_name in PRIVATE_GRAPHS:
        return True
    s, p, o = statement.subject, statement.predicate, statement.object
    if p in _PRIVATE_PREDICATES:
        return True
    if p == RDF.type and o in _PRIVATE_CLASSES:
        return True
    for node in (s, o):
        if isinstance(node, NamedNode) and (_private_iri(node.value) or node.value in private_nodes):
            return True
    return False


def private_class_nodes(store: GraphStore) -> frozenset[str]:
    """IRIs of every node typed with one of :data:`PRIVATE_CLASSES`."""
    classes = " ".join(str(c) for c in PRIVATE_CLASSES)
    rows = store.select(f"SELECT DISTINCT ?node WHERE {{ VALUES ?class {{ {classes} }} ?node a ?class }}")
    return frozenset(r["node"].value for r in rows if isinstance(r["node"], NamedNode))


def public_filter(s: str = "?s", p: str = "?p", o: str = "?o") -> str:
    """SPARQL that keeps only public triples of the pattern ``s p o`` (place it in the
    same group as the pattern)."""
    predicates = ", ".join(str(n) for n in PRIVATE_PREDICATES)
    classes = " ".join(str(n) for n in PRIVATE_CLASSES)
    graphs = ", ".join(str(g) for g in PRIVATE_GRAPHS)

    def not_private(var: str) -> str:
        starts = " || ".join(f'STRSTARTS(STR({var}), "{prefix}")' for prefix in PRIVATE_IRI_PREFIXES)
        return f"!(isIRI({var}) && ({starts} || {var} IN ({graphs})))"

    return (
        f"FILTER({p} NOT IN ({predicates}))\n"
        f"FILTER({not_private(s)} && {not_private(o)})\n"
        f"FILTER NOT EXISTS {{ VALUES ?privateClass {{ {classes} }} {s} a ?privateClass }}\n"
        f"FILTER NOT EXISTS {{ VALUES ?privateClass2 {{ {classes} }} {o} a ?privateClass2 }}\n"
    )
