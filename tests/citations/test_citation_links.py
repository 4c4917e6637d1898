"""kg ingest citations asks for abstracts and TLDRs (where the API gives them) and keeps
them, and the links it brings (citation sentences, the methodology intent) are made after
its write."""

from __future__ import annotations


def test_kg_ingest_citations_keeps_abstract_and_tldr_and_links_from_citations(built_store, source, emulator) -> None:
    from ingest.citations import ingest_citations
    from kg.graphs import CITATIONS
    from kg.linking.listing import list_links
    from kg.linking.refresh import Watch
    from tests.citations import ml_graph

    pid = emulator.ids["delta-study"]
    emulator.papers[pid].abstract = "We study gated delta rules for retrieval over long contexts."
    emulator.papers[pid].tldr = "Chunkwise gated delta rules retrieve well."
    gdn = emulator.ids["gated-deltanet"]
    emulator.papers[gdn].tldr = "A gated delta rule that combines Mamba2 gating with DeltaNet updates."
    watch = Watch(built_store, [CITATIONS])
    ingest_citations(built_store, source)
    batch = [r for r in emulator.requests if r.path.endswith("/paper/batch")]
    assert batch and "tldr" in batch[0].query["fields"][0] and "abstract" in batch[0].query["fields"][0]
    lists = [r for r in emulator.requests if r.path.endswith(("/citations", "/references"))]
    assert lists and all("tldr" not in r.query["fields"][0] for r in lists)  # the API gives none there
    study = "https://doi.org/10.5555/techkg.delta-study"
    assert built_store.ask(f"ASK {{ GRAPH {CITATIONS} {{ <{study}> dcterms:abstract ?a }} }}")
    assert built_store.ask(f"ASK {{ GRAPH {CITATIONS} {{ ?p tkg:tldr 'A gated delta rule that combines Mamba2 "
                           f"gating with DeltaNet updates.' }} }}")
    report = watch.relink(label="test")
    assert report.links
    rows = list_links(built_store, paper=study)
    found = {(r.technique_name, r.link.relation) for r in rows}
    assert ("Gated DeltaNet", "uses") in found  # "We use the chunkwise algorithm of Gated DeltaNet" [methodology]
    evidence = next(r for r in rows if r.technique_name == "Gated DeltaNet").link.evidence
    assert any(e.field == "citation-context" and "chunkwise algorithm" in e.text for e in evidence)
    assert ml_graph.CANDIDATES  # the planted graph is the one the citation tests use


def test_kg_suggest_reading_counts_papers_that_use_a_technique_you_follow(built_store, source) -> None:
    from pyoxigraph import NamedNode

    from ingest.citations import ingest_citations
    from kg.iris import technique_iri
    from kg.linking.apply import link_everything
    from kg.readnext import reading_suggestions

    ingest_citations(built_store, source)
    link_everything(built_store)
    found = reading_suggestions(built_store, technique=NamedNode(technique_iri("gated-deltanet").value))
    study = next(s for s in found if s.paper == "https://doi.org/10.5555/techkg.delta-study")
    kinds = {e["kind"] for e in study.evidence}
    assert "uses-followed" in kinds
    assert any(e["kind"] == "uses-followed" and e["seed_name"] == "Gated DeltaNet" for e in study.evidence)
    assert "a technique you follow" in study.reason or len(study.evidence) > 1
