"""``kg news``: the papers new since the last look that are linked to the techniques one
follows, through the real ``kg`` script on a store on disk. The links are written as the
agreed triples (#28's links) directly into their graph; the follows through kg.follows."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pyoxigraph as ox
import pytest

from kg.follows import follow as kg_follow
from kg.graphs import graph_iri
from kg.iris import technique_iri
from kg.linking.model import Evidence, Link
from kg.linking.write import link_lines
from kg.store.base import Activity
from kg.store.embedded import OxigraphStore
from kg.vocab import BIBO, DCTERMS, RDF, TKG, datetime_literal, integer, text

GDN = technique_iri("gated-deltanet")
MLA = technique_iri("mla")
NOW = dt.datetime.now(dt.UTC)
BASE = "https://doi.org/10.5555/techkg.news."


def paper(key: str) -> ox.NamedNode:
    return ox.NamedNode(BASE + key)


def days_ago(n: float) -> ox.Literal:
    return datetime_literal(NOW - dt.timedelta(days=n))


def write_news(store_path: Path, *, follow: bool = True) -> None:
    """Five papers of the last weeks linked to Gated DeltaNet or MLA, one old one, and the
    reader following both."""
    rows = [  # key, title, days ago, relation, technique, link score, evidence, citations
        ("ext", "Chunkwise gated delta rules at scale", 1.5, "extendsTechnique", GDN, 0.9,
         "We extend Gated DeltaNet with a chunkwise parallel form.", 12),
        ("use", "A benchmark of linear attention", 1, "usesTechnique", GDN, 0.5,
         "We evaluate models trained with Gated DeltaNet layers.", 0),
        ("intro", "Latent attention for long contexts", 4, "introducesTechnique", MLA, None, None, 300),
        ("mention", "A survey of efficient sequence models", 3, "mentionsTechnique", GDN, 0.3,
         "Gated DeltaNet is one of several linear recurrences.", 0),
        ("both", "Delta rules meet latent attention", 5, "usesTechnique", MLA, 0.6,
         "We use MLA for the key-value cache.", 5),
        ("old", "An old paper on delta rules", 400, "extendsTechnique", GDN, 0.9, "We extend DeltaNet.", 1000),
    ]
    links, reified = [], []
    for key, title, age, relation, technique, score, evidence, citations in rows:
        node = paper(key)
        links += [ox.Triple(node, RDF.type, BIBO.Document), ox.Triple(node, DCTERMS.title, text(title, None)),
                  ox.Triple(node, DCTERMS.issued, days_ago(age)), ox.Triple(node, TKG[relation], technique),
                  ox.Triple(node, TKG.citationCount, integer(citations))]
        if score is not None:  # the link's node as kg link writes it (kg.linking.write)
            link = Link(node.value, technique.value, relation.removesuffix("Technique"), score,
                        evidence=[Evidence("abstract", evidence, graph_iri("arxiv").value)])
            reified += [q.triple for q in ox.parse("".join(link_lines(link, shown=False)),
                                                    format=ox.RdfFormat.N_TRIPLES)]
    # The "both" paper also mentions Gated DeltaNet, less strongly than it uses MLA.
    links.append(ox.Triple(paper("both"), TKG.mentionsTechnique, GDN))
    with OxigraphStore(store_path) as store:
        with store.transaction(Activity("test links")) as tx:
            tx.insert(graph_iri("links"), links + reified)
        if follow:
            kg_follow(store, [GDN, MLA])


@pytest.fixture
def news_store(built_store_path: Path) -> Path:
    write_news(built_store_path)
    return built_store_path


def run(kg_cli, store: Path, *args: str) -> dict:
    proc = kg_cli("news", *args, "-f", "json", store=store)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_new_papers_of_followed_techniques_are_ranked_with_their_evidence(kg_cli, news_store) -> None:
    found = run(kg_cli, news_store)
    order = [p["paper"].removeprefix(BASE) for p in found["papers"]]
    assert set(order) == {"ext", "use", "intro", "mention", "both"}  # the old one is not new
    # Introduces and extends first; then by strength, influence and recency.
    assert order[:2] == ["intro", "ext"] or order[:2] == ["ext", "intro"]
    assert order.index("use") < order.index("mention")
    ext = next(p for p in found["papers"] if p["paper"].endswith("ext"))
    assert ext["relation"] == "extends" and ext["technique_name"] == "Gated DeltaNet"
    assert ext["evidence"] == "We extend Gated DeltaNet with a chunkwise parallel form."
    assert ext["reason"].startswith("extends Gated DeltaNet: “We extend") and ext["evidence_field"] == "abstract"
    both = next(p for p in found["papers"] if p["paper"].endswith("both"))
    assert both["technique_name"] == "Multi-Head Latent Attention" and both["also"] == ["mentions Gated DeltaNet"]
    assert all(0 < p["score"] <= 1 for p in found["papers"])
    assert [f["inferred"] for f in found["followed"]] == [False, False]


def test_since_and_technique_narrow_what_is_new(kg_cli, news_store) -> None:
    assert {p["paper"].removeprefix(BASE) for p in run(kg_cli, news_store, "--since", "2d")["papers"]} == {
        "ext", "use"}
    since = (NOW - dt.timedelta(days=3, hours=12)).strftime("%Y-%m-%d")
    assert {p["paper"].removeprefix(BASE) for p in run(kg_cli, news_store, "--since", since)["papers"]} >= {
        "ext", "use", "mention"}
    only = run(kg_cli, news_store, "--technique", "MLA")
    assert {p["paper"].removeprefix(BASE) for p in only["papers"]} == {"intro", "both"}
    assert {p["paper"].removeprefix(BASE) for p in run(kg_cli, news_store, "--since", "2y")["papers"]} >= {"old"}
    bad = kg_cli("news", "--since", "yesterday-ish", store=news_store)
    assert bad.returncode == 1 and "--since takes" in bad.stderr


def test_seen_records_the_look_in_the_readers_own_graph(kg_cli, news_store) -> None:
    first = kg_cli("news", "--seen", store=news_store, check=True)
    assert "5 paper(s) marked seen" in first.stdout
    after = run(kg_cli, news_store)
    assert after["papers"] == [] and after["last_look"] is not None and "last look" in after["since_label"]
    # Seen papers stay out even over a longer span, unless asked for.
    assert run(kg_cli, news_store, "--since", "30d")["papers"] == []
    assert len(run(kg_cli, news_store, "--since", "30d", "--all")["papers"]) == 5
    graphs = json.loads(kg_cli("graph", "list", "-f", "json", store=news_store, check=True).stdout)
    assert any(g["graph"] == "news" and g["kind"] == "user" for g in graphs)


def test_the_digest_reads_as_markdown_and_the_table_fits(kg_cli, news_store) -> None:
    digest = kg_cli("news", "-f", "markdown", store=news_store, check=True).stdout
    assert digest.startswith("# What's new since ") and "## Gated DeltaNet" in digest
    assert "- **[Chunkwise gated delta rules at scale](https://doi.org/10.5555/techkg.news.ext)**" in digest
    table = kg_cli("news", store=news_store, env={"COLUMNS": "80"}, check=True).stdout
    assert all(len(line) <= 80 for line in table.splitlines()) and "Chunkwise" in table
    csv = kg_cli("news", "-f", "csv", store=news_store, check=True).stdout
    assert csv.splitlines()[0] == "rank,title,date,technique,relation,score,reason,link,paper"


def test_without_follows_the_reading_lists_techniques_are_followed(kg_cli, built_store_path) -> None:
    write_news(built_store_path, follow=False)
    with OxigraphStore(built_store_path) as store:
        from kg.reading import set_status

        set_status(store, ox.NamedNode("https://arxiv.org/abs/2412.06464"), "reading")  # Gated DeltaNet's paper
    found = run(kg_cli, built_store_path)
    assert {f["name"] for f in found["followed"]} >= {"Gated DeltaNet"} and all(
        f["inferred"] for f in found["followed"])
    assert "ext" in {p["paper"].removeprefix(BASE) for p in found["papers"]}


def test_a_new_paper_kg_link_links_to_a_followed_technique_is_news_until_rejected(kg_cli, built_store_path) -> None:
    """The links come from the linker itself (kg link), not written by hand: the paper's
    abstract is the evidence news shows, and a rejected link is no longer news."""
    node = paper("linked")
    with OxigraphStore(built_store_path) as store:
        with store.transaction(Activity("test arxiv")) as tx:
            tx.insert(graph_iri("arxiv"), [
                ox.Triple(node, RDF.type, BIBO.Document),
                ox.Triple(node, DCTERMS.title, text("Chunked recurrences for long-context language models", None)),
                ox.Triple(node, DCTERMS.abstract, text("We extend Gated DeltaNet with a chunkwise parallel form "
                                                       "that trains faster on long sequences.", None)),
                ox.Triple(node, DCTERMS.issued, days_ago(2))])
    kg_cli("follow", "Gated DeltaNet", store=built_store_path, check=True)
    kg_cli("link", store=built_store_path, check=True)
    found = run(kg_cli, built_store_path)
    item = next(p for p in found["papers"] if p["paper"] == node.value)
    assert item["technique_name"] == "Gated DeltaNet" and item["relation"] == "extends"
    assert "We extend Gated DeltaNet" in item["evidence"] and item["evidence_field"] == "abstract"
    assert item["evidence_source"] == "arxiv" and 0 < item["strength"] < 1
    links = json.loads(kg_cli("links", "Gated DeltaNet", "-f", "json", store=built_store_path, check=True).stdout)
    ident = next(row["id"] for row in links if row["paper"] == node.value)
    kg_cli("links", "reject", ident, store=built_store_path, check=True)
    assert node.value not in {p["paper"] for p in run(kg_cli, built_store_path)["papers"]}
