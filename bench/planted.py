"""A citation planted in a store, so that ``kg suggest lineage`` has an edge to propose
and ``kg suggest accept`` can be timed on the scale benchmark's store (issue #32).

The bench corpus holds no Semantic Scholar citations (``kg ingest citations`` writes them),
so nothing would be suggested. One citation is written into the ``citations`` graph as
``kg ingest citations`` writes it (:func:`ingest.citations.edge_triples`): the primary paper
of KDA cites the primary paper of GQA, influential, with the methodology intent, in a
sentence that names GQA in lineage wording. The catalog has no edge between the two, so
the pair is proposed (the citation tests plant the same one).

    python -m bench.planted STORE      # prints the pair as JSON
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

CHILD, PARENT = "kda", "gqa"
SENTENCE = "Following GQA, we share keys and values across heads."


def plant(store_path: Path) -> dict[str, str]:
    """Write the citation (see the module doc) into the store at ``store_path``; returns the
    two techniques' ids and papers."""
    import pyoxigraph as ox

    from ingest.citations import edge_triples
    from ingest.semanticscholar import S2Edge, S2Paper
    from kg.citations import Context
    from kg.graphs import CITATIONS
    from kg.iris import technique_iri
    from kg.store.embedded import OxigraphStore
    from kg.vocab import TKG

    store = OxigraphStore(store_path)
    try:
        papers: dict[str, ox.NamedNode] = {}
        for technique in (CHILD, PARENT):
            iri = technique_iri(technique).value
            rows = store.select(f"SELECT ?p WHERE {{ <{iri}> <{TKG.primaryPaper.value}> ?p }}")
            found = [row["p"] for row in rows if isinstance(row["p"], ox.NamedNode)]
            if not found:
                raise SystemExit(f"{technique} has no primary paper in {store_path}: run kg build first")
            papers[technique] = found[0]
        edge = S2Edge(S2Paper(None), contexts=(Context(SENTENCE, ("methodology",)),),
                      intents=frozenset({"methodology"}), influential=True)
        triples = edge_triples(papers[CHILD], papers[PARENT], edge)
        with store.transaction("bench: a planted citation") as tx:
            tx.insert(CITATIONS, triples)
    finally:
        store.close()
    return {"child": CHILD, "parent": PARENT, "citing": papers[CHILD].value, "cited": papers[PARENT].value}


def main() -> None:
    from kg.store.folder import MARKER

    parser = argparse.ArgumentParser(prog="python -m bench.planted", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("store", type=Path, help="an embedded store built by kg build (it is written to: use a copy)")
    args = parser.parse_args()
    if not (args.store / MARKER).exists():
        parser.error(f"{args.store} is not a TechKG store: pass the folder kg build made (a copy)")
    print(json.dumps(plant(args.store)))


if __name__ == "__main__":
    main()
