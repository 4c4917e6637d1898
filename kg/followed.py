"""The techniques the reader follows, for what is new (``kg news``, the feeds) and for the
papers given to Semantic Scholar's recommendations as ones to be like.

STAND-IN, FOR THE INTEGRATOR: issue #29 (own techniques, follows) writes ``kg.follows`` with
``followed(store)``, which reads the same triples. Replace :func:`followed` with it and remove
this module when merging; its callers need only the (technique IRI, inferred) pairs.

Followed techniques are ``?reader tkg:follows ?technique`` in the user graph ``follows``
(the agreed model; any graph and subject are read here). With none, the reader is taken to
follow what :mod:`kg.readnext` infers: the techniques whose primary paper is on the reading
list, and those the papers read introduce, extend or use (kg link's links, or the reader's).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyoxigraph import NamedNode

if TYPE_CHECKING:
    from kg.store.base import GraphStore

__all__ = ["followed"]

_READ = "https://w3id.org/techkg/id/status/read"


def followed(store: GraphStore) -> list[tuple[str, bool]]:
    """(technique IRI, whether it is inferred) for every technique the reader follows, in IRI
    order: those followed explicitly, or, when there are none, those inferred."""
    rows = store.select("SELECT DISTINCT ?t WHERE { ?reader tkg:follows ?t FILTER(isIRI(?t)) } ORDER BY ?t")
    explicit = [row["t"].value for row in rows.rows if isinstance(row["t"], NamedNode)]
    if explicit:
        return [(t, False) for t in explicit]
    rows = store.select(
        f"""SELECT DISTINCT ?t WHERE {{ ?t a tkg:Technique .
              {{ ?t tkg:primaryPaper ?p . ?p tkg:readingStatus ?s }}
              UNION {{ ?r tkg:readingStatus <{_READ}> ;
                         tkg:introducesTechnique|tkg:extendsTechnique|tkg:usesTechnique ?t }} }} ORDER BY ?t""")
    return [(row["t"].value, True) for row in rows.rows if isinstance(row["t"], NamedNode)]
