"""``kg suggest lineage``, accept and reject, over the ML citation graph of the emulator."""

from __future__ import annotations

import pyoxigraph as ox
import pytest

from ingest.citations import CitationRun, ingest_citations
from ingest.emulators.semanticscholar import SemanticScholarEmulator
from kg.decisions import accept, decisions, reject
from kg.errors import KGError, NotFoundError
from kg.graphs import LINEAGE_DECISIONS
from kg.iris import technique_iri
from kg.suggestions import find_suggestion, lineage_report, relation_from_wording
from tests.citations.ml_graph import PLANTED_CONFIRMED, PLANTED_NEW
from tests.citations.test_ingest_citations import dump


@pytest.fixture
def cited(built_store, source):
    ingest_citations(built_store, source)
    return built_store


def pairs(items) -> set[tuple[str, str]]:
    return {(s.child.id, s.parent.id) for s in items}


def test_planted_lineage_is_found_with_its_relation_evidence_and_score(cited) -> None:
    report = lineage_report(cited)
    found = {(s.child.id, s.parent.id): s for s in report.suggestions}
    assert set(found) == {(p.child, p.parent) for p in PLANTED_NEW}
    for planted in PLANTED_NEW:
        item = found[(planted.child, planted.parent)]
        assert item.relation == planted.relation and 0 < item.score <= 1
        assert item.id.startswith("sg-") and any(e.weight > 0 for e in item.evidence)
    nft = found[("diffusionnft", "grpo")]
    assert {e.kind for e in nft.evidence} >= {"methodology", "influential"}
    assert nft.evidence[0].sentence.startswith("We extend GRPO") and nft.evidence[0].intents == ("methodology",)
    latent = found[("latentmoe", "aux-loss-free-balancing")]
    assert [e.kind for e in latent.evidence] == ["names+methodology"]
    assert "Following Loss-Free Balancing" in (latent.evidence[0].sentence or "")
    assert nft.score > latent.score  # two independent pieces of evidence beat one


def test_existing_edges_are_confirmed_by_citations_or_lack_evidence(cited) -> None:
    report = lineage_report(cited)
    status = {(s.child.id, s.parent.id): s for s in report.existing}
    for planted in PLANTED_CONFIRMED:
        item = status[(planted.child, planted.parent)]
        assert item.status == "confirmed" and item.existing_relation == planted.relation == item.relation
    assert status[("fsdp1", "zero")].status == "lacking" and status[("fsdp1", "zero")].evidence == []
    from kg.catalog import load_catalog

    assert len(report.existing) == len(load_catalog().edges)  # every catalog edge is reported one way or the other


def test_nothing_is_proposed_without_evidence(cited) -> None:
    report = lineage_report(cited)
    proposed = pairs(report.suggestions)
    # Muon cites the Transformer for background and ZeRO without a sentence; GDN names MQA in passing.
    assert not proposed & {("muon", "transformer"), ("muon", "zero"), ("gated-deltanet", "mqa")}
    assert all(any(e.weight > 0 for e in s.evidence) for s in report.suggestions)


def test_background_mentions_alone_propose_nothing(fresh_store, source_for) -> None:
    from kg.build import build

    build(fresh_store, validate=False)
    with SemanticScholarEmulator() as emu:
        a = emu.add_paper("Kimi Linear", arxiv="2510.26692")
        b = emu.add_paper("Gated Delta Networks", arxiv="2412.06464")
        c = emu.add_paper("Muon is scalable", arxiv="2502.16982")
        emu.cite(a, b, contexts=[("Gated DeltaNet [3] is a linear attention.", ["background"])])
        emu.cite(c, b, contexts=[("Linear attention such as GDN and KDA scales well.", ["result"])])
        ingest_citations(fresh_store, source_for(url=emu.url))
    report = lineage_report(fresh_store)
    assert report.suggestions == []
    # A background citation is not a confirmation: the edge is cited for background only.
    assert {(s.child.id, s.parent.id): s.status for s in report.existing}[("kda", "gated-deltanet")] == "background"


def test_a_parent_dated_after_the_child_is_not_proposed(fresh_store, source_for) -> None:
    from kg.build import build

    build(fresh_store, validate=False)
    with SemanticScholarEmulator() as emu:
        kda = emu.add_paper("Kimi Linear", arxiv="2510.26692")
        other = emu.add_paper("Some paper", doi="10.5555/techkg.other")
        emu.cite(kda, other, contexts=[("Following LatentMoE, we share experts.", ["methodology"]),
                                       ("Following GQA, we group the key-value heads.", ["methodology"])])
        ingest_citations(fresh_store, source_for(url=emu.url))
    assert pairs(lineage_report(fresh_store).suggestions) == {("kda", "gqa")}


def test_a_rejected_edge_never_comes_back(cited, source, emulator) -> None:
    item = find_suggestion(cited, next(s.id for s in lineage_report(cited).suggestions if s.child.id == "diffusionnft"))
    reject(cited, item)
    report = lineage_report(cited)
    assert ("diffusionnft", "grpo") not in pairs(report.suggestions)
    assert ("diffusionnft", "grpo") in pairs(report.rejected)
    # More evidence, a fresh ingest and a rebuild do not bring it back.
    emulator.cite(emulator.ids["diffusionnft"], emulator.ids["dancegrpo"], contexts=[
        ("We build on GRPO and on DanceGRPO's reward design.", ["methodology"])])
    ingest_citations(cited, source, CitationRun(full=True))
    from kg.build import build

    build(cited, validate=False)
    report = lineage_report(cited)
    assert ("diffusionnft", "grpo") not in pairs(report.suggestions)
    assert ("diffusionnft", "dancegrpo") in pairs(report.suggestions)


def test_an_accepted_edge_joins_the_lineage_marked_as_the_reader_s(cited) -> None:
    from exports.lineage import build_lineage
    from kg.build import build
    from kg.views import lineage_edges, lineage_tree

    item = next(s for s in lineage_report(cited).suggestions if s.child.id == "latentmoe")
    decision = accept(cited, item, relation="extends")
    assert decision.relation == "extends" and decision.verdict == "accepted"
    build(cited, validate=False)  # kg build keeps the reader's decisions
    (edge,) = [e for e in lineage_edges(cited) if e.child.endswith("/latentmoe") and e.parent.endswith("-balancing")]
    assert edge.relation == "extends" and edge.basis == "accepted" and "Following Loss-Free Balancing" in edge.note
    up, _down = lineage_tree(cited, technique_iri("latentmoe"), direction="up")
    (node,) = [c for c in up.children if c.iri.endswith("aux-loss-free-balancing")]
    assert node.basis == "accepted" and node.relation == "extends"
    lineage = build_lineage(cited)
    data = lineage.graph.get_edge_data(str(technique_iri("aux-loss-free-balancing").value),
                                       technique_iri("latentmoe").value)
    assert data["extends"]["basis"] == "accepted"
    # It is now an existing edge confirmed by citations, not a suggestion.
    report = lineage_report(cited)
    assert ("latentmoe", "aux-loss-free-balancing") not in pairs(report.suggestions)
    assert {(s.child.id, s.parent.id): s.status for s in report.existing}[("latentmoe", "aux-loss-free-balancing")] \
        == "confirmed"
    from kg.validate import validate_store

    assert validate_store(cited) == []


def test_accepting_twice_keeps_the_relation_chosen_first(cited) -> None:
    item = next(s for s in lineage_report(cited).suggestions if s.child.id == "latentmoe")
    assert item.relation != "extends"  # the proposed relation is not the one the reader picks
    first = accept(cited, item, relation="extends")
    before = dump(cited)
    again = accept(cited, find_suggestion(cited, item.id))  # no --as: nothing to change
    assert again.relation == "extends" and again.unchanged and again.at == first.at
    assert dump(cited) == before  # nothing written, not even a new date
    (edge,) = [e for e in decisions(cited).values() if e.child.endswith("/latentmoe")]
    assert edge.relation == "extends"
    retyped = accept(cited, find_suggestion(cited, item.id), relation="refines")  # asked for: re-typed
    assert retyped.relation == "refines" and not retyped.unchanged


def test_decisions_are_small_updates_that_keep_each_other(cited) -> None:
    report = lineage_report(cited)
    first, second = report.suggestions
    accept(cited, first)
    reject(cited, second)
    kept = decisions(cited)
    assert {d.verdict for d in kept.values()} == {"accepted", "rejected"}
    # Changing one decision leaves the other as it was.
    reject(cited, find_suggestion(cited, first.id))
    kept = decisions(cited)
    assert {(k[0].rsplit("/", 1)[-1], d.verdict) for k, d in kept.items()} == {
        (first.child.iri.rsplit("/", 1)[-1], "rejected"), (second.child.iri.rsplit("/", 1)[-1], "rejected")}
    assert not cited.ask(f"ASK {{ GRAPH {LINEAGE_DECISIONS} {{ ?d tkg:basis \"accepted\" }} }}")


def test_unknown_ids_and_relations_change_nothing(cited) -> None:
    before = dump(cited)
    with pytest.raises(NotFoundError):
        find_suggestion(cited, "sg-00000000")
    item = lineage_report(cited).suggestions[0]
    with pytest.raises(KGError, match="not a lineage relation"):
        accept(cited, item, relation="cousin-of")
    confirmed = next(s for s in lineage_report(cited).existing if s.status == "confirmed")
    with pytest.raises(NotFoundError, match="existing edge"):
        find_suggestion(cited, confirmed.id)
    assert dump(cited) == before


@pytest.mark.parametrize(("sentence", "relation"), [
    ("KDA refines the gating of Gated DeltaNet.", "refines"),
    ("We extend GRPO to diffusion.", "extends"),
    ("GDN combines the delta rule with gating.", "combines"),
    ("MLA replaces per-head caches with a latent.", "replaces"),
    ("We generalize MQA to groups.", "generalizes"),
    ("DanceGRPO adapts GRPO to video generation.", "portsTo"),
    ("Liger is built on Triton.", "buildsOn"),
    ("Following MLA, we compress keys.", "derivesFrom"),
    ("MLA is a popular attention.", None),
])
def test_the_relation_is_read_from_the_wording(sentence: str, relation: str | None) -> None:
    assert relation_from_wording([sentence]) == relation


def test_a_technique_narrows_the_report(cited) -> None:
    report = lineage_report(cited, ox.NamedNode(technique_iri("grpo").value))
    assert pairs(report.suggestions) == {("diffusionnft", "grpo")}
    assert all("grpo" in (s.child.id, s.parent.id) for s in report.existing)


def test_training_with_infrastructure_proposes_no_lineage(fresh_store, source_for) -> None:
    """The issue's case: a methodology citation of the FSDP paper in "trained with TP=8 and
    FSDP [14]" once proposed "KDA derivesFrom PyTorch FSDP1" at 0.50."""
    from kg.build import build
    from tests.citations.ml_graph import arxiv_of

    build(fresh_store, validate=False)
    with SemanticScholarEmulator() as emu:
        kda = emu.add_paper("Kimi Linear", arxiv="2510.26692")
        fsdp = emu.add_paper("PyTorch FSDP", arxiv=arxiv_of("fsdp1").removeprefix("ARXIV:"))
        zero = emu.add_paper("ZeRO", arxiv=arxiv_of("zero").removeprefix("ARXIV:"))
        tp = emu.add_paper("Megatron-LM", arxiv=arxiv_of("megatron-tp").removeprefix("ARXIV:"))
        gdn = emu.add_paper("Gated Delta Networks", arxiv="2412.06464")
        emu.cite(kda, fsdp, contexts=[("All models are trained with TP=8 and FSDP [14] on 256 GPUs.",
                                       ["methodology"])])
        emu.cite(kda, zero, influential=True, contexts=[("We use ZeRO-1 [15] to shard the optimizer states.",
                                                         ["methodology"])])
        emu.cite(kda, tp, contexts=[("Following Megatron-LM [16], we train with tensor parallelism.",
                                     ["methodology"])])
        emu.cite(kda, gdn, influential=True, contexts=[("KDA refines the gate of Gated DeltaNet.", ["methodology"])])
        ingest_citations(fresh_store, source_for(url=emu.url))
    report = lineage_report(fresh_store)
    proposed = pairs(report.suggestions)
    assert not proposed & {("kda", "fsdp1"), ("kda", "zero"), ("kda", "megatron-tp")}
    # The same citations are shown for what they are; the real lineage stays confirmed.
    status = {(s.child.id, s.parent.id): s.status for s in report.existing}
    assert status[("kda", "gated-deltanet")] == "confirmed"


def test_a_methodology_citation_alone_proposes_nothing_but_lineage_wording_does(fresh_store, source_for) -> None:
    from kg.build import build

    build(fresh_store, validate=False)
    with SemanticScholarEmulator() as emu:
        kda = emu.add_paper("Kimi Linear", arxiv="2510.26692")
        grpo = emu.add_paper("DeepSeekMath", arxiv=arxiv_of_grpo())
        mla = emu.add_paper("DeepSeek-V2", arxiv=arxiv_of_mla())
        emu.cite(kda, grpo, contexts=[("The policy is optimised as in [3].", ["methodology"])])
        emu.cite(kda, mla, contexts=[("We extend the latent compression of [4] to the recurrent state.",
                                      ["methodology"])])
        ingest_citations(fresh_store, source_for(url=emu.url))
    report = lineage_report(fresh_store)
    proposed = {(s.child.id, s.parent.id): s for s in report.suggestions}
    assert ("kda", "grpo") not in proposed  # a methodology intent, no wording of lineage
    item = proposed[("kda", "mla")]  # wording of a citation of MLA's own paper
    assert item.relation == "extends" and {e.kind for e in item.evidence if e.weight} == {
        "methodology", "wording+methodology"}


def arxiv_of_grpo() -> str:
    from tests.citations.ml_graph import arxiv_of

    return arxiv_of("grpo").removeprefix("ARXIV:")


def arxiv_of_mla() -> str:
    from tests.citations.ml_graph import arxiv_of

    return arxiv_of("mla").removeprefix("ARXIV:")
