"""The lineage graph every lineage export is drawn from."""

from __future__ import annotations

import pytest
from pyoxigraph import Literal, NamedNode, Triple

from exports.lineage import LineageOptions, build_lineage
from kg.errors import ExportError, NotFoundError
from kg.graphs import CATALOG
from kg.iris import technique_iri
from kg.vocab import PROV, RDF, SKOS, TKG, XSD, text


def iri(slug: str) -> str:
    return technique_iri(slug).value


def test_the_whole_lineage_has_every_technique_and_typed_relation(built_store) -> None:
    lineage = build_lineage(built_store)
    g = lineage.graph
    assert len(lineage.techniques()) == 45  # the 39 of the page and 6 lineage-only parents
    assert sum(1 for _, d in g.nodes(data=True) if d.get("on_page")) == 39
    assert len(lineage.lineage_edges()) == 28
    assert g.edges[iri("gated-deltanet"), iri("kda"), "refines"]["relation"] == "refines"
    assert g.edges[iri("gated-deltanet"), iri("kda"), "refines"]["basis"] == "stated"
    assert [c.id for c in lineage.categories][:3] == ["attention", "moe", "residuals"]


def test_technique_nodes_carry_the_card_attributes(built_store) -> None:
    node = build_lineage(built_store).graph.nodes[iri("gated-deltanet")]
    assert node["name"] == "Gated DeltaNet" and node["category"] == "attention"
    assert node["date"] == "2024-12-09" and "NVIDIA" in node["organisation"]
    assert node["headline"] and node["kernel"] in {"verified", "failing", "not run", "none"}
    assert node["papers"] >= 1 and node["repository"].startswith("https://github.com/")
    assert not any(key.startswith("reading_") for key in node)


def test_reading_counts_appear_only_when_private_data_is_asked_for(private_store) -> None:
    public = build_lineage(private_store).graph.nodes[iri("gated-deltanet")]
    private = build_lineage(private_store, LineageOptions(include_private=True)).graph.nodes[iri("gated-deltanet")]
    assert "reading_reading" not in public
    assert private["reading_reading"] == 1  # its paper was set to "reading"
    transformer = build_lineage(private_store, LineageOptions(include_private=True)).graph.nodes[iri("transformer")]
    assert transformer["reading_other"] == 1  # the custom status "Skimmed twice"


def test_a_lineage_without_statuses_is_the_same_but_for_the_reading_state(private_store) -> None:
    """with_statuses=False (the workbench reads the statuses of the papers it shows itself)
    leaves out each paper's status and each technique's reading counts, and nothing else."""
    def strip(lineage):  # type: ignore[no-untyped-def]
        nodes = {n: {k: v for k, v in d.items() if not k.startswith("reading_")}
                 for n, d in lineage.graph.nodes(data=True)}
        papers = {t: [(r.iri, r.title, r.role) for r in refs] for t, refs in lineage.papers.items()}
        return nodes, sorted(lineage.graph.edges(keys=True)), papers

    whole = build_lineage(private_store, LineageOptions(include_private=True))
    bare = build_lineage(private_store, LineageOptions(include_private=True, with_statuses=False))
    assert strip(bare) == strip(whole)
    assert any(ref.status for refs in whole.papers.values() for ref in refs)
    assert not any(ref.status for refs in bare.papers.values() for ref in refs)
    assert not any(k.startswith("reading_") for _, d in bare.graph.nodes(data=True) for k in d)

@pytest.mark.parametrize(("direction", "expected"), [
    ("up", {"kda", "gated-deltanet", "deltanet", "mamba2"}),
    ("down", {"gated-deltanet", "kda"}),
    ("both", {"kda", "gated-deltanet", "deltanet", "mamba2"}),
])
def test_root_and_direction_pick_ancestors_or_descendants(built_store, direction: str, expected: set[str]) -> None:
    root = "KDA" if direction != "down" else "GDN"
    lineage = build_lineage(built_store, LineageOptions(root=root, direction=direction))
    assert {lineage.graph.nodes[n]["slug"] for n in lineage.techniques()} == expected
    assert lineage.graph.graph["root"] == (iri("kda") if root == "KDA" else iri("gated-deltanet"))


def test_depth_limits_the_steps_followed(built_store) -> None:
    one = build_lineage(built_store, LineageOptions(root="transformer", direction="down", depth=1))
    two = build_lineage(built_store, LineageOptions(root="transformer", direction="down", depth=2))
    assert iri("mla") in one.graph and iri("dsa") not in one.graph
    assert iri("dsa") in two.graph and iri("deepseek-v4-csa-hca") not in two.graph


def test_category_filter_keeps_only_those_techniques(built_store) -> None:
    lineage = build_lineage(built_store, LineageOptions(categories=("moe", "Optimizers")))
    assert {d["category"] for _, d in lineage.graph.nodes(data=True)} == {"moe", "optimizers"}
    assert [c.id for c in lineage.categories] == ["moe", "optimizers"]


def test_papers_and_repositories_become_nodes_on_request(built_store) -> None:
    lineage = build_lineage(built_store, LineageOptions(root="KDA", direction="up", with_papers=True,
                                                        with_repositories=True))
    g = lineage.graph
    gdn_paper = "https://arxiv.org/abs/2412.06464"
    assert g.nodes[gdn_paper]["kind"] == "paper" and g.nodes[gdn_paper]["arxiv"] == "2412.06464"
    assert g.edges[gdn_paper, iri("gated-deltanet"), "introduces"]["relation"] == "introduces"
    repos = [n for n, d in g.nodes(data=True) if d["kind"] == "repository"]
    assert "https://github.com/nvlabs/gateddeltanet" in repos
    assert all(g.has_edge(u, r) for r in repos for u in g.predecessors(r))


def test_relations_without_a_qualified_derivation_still_count(built_store) -> None:
    child = NamedNode("https://example.org/technique/child")
    with built_store.transaction("test data") as tx:
        tx.insert(CATALOG, [
            Triple(child, RDF.type, TKG.Technique), Triple(child, SKOS.prefLabel, text("A child")),
            Triple(child, SKOS.notation, text("child", None)),
            Triple(child, SKOS.broader, NamedNode("https://w3id.org/techkg/id/category/attention")),
            Triple(child, TKG.onComparisonPage, Literal("false", datatype=XSD.boolean)),
            Triple(child, TKG.extends, technique_iri("kda")), Triple(child, PROV.wasDerivedFrom, technique_iri("kda")),
        ])
    lineage = build_lineage(built_store, LineageOptions(root="KDA", direction="down"))
    edge = lineage.graph.edges[iri("kda"), child.value, "extends"]
    assert edge["relation"] == "extends" and "basis" not in edge  # unknown, not guessed


def test_bad_options_are_refused_with_a_hint(built_store) -> None:
    with pytest.raises(NotFoundError) as unknown:
        build_lineage(built_store, LineageOptions(root="Gated DeltaNett"))
    assert "Gated DeltaNet" in unknown.value.hint
    with pytest.raises(ExportError) as direction:
        build_lineage(built_store, LineageOptions(root="KDA", direction="sideways"))
    assert "--direction" in direction.value.hint
    with pytest.raises(ExportError):
        build_lineage(built_store, LineageOptions(root="KDA", depth=0))
    with pytest.raises(NotFoundError):
        build_lineage(built_store, LineageOptions(categories=("no-such-category",)))


def test_a_neighbourhood_read_bound_to_its_techniques_is_the_same_as_cut_from_the_whole(built_store) -> None:
    import kg.answer

    whole = build_lineage(built_store)
    near = build_lineage(built_store, LineageOptions(root="gated-deltanet", depth=1))
    assert len(near.graph) < len(whole.graph) // 2  # small enough to be read bound to its techniques
    for node, attrs in near.graph.nodes(data=True):
        assert attrs == whole.graph.nodes[node]
    assert sorted(near.graph.edges(keys=True, data=True)) == sorted(
        (u, v, k, d) for u, v, k, d in whole.graph.edges(keys=True, data=True) if u in near.graph and v in near.graph)
    bound = kg.answer.records(built_store, "lineage-nodes", {"technique": [iri("gated-deltanet"), iri("kda")]})
    assert sorted(r["id"] for r in bound) == ["gated-deltanet", "kda"]


def test_a_card_reads_only_the_papers_it_lists(private_store) -> None:
    most = iri("gated-deltanet")
    with private_store.transaction("test data") as tx:
        tx.insert(CATALOG, [Triple(NamedNode(f"https://example.org/paper/{i}"), TKG.usesTechnique, NamedNode(most))
                            for i in range(3)])
    full = build_lineage(private_store, LineageOptions(include_private=True))
    assert full.graph.nodes[most]["papers"] > 3
    cut = build_lineage(private_store, LineageOptions(include_private=True, papers_per_technique=1))
    assert len(cut.papers[most]) == 1 and len(full.papers[most]) == full.graph.nodes[most]["papers"]
    assert cut.graph.nodes[most] == full.graph.nodes[most]  # the counts stay exact


def test_a_card_that_lists_some_papers_counts_them_all(private_store) -> None:
    from exports.html import page_data

    most = iri("gated-deltanet")
    with private_store.transaction("test data") as tx:
        tx.insert(CATALOG, [Triple(NamedNode(f"https://example.org/paper/{i}"), TKG.usesTechnique, NamedNode(most))
                            for i in range(3)])
    cut = build_lineage(private_store, LineageOptions(include_private=True, papers_per_technique=1))
    card = page_data(cut, positions=False)["cards"][most]
    assert len(card["papers"]) == 1
    assert card["paperCount"] == cut.graph.nodes[most]["papers"] > 3


def test_each_listed_paper_keeps_its_title_and_role(private_store) -> None:
    whole = build_lineage(private_store, LineageOptions(include_private=True))
    refs = [ref for items in whole.papers.values() for ref in items]
    assert refs and all(ref.title and ref.role in ("introduces", "extends", "uses", "evaluates") for ref in refs)
    titled = {ref.iri: ref.title for ref in refs}
    # the same paper has the same card under every technique it is linked to
    assert all(titled[ref.iri] == ref.title for ref in refs)
    assert any(ref.title != ref.iri for ref in refs)  # the titles were read, not the IRI fallback
