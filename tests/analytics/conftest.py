"""A graph with something to analyse: the built catalog and reading list, a small
synthetic corpus (papers, authors, organisations, lineage, repositories with star
snapshots) in the graph ``bench``, dated status changes, and kernel records and runs
written with the documented vocabulary into the graph ``kernels``."""

from __future__ import annotations

import datetime as dt
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

#: Papers in the test corpus (about 13 triples each).
CORPUS_PAPERS = 400
#: Reading-list papers marked read at fixed times, and one marked reading.
ZERO = "ZeRO: Memory Optimizations Toward Training Trillion Parameter Models"
MEGATRON = "Megatron-LM: Training Multi-Billion Parameter Language Models Using Model Parallelism"
READS = {
    "GPipe": dt.datetime(2026, 1, 10, 9, 0, tzinfo=dt.UTC),
    ZERO: dt.datetime(2026, 1, 20, 9, 0, tzinfo=dt.UTC),
    MEGATRON: dt.datetime(2026, 3, 2, 9, 0, tzinfo=dt.UTC),
}
#: A corpus paper first added, then read ten days later.
ADDED_THEN_READ = (dt.datetime(2026, 2, 1, tzinfo=dt.UTC), dt.datetime(2026, 2, 11, tzinfo=dt.UTC))
#: When the reader marked read a paper that the corpus has as to-read.
OVERRIDDEN = dt.datetime(2026, 4, 1, tzinfo=dt.UTC)
STATUS = "<https://w3id.org/techkg/id/status/"
#: Kernel records: technique → (form, runs as (ended, passed)).
KERNELS = {
    "gated-deltanet": (
        "kernel",
        [
            (dt.datetime(2026, 5, 1, tzinfo=dt.UTC), True),
            (dt.datetime(2026, 6, 1, tzinfo=dt.UTC), False),
        ],
    ),
    "kda": ("kernel", [(dt.datetime(2026, 6, 1, tzinfo=dt.UTC), True)]),
    "muon": ("reference", []),
    "agentenv": ("none", []),
}


def kernel_triples() -> list:
    """Registry records and verification runs, as the ontology documents them."""
    from pyoxigraph import Literal, NamedNode, Triple

    from kg.iris import technique_iri
    from kg.vocab import ID, PROV, RDF, RDFS, TKG, XSD, boolean, datetime_literal, text

    out = []
    for tech, (form, runs) in KERNELS.items():
        t, k = technique_iri(tech), ID["kernel/" + tech]
        out += [
            Triple(t, TKG.referenceKernel, k),
            Triple(k, RDF.type, TKG.ReferenceKernel),
            Triple(k, TKG.kernelForm, text(form, None)),
        ]
        if form == "none":
            out.append(
                Triple(k, TKG.rationale, text("An environment service, not a numerical kernel."))
            )
        for i, (ended, passed) in enumerate(runs):
            run = ID[f"kernel-run/{tech}-{i}"]
            out += [
                Triple(run, RDF.type, TKG.VerificationRun),
                Triple(run, TKG.verifies, t),
                Triple(run, TKG.passed, boolean(passed)),
                Triple(run, TKG.torchVersion, text("2.13.0", None)),
                Triple(run, TKG.device, text("cpu", None)),
                Triple(run, TKG.dtype, text("float32", None)),
                Triple(run, PROV.startedAtTime, datetime_literal(ended - dt.timedelta(seconds=3))),
                Triple(run, PROV.endedAtTime, datetime_literal(ended)),
            ]
            check = NamedNode(f"{run.value}/check/0")
            out += [
                Triple(run, TKG.check, check),
                Triple(check, RDF.type, TKG.CheckResult),
                Triple(check, RDFS.label, text("chunk = recurrent", None)),
                Triple(check, TKG.claim, text("The chunked form equals the recurrent form.")),
                Triple(check, TKG.passed, boolean(passed)),
                Triple(check, TKG.maxAbsError, Literal("1e-06", datatype=XSD.double)),
                Triple(check, TKG.tolerance, Literal("0.005", datatype=XSD.double)),
            ]
    return out


@pytest.fixture(scope="session")
def analysed_store_dir(built_store_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with the corpus, dated reads, kernel records and its links (kg link). Copy it
    before changing it."""
    import pyoxigraph as ox

    from bench.corpus import generate
    from kg.graphs import KERNELS as KERNELS_GRAPH
    from kg.graphs import graph_iri
    from kg.reading import resolve_paper, set_status
    from kg.store.base import Activity
    from kg.store.embedded import OxigraphStore

    root = tmp_path_factory.mktemp("analysed")
    path = root / "store"
    shutil.copytree(built_store_dir, path)
    corpus = generate(CORPUS_PAPERS, seed=42, out=root / "corpus.nt")
    store = OxigraphStore(path)
    try:
        store.load_file(
            corpus.path,
            graph=graph_iri("bench"),
            fmt=ox.RdfFormat.N_TRIPLES,
            gzipped=False,
            activity=Activity("kg import rdf", used=[str(corpus.path)]),
        )
        for title, at in READS.items():
            set_status(store, resolve_paper(store, title), "read", at=at)
        set_status(
            store,
            resolve_paper(store, "Ring Attention"),
            "reading",
            at=dt.datetime(2026, 2, 1, tzinfo=dt.UTC),
        )
        added, read = ADDED_THEN_READ
        fresh = store.select(
            f"""SELECT ?p WHERE {{ GRAPH {graph_iri("bench")} {{ ?p a bibo:Document
                  FILTER NOT EXISTS {{ ?p tkg:readingStatus ?s }} }} }} ORDER BY ?p LIMIT 1"""
        ).rows[0]["p"]
        set_status(store, fresh, "to-read", at=added)  # type: ignore[arg-type]
        set_status(store, fresh, "read", at=read)  # type: ignore[arg-type]
        with store.transaction(Activity("kg kernels verify")) as tx:
            tx.insert(KERNELS_GRAPH, kernel_triples())
        from kg.linking.apply import link_everything

        link_everything(store)  # the links kg link makes: the reading list's papers to their techniques
        # A paper the corpus (an import) has queued in a category, that the reader has read
        # since: the reader's status is its status on every surface.
        queued = store.select(
            f"""SELECT ?p WHERE {{ GRAPH {graph_iri("bench")} {{ ?p tkg:readingStatus {STATUS}to-read> ;
                  tkg:readingCategory ?c }}
                  ?p tkg:usesTechnique|tkg:introducesTechnique ?t }} ORDER BY ?p LIMIT 1"""
        ).rows[0]["p"]
        set_status(store, queued, "read", at=OVERRIDDEN)  # type: ignore[arg-type]
    finally:
        store.close()
    return path


@pytest.fixture(scope="session")
def analysed_db(analysed_store_dir: Path) -> Path:
    """The analytics file of :func:`analysed_store_dir`, built once. Read it, don't change it."""
    from kg.analytics import build
    from kg.store.embedded import OxigraphStore

    db = analysed_store_dir.with_name("store.analytics.duckdb")
    store = OxigraphStore(analysed_store_dir)
    try:
        build(store, db)
    finally:
        store.close()
    return db


@pytest.fixture
def analysed_store_path(analysed_store_dir: Path, analysed_db: Path, tmp_path: Path) -> Path:
    """A private copy of the analysed store with its analytics file beside it (closed)."""
    path = tmp_path / "store"
    shutil.copytree(analysed_store_dir, path)
    shutil.copy(analysed_db, tmp_path / "store.analytics.duckdb")
    return path


@pytest.fixture
def analysed_store(analysed_store_path: Path) -> Iterator:
    """The private copy, open; its analytics file is ``<dir>.analytics.duckdb``."""
    from kg.store.embedded import OxigraphStore

    store = OxigraphStore(analysed_store_path)
    yield store
    store.close()


@pytest.fixture
def db_of():
    """The analytics file beside a store directory."""

    def of(store_dir: Path) -> Path:
        return store_dir.with_name(store_dir.name + ".analytics.duckdb")

    return of


@pytest.fixture
def duckdb_conn(analysed_db: Path) -> Iterator:
    """A read-only connection to the shared analytics file."""
    from kg.analytics import connect

    con = connect(analysed_db, read_only=True)
    yield con
    con.close()
