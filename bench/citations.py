"""Citation benchmark (issue #17): what a refresh costs in requests, ingest throughput, and
``kg suggest lineage`` / ``kg suggest reading`` on the synthetic corpus with citations.

    python -m bench.citations                          # 1,000 x 50 refresh; 100k papers, 500k citations
    python -m bench.citations --papers 10000 --citations 50000 --tracked 200   # quicker

1. **Requests.** The Semantic Scholar emulator (real HTTP on loopback) serves ``--tracked``
   papers with ``--per-paper`` citations each; a store tracks them. A first run, a refresh
   where nothing changed, and a refresh after ``--changed`` papers gained a citation are
   counted request by request. Targets: at most 2 batch requests (500 ids each) plus one
   list request per paper whose count changed, and 0 list requests when nothing changed.
2. **Throughput.** Citations per second of the first run (fetch, merge, one transaction),
   against fetching the same lists alone (the baseline: what the HTTP costs).
3. **Suggestions at scale.** ``bench.corpus`` (100k papers ≈ 1.3M triples) on top of
   ``kg build``, plus ``--citations`` citations written in the ``citations`` graph as
   ``kg ingest citations`` writes them (intents, influential flags, cito:Citation nodes
   with context sentences, some naming a technique in lineage wording), and the analytics
   tables built once (``kg analytics build``). ``lineage_report`` and
   ``reading_suggestions`` are timed in process (median of 3) on both paths, SPARQL and
   the DuckDB tables, and so are the real ``kg suggest`` commands (median of 5, after one
   unmeasured run, with Python's bytecode cache as an installed kg has it), with the
   tables fresh and with none (the SPARQL fallback). With fresh tables, twice: as every
   command after the first (the memo of kg.analytics.suggest answers without opening the
   store) and as the first after a write ("store opened": the memo deleted before each
   run). The baselines, in the same run: one full scan of the citations graph, and
   ``kg --help`` before and after (what starting the CLI costs), and the load average.
   Every path must give the same answers; target: each command < 1 s end to end on the
   DuckDB path.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.corpus import BASE, generate

CITO = "http://purl.org/spar/cito/"
TKG = "https://w3id.org/techkg/ns#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
XSD = "http://www.w3.org/2001/XMLSchema#"
INTENT_PROPS = {"methodology": CITO + "usesMethodIn", "background": CITO + "obtainsBackgroundFrom",
                "result": CITO + "usesConclusionsFrom"}


def _median(fn: Callable[[], Any], runs: int = 3) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(runs):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


# -- 1 and 2: requests and throughput ------------------------------------------------------


def refresh_bench(tracked: int, per_paper: int, changed: int, workdir: Path) -> dict[str, Any]:
    import pyoxigraph as ox

    from ingest.citations import CitationRun, ingest_citations
    from ingest.emulators.semanticscholar import SemanticScholarEmulator
    from ingest.http import Politeness, RetryPolicy, build_client
    from ingest.semanticscholar import RETRY_STATUSES, SemanticScholarSource
    from kg.graphs import graph_iri
    from kg.store.base import Activity
    from kg.store.embedded import OxigraphStore
    from kg.vocab import BIBO, DCTERMS, text

    rng = random.Random(17)
    out: dict[str, Any] = {}
    with SemanticScholarEmulator() as emu:
        ids = [emu.add_paper(f"Tracked paper {i}", year=2024, doi=f"10.5555/bench.{i}", authors=[f"Author {i}"])
               for i in range(tracked)]
        citers = [emu.add_paper(f"Citing paper {i}", year=2025, doi=f"10.5555/bench.citing.{i}",
                                authors=[f"Writer {i % 97}"]) for i in range(max(per_paper * 4, 200))]
        for pid in ids:
            for citer in rng.sample(citers, per_paper):
                emu.cite(citer, pid, contexts=[("We use the method of this paper.", ["methodology"])],
                         influential=rng.random() < 0.1)
        store = OxigraphStore(workdir / "refresh-store")
        triples = []
        for i in range(tracked):
            node = ox.NamedNode(f"https://doi.org/10.5555/bench.{i}")
            triples += [ox.Triple(node, ox.NamedNode(RDF + "type"), BIBO.Document),
                        ox.Triple(node, DCTERMS.title, text(f"Tracked paper {i}", None)),
                        ox.Triple(node, BIBO.doi, text(f"10.5555/bench.{i}", None))]
        with store.transaction(Activity("bench: tracked papers")) as tx:
            tx.replace_graph(graph_iri("import/bench-tracked"), triples)
        client = build_client("semanticscholar", politeness=Politeness(0.0), retry_statuses=RETRY_STATUSES,
                              retry=RetryPolicy(attempts=3, base=0.05))
        source = SemanticScholarSource(client=client, api_url=emu.url)

        def counted(label: str, run: CitationRun | None = None) -> None:
            emu.requests.clear()
            start = time.perf_counter()
            report = ingest_citations(store, source, run)
            seconds = time.perf_counter() - start
            batch = sum(1 for r in emu.requests if r.path.endswith("/batch"))
            lists = sum(1 for r in emu.requests if r.method == "GET")
            out[label] = {"batch": batch, "lists": lists, "seconds": seconds, "written": report.graph_written}

        counted("first run")
        citations = tracked * per_paper
        out["throughput"] = citations / out["first run"]["seconds"]
        counted("refresh, nothing changed")
        extra = emu.add_paper("A late citer", year=2026, doi="10.5555/bench.late")
        for pid in rng.sample(ids, changed):
            emu.cite(extra, pid, contexts=[("Following this paper, we ...", ["methodology"])])
        counted(f"refresh, {changed} changed")
        # Baseline: the same lists fetched alone, no graph.
        start = time.perf_counter()
        for pid in ids:
            source.edges(pid, "citations")
            source.edges(pid, "references")
        out["fetch only"] = time.perf_counter() - start
        client.close()
        store.close()
    return out


# -- 3: suggestions at scale -------------------------------------------------------------


def citations_file(corpus: Path, n_citations: int, out: Path, *, seed: int = 17) -> dict[str, int]:
    """N-Triples of ``n_citations`` citations between the corpus's papers, as ``kg ingest
    citations`` writes them, with technique names in some context sentences."""
    import hashlib

    papers = 0
    primary: dict[str, str] = {}  # paper -> technique
    names: dict[str, str] = {}
    with open(corpus, encoding="utf-8") as fh:
        for line in fh:
            if f"<{TKG}primaryPaper>" in line:
                s, _p, o = line.split(" ", 2)
                primary[o.rstrip(" .\n").strip("<>")] = s.strip("<>")
            elif "skos/core#prefLabel> \"Synthetic technique" in line:
                s = line.split(" ", 1)[0].strip("<>")
                names[s] = line.split('"')[1]
            elif f"<{BASE}paper/" in line.split(" ", 1)[0] and "22-rdf-syntax-ns#type>" in line:
                papers += 1
    rng = random.Random(seed)
    technique_names = list(names.values())
    per_paper = max(1, n_citations // max(1, papers - 1))
    counts = {"citations": 0, "with_contexts": 0, "triples": 0}

    def node(kind: str, *parts: str) -> str:
        return "https://w3id.org/techkg/.well-known/genid/" + hashlib.sha1("\x1f".join((kind, *parts)).encode()
                                                                            ).hexdigest()[:20]

    with open(out, "w", encoding="utf-8") as fh:
        def t(s: str, p: str, o: str) -> None:
            fh.write(f"<{s}> <{p}> {o} .\n")
            counts["triples"] += 1

        for i in range(1, papers):
            if counts["citations"] >= n_citations:
                break
            citing = f"{BASE}paper/{i}"
            targets = {rng.randrange(i) for _ in range(per_paper)}
            if citing in primary and primary:
                targets |= {int(p.rsplit("/", 1)[-1]) for p in rng.sample(sorted(primary), 2)
                            if int(p.rsplit("/", 1)[-1]) < i}
            for j in targets:
                cited = f"{BASE}paper/{j}"
                counts["citations"] += 1
                t(citing, CITO + "cites", f"<{cited}>")
                roll = rng.random()
                intents = ["methodology"] if roll < 0.3 else ["background"] if roll < 0.7 else \
                    ["result"] if roll < 0.8 else []
                influential = rng.random() < 0.1
                for intent in intents:
                    t(citing, INTENT_PROPS[intent], f"<{cited}>")
                if influential:
                    t(citing, TKG + "citesInfluentially", f"<{cited}>")
                if rng.random() < 0.2 or citing in primary:
                    counts["with_contexts"] += 1
                    c = node("citation", citing, cited)
                    x = node("citation-context", citing, cited, "1")
                    name = rng.choice(technique_names) if technique_names and citing in primary else "prior work"
                    sentence = f"We extend {name} with a sparse variant." if intents == ["methodology"] else \
                        f"{name} is related work."
                    facts = [
                        (c, RDF + "type", f"<{CITO}Citation>"), (c, CITO + "hasCitingEntity", f"<{citing}>"),
                        (c, CITO + "hasCitedEntity", f"<{cited}>"),
                        (c, TKG + "influential", f'"{"true" if influential else "false"}"^^<{XSD}boolean>'),
                        (c, TKG + "citationContext", f"<{x}>"), (x, RDF + "type", f"<{TKG}CitationContext>"),
                        (x, RDF + "value", f'"{sentence}"'), (x, TKG + "position", f'"1"^^<{XSD}integer>'),
                        *[(c, CITO + "hasCitationCharacterization", f"<{INTENT_PROPS[i]}>") for i in intents],
                        *[(x, TKG + "intent", f'"{i}"') for i in intents]]
                    for subject, predicate, value in facts:
                        t(subject, predicate, value)
    return counts


def scale_bench(n_papers: int, n_citations: int, workdir: Path) -> dict[str, Any]:
    import pyoxigraph as ox

    from kg.analytics.suggest import DuckDBReadingFacts, lineage_facts, open_tables
    from kg.graphs import CITATIONS
    from kg.readnext import reading_suggestions
    from kg.store.base import Activity
    from kg.store.embedded import OxigraphStore
    from kg.suggestions import lineage_report

    kg = Path(sys.executable).with_name("kg")
    store_dir = workdir / "scale-store"
    # The commands run as an installed kg does: with Python's bytecode cache (kept in the
    # work folder), whatever PYTHONDONTWRITEBYTECODE this shell sets.
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, "KG_STORE": str(store_dir),
           "PATH": str(kg.parent), "PYTHONPYCACHEPREFIX": str(workdir / "pycache")}
    # The SPARQL path as a user without analytics tables gets it: the tables looked for elsewhere.
    no_tables = {**env, "KG_ANALYTICS_DB": str(workdir / "no-such.duckdb")}
    out: dict[str, Any] = {}
    start = time.perf_counter()
    corpus = generate(n_papers, out=workdir / f"corpus-{n_papers}.nt")
    subprocess.run([str(kg), "build", "--no-validate"], check=True, capture_output=True, env=env)
    subprocess.run([str(kg), "import", "rdf", str(corpus.path), "--graph", "bench", "--no-link"], check=True,
                   capture_output=True, env=env)
    cites = workdir / "citations.nt"
    counts = citations_file(corpus.path, n_citations, cites)
    store = OxigraphStore(store_dir)
    store.load_file(cites, graph=CITATIONS, fmt=ox.RdfFormat.N_TRIPLES, gzipped=False,
                    activity=Activity("bench: citations"))
    store.close()
    out["setup seconds"] = time.perf_counter() - start
    built = time.perf_counter()
    subprocess.run([str(kg), "analytics", "build"], check=True, capture_output=True, env=env)
    out["analytics build seconds"] = time.perf_counter() - built
    out.update(counts)
    out["corpus triples"] = corpus.triples
    store = OxigraphStore(store_dir)
    some = ox.NamedNode(corpus.deepest)

    def from_tables(answer: Callable[[Any], Any]) -> Any:
        con, note = open_tables(store)
        assert con is not None, note
        try:
            return answer(con)
        finally:
            con.close()

    out["baseline: scan of the citations graph"], _ = _median(lambda: store.count(CITATIONS))
    out["suggest lineage, SPARQL"], report = _median(lambda: lineage_report(store))
    out["suggest lineage, DuckDB"], duck = _median(lambda: from_tables(
        lambda con: lineage_report(store, facts=lineage_facts(con))))
    out["lineage suggestions"] = len(report.suggestions)
    same = [[s.as_dict() for s in duck.all()] == [s.as_dict() for s in report.all()]]
    out["suggest reading, SPARQL"], found = _median(lambda: reading_suggestions(store, limit=20))
    out["suggest reading, DuckDB"], duck_found = _median(lambda: from_tables(
        lambda con: reading_suggestions(store, limit=20, facts=DuckDBReadingFacts(con))))
    out["reading suggestions"] = len(found)
    same.append([s.as_dict() for s in duck_found] == [s.as_dict() for s in found])
    out["suggest reading --technique, SPARQL"], found = _median(
        lambda: reading_suggestions(store, technique=some, limit=20))
    out["suggest reading --technique, DuckDB"], duck_found = _median(lambda: from_tables(
        lambda con: reading_suggestions(store, technique=some, limit=20, facts=DuckDBReadingFacts(con))))
    same.append([s.as_dict() for s in duck_found] == [s.as_dict() for s in found])
    store.close()
    outputs: dict[str, bytes] = {}

    from kg.analytics.materialize import database_path
    from kg.analytics.suggest import memo_path

    memo = memo_path(database_path(str(store_dir)))

    def command(label: str, args: list[str], environ: dict[str, str], *, forget: bool = False) -> None:
        def run() -> None:
            if forget:  # as the first kg suggest after a write: the store opened to decide freshness
                memo.unlink(missing_ok=True)
            done = subprocess.run([str(kg), *args], check=True, capture_output=True, env=environ)
            outputs[label] = done.stdout
            outputs[label + " stderr"] = done.stderr
        run()  # once unmeasured: the bytecode cache
        out[label], _ = _median(run, 5)

    command("kg --help (startup)", ["--help"], env)
    technique = ["-t", corpus.deepest]
    for label, args in (("kg suggest lineage", ["suggest", "lineage", "-f", "json"]),
                        ("kg suggest reading", ["suggest", "reading", "-f", "json"]),
                        ("kg suggest reading --technique", ["suggest", "reading", *technique, "-f", "json"])):
        command(label + " (command, DuckDB, store opened)", args, env, forget=True)
        command(label + " (command, DuckDB)", args, env)
        command(label + " (command, SPARQL)", args, no_tables)
        for how in ("DuckDB", "DuckDB, store opened"):
            same.append(outputs[f"{label} (command, {how})"] == outputs[label + " (command, SPARQL)"])
            same.append(b"DuckDB analytics tables (fresh)" in outputs[f"{label} (command, {how}) stderr"])
        same.append(b"answered by SPARQL" in outputs[label + " (command, SPARQL) stderr"])
    command("kg --help (startup, again)", ["--help"], env)  # after: the load may have changed
    out["same answers"] = all(same)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.citations", description=__doc__.split("\n\n")[0])
    parser.add_argument("--tracked", type=int, default=1000, help="papers tracked in the refresh benchmark")
    parser.add_argument("--per-paper", type=int, default=50, help="citations of each tracked paper")
    parser.add_argument("--changed", type=int, default=100, help="papers that gain a citation before the refresh")
    parser.add_argument("--papers", type=int, default=100_000, help="papers of the synthetic corpus")
    parser.add_argument("--citations", type=int, default=500_000, help="citations among them")
    parser.add_argument("--skip-scale", action="store_true", help="only the refresh benchmark")
    parser.add_argument("--skip-refresh", action="store_true", help="only the suggestions at scale")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="bench-citations-"))
    ok = True
    try:
        if not args.skip_refresh:
            r = refresh_bench(args.tracked, args.per_paper, args.changed, workdir)
            print(f"\nRefresh of {args.tracked} papers with {args.per_paper} citations each (emulator on loopback):")
            limit_batches = -(-args.tracked // 500)
            for label in ("first run", "refresh, nothing changed", f"refresh, {args.changed} changed"):
                row = r[label]
                print(f"  {label:<28} {row['batch']:>3} batch + {row['lists']:>5} list requests   "
                      f"{row['seconds']:7.2f} s   graph {'written' if row['written'] else 'unchanged'}")
            nothing, some = r["refresh, nothing changed"], r[f"refresh, {args.changed} changed"]
            checks = {f"<= {limit_batches} batch requests per run": all(
                          r[k]["batch"] <= limit_batches for k in ("first run", "refresh, nothing changed")),
                      "0 list requests when nothing changed": nothing["lists"] == 0,
                      f"1 list request per changed paper ({args.changed})": some["lists"] == args.changed}
            print(f"  ingest throughput: {r['throughput']:,.0f} citations/s; baseline (fetching the same lists alone): "
                  f"{r['fetch only']:.2f} s, ingest/fetch = {r['first run']['seconds'] / r['fetch only']:.2f}x")
            for name, passed in checks.items():
                print(f"  {'ok  ' if passed else 'FAIL'} {name}")
                ok = ok and passed
        if not args.skip_scale:
            s = scale_bench(args.papers, args.citations, workdir)
            print(f"\nSuggestions on {args.papers:,} papers ({s['corpus triples']:,} corpus triples) with "
                  f"{s['citations']:,} citations ({s['with_contexts']:,} with contexts, {s['triples']:,} triples; "
                  f"set-up {s['setup seconds']:.0f} s):")
            base, startup = s["baseline: scan of the citations graph"], s["kg --help (startup)"]
            print(f"  (analytics tables built once in {s['analytics build seconds']:.0f} s: kg analytics build)")
            print(f"  {'':<64} {'':>8}      {'/ scan':>7} {'/ start-up':>11}")
            for label in ("baseline: scan of the citations graph", "kg --help (startup)", "kg --help (startup, again)",
                          *(f"suggest {what}, {how}" for what in ("lineage", "reading", "reading --technique")
                            for how in ("SPARQL", "DuckDB")),
                          *(f"kg suggest {what} (command, {how})" for what in ("lineage", "reading",
                                                                              "reading --technique")
                            for how in ("SPARQL", "DuckDB, store opened", "DuckDB"))):
                print(f"  {label:<64} {s[label] * 1000:8.0f} ms   {s[label] / base:6.2f}x {s[label] / startup:10.2f}x")
            print(f"  ({s['lineage suggestions']} lineage suggestions, {s['reading suggestions']} papers to read)")
            checks = {"DuckDB and SPARQL give the same answers (in process and as commands), stderr says which":
                      s["same answers"]}
            for what in ("lineage", "reading", "reading --technique"):
                checks[f"kg suggest {what} < 1 s end to end (DuckDB tables fresh)"] = \
                    s[f"kg suggest {what} (command, DuckDB)"] < 1.0
            print(f"  (system load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")
            for name, passed in checks.items():
                print(f"  {'ok  ' if passed else 'FAIL'} {name}")
                ok = ok and passed
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
