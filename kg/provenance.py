"""Where each fact about a node comes from, for ``kg provenance`` and the workbench.

For every fact (property and value) about a node, in each named graph that holds it:

- the run that last wrote that graph, when it ended and when the graph last changed;
- ``sources``, the file or URL the fact was read from: the catalog file that defines the
  node (``kg build`` records ``FILE tkg:defines NODE``), ``lineage.toml`` for a lineage
  fact (the file that defines its ``prov:Derivation``), and otherwise what the graph was
  made from (its ``prov:hadPrimarySource``: the kernel registry for the ``kernels`` graph)
  or, failing that, what the run that wrote it read;
- ``stated_in``, the links that state the fact, where the checked fact table names its
  source (an evidence link with ``tkg:states PROPERTY``, see docs/catalog-format.md).

Sources are IRIs (:mod:`kg.sources`); :func:`kg.sources.source_label` reads them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pyoxigraph as ox

from kg.graphs import PROVENANCE
from kg.store.base import GraphStore
from kg.vocab import LINEAGE_RELATIONS, PROV, TKG

__all__ = ["Fact", "fact_provenance"]

#: Properties whose facts belong to a lineage edge (a prov:Derivation of lineage.toml).
_LINEAGE = {PROV.wasDerivedFrom.value, PROV.qualifiedDerivation.value, *(TKG[r].value for r in LINEAGE_RELATIONS)}


@dataclass
class Fact:
    graph: str
    property: str
    value: ox.NamedNode | ox.Literal | ox.BlankNode
    activity: str | None = None
    ended: str | None = None
    modified: str | None = None
    sources: list[str] = field(default_factory=list)
    stated_in: list[str] = field(default_factory=list)
    #: Whether the fact belongs to a lineage edge (prov:wasDerivedFrom, a typed relation, the derivation).
    lineage: bool = False


def _str(term: Any) -> str | None:
    return None if term is None else str(term.value)


def fact_provenance(store: GraphStore, node: ox.NamedNode) -> list[Fact]:
    """Every fact about ``node`` with where it comes from (see the module documentation),
    ordered by graph, property and value; empty when the graph holds none."""
    rows = store.select(
        f"""SELECT ?graph ?property ?value ?activity ?ended ?modified WHERE {{
              GRAPH ?graph {{ ?node ?property ?value }}
              FILTER(?graph != {PROVENANCE})
              OPTIONAL {{ GRAPH {PROVENANCE} {{ ?graph prov:wasGeneratedBy ?act . ?act rdfs:label ?activity ;
                           prov:endedAtTime ?ended }} }}
              OPTIONAL {{ GRAPH {PROVENANCE} {{ ?graph dcterms:modified ?modified }} }}
            }}""",
        {"node": node},
    )
    if not rows.rows:
        return []
    graph_sources: dict[str, set[str]] = {}
    for row in store.select(f"""SELECT ?graph ?used WHERE {{ GRAPH {PROVENANCE} {{
            {{ ?graph prov:hadPrimarySource ?used }} UNION
            {{ ?graph prov:wasGeneratedBy ?act . ?act prov:used ?used
               FILTER NOT EXISTS {{ ?graph prov:hadPrimarySource ?any }} }} }} }}""").rows:
        graph_sources.setdefault(str(row["graph"].value), set()).add(str(row["used"].value))  # type: ignore[union-attr]
    defined = {str(r["file"].value) for r in store.select(  # type: ignore[union-attr]
        f"SELECT ?file WHERE {{ GRAPH {PROVENANCE} {{ ?file tkg:defines ?node }} }}", {"node": node}).rows}
    # Each lineage edge of the node: its derivation, the parent and the file that defines it.
    derivations: dict[str, str] = {}  # derivation or parent IRI -> file
    for r in store.select(f"""SELECT ?d ?parent ?file WHERE {{ ?node prov:qualifiedDerivation ?d .
            ?d prov:entity ?parent . GRAPH {PROVENANCE} {{ ?file tkg:defines ?d }} }}""", {"node": node}).rows:
        derivations[str(r["d"].value)] = derivations[str(r["parent"].value)] = str(r["file"].value)  # type: ignore[union-attr]
    stated: dict[str, set[str]] = {}  # property -> links that state it
    for r in store.select("""SELECT ?property ?url WHERE { ?node tkg:evidence ?ev .
            ?ev tkg:states ?property ; schema:url ?url }""", {"node": node}).rows:
        stated.setdefault(str(r["property"].value), set()).add(str(r["url"].value))  # type: ignore[union-attr]
    facts = []
    for row in rows.rows:
        graph, prop, value = str(row["graph"].value), str(row["property"].value), row["value"]  # type: ignore[union-attr]
        assert isinstance(value, ox.NamedNode | ox.Literal | ox.BlankNode)
        made_from = graph_sources.get(graph, set())
        lineage = prop in _LINEAGE
        edge_file = derivations.get(str(value.value)) if lineage and isinstance(value, ox.NamedNode) else None
        if edge_file is not None and edge_file in made_from:
            sources = {edge_file}
        else:
            sources = (defined & made_from) or made_from
        said = stated.get(PROV.wasDerivedFrom.value if lineage else prop, set())
        facts.append(Fact(graph, prop, value, _str(row.get("activity")), _str(row.get("ended")),
                          _str(row.get("modified")), sorted(sources), sorted(said), lineage))
    facts.sort(key=lambda f: (f.graph, f.property, str(f.value.value)))
    return facts
