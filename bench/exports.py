"""Export benchmark (issue #7): lineage and RDF exports on the synthetic corpus loaded on
top of ``kg build``, each timed side by side with a baseline in the same run.

    python -m bench.exports                 # 100k papers ≈ 1.3M triples
    python -m bench.exports --papers 10000  # quicker

Baselines: networkx's own GraphML/GEXF/Cytoscape writers on the same graph; one
CONSTRUCT of the relation triples into a bare networkx graph (what our attribute-rich
lineage costs on top); Graphviz on a plain DOT of the same edges (what clusters and
labels cost); Oxigraph's native N-Quads dump and JSON-LD serializer (what the privacy
filter and compact JSON-LD cost); bibtexparser's writer for the same entries.
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import networkx as nx
import pyoxigraph as ox

from bench.corpus import generate

ROW = "{:44} {:>12} {:>40} {:>8}"


def _time(fn: Callable[[], Any], runs: int) -> tuple[float, Any]:
    """Median seconds of ``runs`` calls (after one warm-up call) and the last result."""
    result = fn()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        result = fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples), result


def _row(what: str, ours: float, baseline_name: str, baseline: float) -> None:
    print(ROW.format(what, f"{ours * 1000:,.1f} ms", f"{baseline_name} {baseline * 1000:,.1f} ms",
                     f"{ours / baseline:.2f}x" if baseline else "-"), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    from exports import render_lineage
    from exports.bibtex import bibliography, render_bibtex
    from exports.dot import render_dot, run_dot
    from exports.lineage import LineageOptions, build_lineage
    from exports.rdf import render_rdf
    from kg.build import build
    from kg.graphs import graph_iri
    from kg.store.base import Activity
    from kg.store.embedded import OxigraphStore

    with tempfile.TemporaryDirectory() as tmp:
        corpus = generate(args.papers, out=Path(tmp) / "corpus.nt")
        store = OxigraphStore(Path(tmp) / "store")
        build(store, validate=False)
        store.load_file(corpus.path, graph=graph_iri("bench"), fmt=ox.RdfFormat.N_TRIPLES, gzipped=False,
                        activity=Activity("bench load"))
        total = store.count()
        print(f"corpus: {corpus.triples:,} triples ({corpus.papers:,} papers, {corpus.techniques} synthetic "
              f"techniques) on top of kg build: {total:,} quads\n")
        print(ROW.format("measure", "TechKG", "baseline", "ratio"))

        # -- the lineage graph ------------------------------------------------------------
        lineage_s, lineage = _time(lambda: build_lineage(store), args.runs)
        relation_query = """CONSTRUCT { ?c ?r ?p } WHERE { VALUES ?r { tkg:refines tkg:generalizes
            tkg:specializes tkg:replaces tkg:combines tkg:extends tkg:inverts tkg:reimplements tkg:portsTo
            tkg:buildsOn tkg:implements } ?c ?r ?p }"""

        def bare() -> nx.MultiDiGraph:
            g = nx.MultiDiGraph()
            triples = store.query(relation_query)
            assert isinstance(triples, list)
            for t in triples:
                g.add_edge(str(t.object), str(t.subject), key=t.predicate.value)
            return g

        bare_s, bare_graph = _time(bare, args.runs)
        print(f"  lineage: {len(lineage.techniques())} techniques, {len(lineage.lineage_edges())} relations "
              f"(bare graph: {bare_graph.number_of_edges()} relations)")
        _row("lineage graph with card attributes", lineage_s, "bare CONSTRUCT→networkx", bare_s)

        graph = lineage.graph
        for fmt, writer in (("graphml", nx.write_graphml), ("gexf", nx.write_gexf)):
            ours_s, _ = _time(partial(render_lineage, lineage, fmt), args.runs)
            theirs_s, _ = _time(partial(writer, graph, io.BytesIO()), args.runs)
            _row(f"{fmt} writer", ours_s, f"networkx write_{fmt}", theirs_s)
        ours_s, _ = _time(lambda: render_lineage(lineage, "cytoscape"), args.runs)
        theirs_s, _ = _time(lambda: json.dumps(nx.cytoscape_data(graph)), args.runs)
        _row("cytoscape.js JSON (incl. Graphviz layout)", ours_s, "networkx cytoscape_data", theirs_s)
        ours_s, page = _time(lambda: render_lineage(lineage, "html"), 1)
        _row(f"HTML page ({len(page) / 1e6:.1f} MB)", ours_s, "networkx cytoscape_data", theirs_s)

        plain = "digraph { " + " ".join(f'"{u}" -> "{v}";' for u, v in graph.edges()) + " }"
        ours_s, svg = _time(lambda: run_dot(render_dot(lineage), "svg"), 1)
        theirs_s, _ = _time(lambda: run_dot(plain, "svg"), 1)
        _row("SVG by Graphviz (clusters, labels)", ours_s, "plain DOT of the same edges", theirs_s)
        assert svg.warnings == "", svg.warnings

        small = build_lineage(store, LineageOptions(root="transformer", depth=3, with_papers=True))
        ours_s, _ = _time(lambda: build_lineage(store, LineageOptions(root="transformer", depth=3,
                                                                      with_papers=True)), args.runs)
        print(f"  transformer, 3 steps, with papers: {small.graph.number_of_nodes():,} nodes")
        _row("root lineage with papers", ours_s, "bare CONSTRUCT→networkx", bare_s)

        # -- RDF --------------------------------------------------------------------------
        def dump_nquads() -> bytes:
            out = io.BytesIO()
            store.dump(out, fmt=ox.RdfFormat.N_QUADS)
            return out.getvalue()

        raw_s, raw = _time(dump_nquads, 1)
        ours_s, public = _time(lambda: render_rdf(store, "nquads"), 1)
        newline = b"\n"
        print(f"  N-Quads: {raw.count(newline):,} quads in the store, {public.count(newline):,} public")
        _row("N-Quads, private state filtered", ours_s, "Oxigraph dump (unfiltered)", raw_s)
        ours_s, _ = _time(lambda: render_rdf(store, "nquads", include_private=True), 1)
        _row("N-Quads, --include-private", ours_s, "Oxigraph dump (unfiltered)", raw_s)
        quads = list(ox.parse(raw, format=ox.RdfFormat.N_QUADS))
        theirs_s, _ = _time(lambda: ox.serialize(quads, format=ox.RdfFormat.JSON_LD), 1)
        ours_s, _ = _time(lambda: render_rdf(store, "jsonld", include_private=True), 1)
        _row("JSON-LD (compact, @context)", ours_s, "Oxigraph JSON-LD (expanded)", theirs_s)

        # -- BibTeX -----------------------------------------------------------------------
        import bibtexparser
        from bibtexparser.bibdatabase import BibDatabase

        start = time.perf_counter()
        entries = bibliography(store)
        first_s = time.perf_counter() - start
        again_s, entries = _time(lambda: bibliography(store), 1)
        render_s, _ = _time(lambda: render_bibtex(entries), args.runs)
        db = BibDatabase()
        db.entries = [{"ENTRYTYPE": e.type, "ID": e.key, **e.fields} for e in entries]
        theirs_s, _ = _time(lambda: bibtexparser.dumps(db), args.runs)
        print(f"  reading list: {len(entries):,} entries")
        _row("BibTeX, first export (assigns keys)", first_s, "second export (keys stored)", again_s)
        _row("BibTeX text", render_s, "bibtexparser dumps", theirs_s)
        store.close()


if __name__ == "__main__":
    main()
