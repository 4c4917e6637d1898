"""Links from citations: the methodology intent or influence towards a technique's primary
paper, and citation sentences that name a technique."""

from __future__ import annotations

from kg.citations import CitationRecord, Context
from kg.linking.citing import citation_evidence
from kg.linking.linker import Linker

GQA_PAPER = "https://arxiv.org/abs/2305.13245"
GQA = "https://w3id.org/techkg/id/technique/gqa"
MQA = "https://w3id.org/techkg/id/technique/mqa"
CITING = "https://example.org/citing"


def test_citing_the_primary_paper_for_its_method_is_a_uses_link_with_that_sentence(linker: Linker) -> None:
    record = CitationRecord(CITING, GQA_PAPER, {"methodology"}, contexts=[
        Context("Heads share keys as in [7].", ("methodology",))])
    found = citation_evidence([record], {GQA_PAPER: {GQA}}, linker, source="g:citations")
    (item,) = found[CITING][GQA]
    assert (item.field, item.relation, item.text) == ("citation-context", "uses", "Heads share keys as in [7].")


def test_an_influential_citation_is_weaker_evidence_and_a_background_one_is_none(linker: Linker) -> None:
    influential = CitationRecord(CITING, GQA_PAPER, set(), influential=True)
    background = CitationRecord(CITING, GQA_PAPER, {"background"}, contexts=[Context("See [7].", ("background",))])
    found = citation_evidence([influential, background], {GQA_PAPER: {GQA}}, linker, source="g:citations",
                              titles={GQA_PAPER: "GQA: Training Generalized Multi-Query Transformer Models"})
    (item,) = found[CITING][GQA]
    assert item.relation == "uses" and item.score < 0.6 and "influential" in item.text


def test_a_citation_sentence_that_names_a_technique_links_it_with_its_own_wording(linker: Linker) -> None:
    record = CitationRecord(CITING, "https://example.org/other", {"result"}, contexts=[
        Context("Our kernels are compared against multi-query attention [3].", ("result",))])
    found = citation_evidence([record], {}, linker, source="g:citations")
    (item,) = found[CITING][MQA]
    assert item.relation == "evaluates" and "multi-query attention" in item.text


def test_a_primary_paper_citing_its_own_technique_adds_nothing(linker: Linker) -> None:
    record = CitationRecord(GQA_PAPER, "https://example.org/other", {"methodology"}, contexts=[
        Context("We propose grouped-query attention.", ("methodology",))])
    assert citation_evidence([record], {GQA_PAPER: {GQA}}, linker, source="g:citations") == {}
