"""``kg suggest reading`` and the ``kg suggest`` commands as a user runs them."""

from __future__ import annotations

import json

import pyoxigraph as ox
import pytest

from ingest.citations import CitationRun, ingest_citations
from kg.iris import technique_iri
from kg.reading import current_statuses, set_status
from kg.readnext import add_to_reading_list, reading_suggestions

GDN_PAPER = ox.NamedNode("https://arxiv.org/abs/2412.06464")
STUDY = "https://doi.org/10.5555/techkg.delta-study"
RECOMMENDED = "https://doi.org/10.5555/techkg.recommended"
COCITED = "https://doi.org/10.5555/techkg.cocited"


@pytest.fixture
def cited(built_store, source):
    ingest_citations(built_store, source, CitationRun(recommendations=True))
    return built_store


def test_papers_are_ranked_by_evidence_towards_a_technique(cited) -> None:
    found = reading_suggestions(cited, technique=ox.NamedNode(technique_iri("gated-deltanet").value))
    order = [s.paper for s in found]
    assert set(order) >= {STUDY, RECOMMENDED, COCITED}
    assert order.index(STUDY) < order.index(RECOMMENDED) < order.index(COCITED)
    study = found[order.index(STUDY)]
    assert study.reason.startswith("builds on Gated DeltaNet's paper") and {e["kind"] for e in study.evidence} == {
        "cites-method", "cites-influential"}
    assert "recommends it to readers of Gated DeltaNet's paper" in found[order.index(RECOMMENDED)].reason
    assert "cited together with Gated DeltaNet's paper by 1 paper" in found[order.index(COCITED)].reason
    assert all(s.score > 0 and s.reason for s in found)


def test_what_the_reader_follows_and_has_read_are_the_seeds(cited) -> None:
    assert STUDY not in {s.paper for s in reading_suggestions(cited)}
    set_status(cited, GDN_PAPER, "reading")  # following Gated DeltaNet now
    found = {s.paper: s for s in reading_suggestions(cited, limit=50)}
    assert STUDY in found and GDN_PAPER.value not in found  # on the list: never suggested
    set_status(cited, ox.NamedNode(STUDY), "read")
    assert STUDY not in {s.paper for s in reading_suggestions(cited, limit=50)}


def test_add_puts_the_suggestions_on_the_list_as_to_read(cited) -> None:
    found = reading_suggestions(cited, technique=ox.NamedNode(technique_iri("gated-deltanet").value), limit=2)
    added = add_to_reading_list(cited, [s.paper for s in found])
    assert added == [s.paper for s in found]
    statuses = current_statuses(cited)
    assert all(statuses[p][0] == "to-read" for p in added)
    assert add_to_reading_list(cited, added) == []
    again = reading_suggestions(cited, technique=ox.NamedNode(technique_iri("gated-deltanet").value), limit=2)
    assert not {s.paper for s in again} & set(added)


def test_the_suggest_commands_take_every_format(kg_cli, emulator, built_store_path) -> None:
    kg_cli("ingest", "citations", "--api-url", emulator.url, "--delay", "0", store=built_store_path, check=True)
    table = kg_cli("suggest", "lineage", store=built_store_path, check=True)
    assert "DiffusionNFT" in table.stdout and "confirmed by citations" in table.stdout
    as_json = json.loads(kg_cli("suggest", "lineage", "-f", "json", store=built_store_path, check=True).stdout)
    ids = {(s["child_id"], s["parent_id"]): s["id"] for s in as_json["suggestions"]}
    csv = kg_cli("suggest", "lineage", "grpo", "-f", "csv", store=built_store_path, check=True).stdout
    assert csv.splitlines()[0] == "kind,id,child,relation,parent,score,status,evidence" and "DanceGRPO" in csv
    accepted = kg_cli("suggest", "accept", ids[("diffusionnft", "grpo")], "--as", "ports-to", "-f", "json",
                      store=built_store_path, check=True)
    assert json.loads(accepted.stdout)["relation"] == "portsTo"
    tree = kg_cli("lineage", "DiffusionNFT", "--direction", "up", store=built_store_path, check=True).stdout
    assert "portsTo, added by you" in tree and "We extend GRPO" in tree
    up = json.loads(kg_cli("lineage", "DiffusionNFT", "-f", "json", store=built_store_path, check=True).stdout)
    assert up["ancestors"][0]["basis"] == "accepted"
    rejected = kg_cli("suggest", "reject", ids[("latentmoe", "aux-loss-free-balancing")], store=built_store_path,
                      check=True)
    assert "will not be suggested again" in rejected.stdout
    missing = kg_cli("suggest", "accept", "sg-nothing", store=built_store_path)
    assert missing.returncode == 1 and "no lineage suggestion" in missing.stderr
    reading = kg_cli("suggest", "reading", "-t", "GDN", "-n", "3", "--add", store=built_store_path, check=True)
    assert "Read next: 3 papers" in reading.stdout and "3 paper(s) put on the reading list" in reading.stdout
    listed = kg_cli("reading", "list", "--status", "to-read", "-f", "json", store=built_store_path, check=True)
    assert "Chunkwise gated delta rules for long-context retrieval" in listed.stdout
    as_csv = kg_cli("suggest", "reading", "-t", "GDN", "-f", "csv", store=built_store_path, check=True).stdout
    assert as_csv.splitlines()[0] == ("rank,id,title,authors,year,venue,score,reason,evidence,summary,citations,"
                                      "link,paper")


def test_without_citations_the_commands_say_what_to_run(kg_cli, built_store_path) -> None:
    out = kg_cli("suggest", "lineage", "--no-existing", store=built_store_path, check=True).stdout
    assert "run kg ingest citations first" in out
    assert "run kg ingest citations first" in kg_cli("suggest", "reading", store=built_store_path, check=True).stdout


def test_the_read_seeds_are_the_latest_reads_by_instant(tmp_path, monkeypatch) -> None:
    """The latest reads are picked in Python (Oxigraph's ORDER BY on dates is slow): the
    same papers as SPARQL's ORDER BY DESC(?at) ?p, across time zones and ties."""
    import kg.readnext
    from tests.citations.reads import READ, store_with_reads

    read = READ
    store = store_with_reads(tmp_path / "store")
    for keep in (1, 3, 5):  # (a string sort would put read.0, 08:00Z, before read.1, 09:00Z)
        monkeypatch.setattr(kg.readnext, "READ_SEEDS", keep)
        rows = store.select(f"""SELECT ?p WHERE {{ ?p tkg:readingStatus <{read.value}> ; tkg:statusChangedAt ?at }}
                                ORDER BY DESC(?at) ?p LIMIT {keep}""")
        expected = [str(r["p"]) for r in rows.records()]
        assert set(kg.readnext.seeds(store)) == set(expected)
    store.close()


def test_each_suggestion_shows_what_a_reader_triages_by(kg_cli, emulator, built_store_path) -> None:
    kg_cli("ingest", "citations", "--api-url", emulator.url, "--delay", "0", store=built_store_path, check=True)
    found = json.loads(kg_cli("suggest", "reading", "-t", "GDN", "-f", "json", store=built_store_path,
                              check=True).stdout)["suggestions"]
    study = next(s for s in found if s["paper"] == STUDY)
    assert study["id"].startswith("rd-") and 0 < study["score"] <= 1
    assert study["sentence"] == "We use the chunkwise algorithm of Gated DeltaNet for training."
    assert study["sentence_intents"] == ["methodology"]
    assert study["authors"] == ["A. Reader", "B. Writer"] and study["year"] == "2025" and study["venue"] == "arXiv.org"
    assert study["summary"].startswith("We study how the chunkwise form of gated delta rules")
    assert study["citations"] == 0 and study["link"] == "https://doi.org/10.5555/techkg.delta-study"
    assert all(0 < s["score"] <= 1 for s in found)
    assert [s["score"] for s in found] == sorted((s["score"] for s in found), reverse=True)
    table = kg_cli("suggest", "reading", "-t", "GDN", "-n", "3", store=built_store_path, env={"COLUMNS": "80"},
                   check=True).stdout
    assert all(len(line) <= 80 for line in table.splitlines())
    assert "We use the chunkwise algorithm" in table and "A. Reader" in table and study["id"] in table


def test_a_rejected_paper_is_never_suggested_again(kg_cli, emulator, built_store_path) -> None:
    kg_cli("ingest", "citations", "--api-url", emulator.url, "--delay", "0", store=built_store_path, check=True)
    found = json.loads(kg_cli("suggest", "reading", "-t", "GDN", "-f", "json", store=built_store_path,
                              check=True).stdout)["suggestions"]
    ident = next(s["id"] for s in found if s["paper"] == STUDY)
    done = kg_cli("suggest", "reading", "reject", ident, store=built_store_path, check=True)
    assert "will not be suggested again" in done.stdout
    again = json.loads(kg_cli("suggest", "reading", "-t", "GDN", "-n", "50", "-f", "json", store=built_store_path,
                              check=True).stdout)["suggestions"]
    assert STUDY not in {s["paper"] for s in again}
    graphs = json.loads(kg_cli("graph", "list", "-f", "json", store=built_store_path, check=True).stdout)
    assert any(g["graph"] == "reading-decisions" and g["kind"] == "user" for g in graphs)
    # A refresh of the citations does not bring it back; taking the rejection back does.
    kg_cli("ingest", "citations", "--full", "--api-url", emulator.url, "--delay", "0", store=built_store_path,
           check=True)
    assert STUDY not in {s["paper"] for s in json.loads(kg_cli(
        "suggest", "reading", "-t", "GDN", "-n", "50", "-f", "json", store=built_store_path).stdout)["suggestions"]}
    kg_cli("suggest", "reading", "reject", "--undo", "Chunkwise gated delta rules", store=built_store_path,
           check=True)
    assert STUDY in {s["paper"] for s in json.loads(kg_cli(
        "suggest", "reading", "-t", "GDN", "-n", "50", "-f", "json", store=built_store_path).stdout)["suggestions"]}
    missing = kg_cli("suggest", "reading", "reject", "rd-00000000", store=built_store_path)
    assert missing.returncode == 1 and "no paper has the suggestion id" in missing.stderr


def test_papers_sharing_references_with_a_seed_are_suggested_by_coupling(built_store, source, emulator) -> None:
    # The survey cites MQA's paper, which Gated DeltaNet's paper cites too (MQA's list of citing
    # papers shows it): bibliographic coupling, on the same scale.
    emulator.cite(emulator.ids["survey"], emulator.ids["mqa"])
    ingest_citations(built_store, source)
    found = {s.paper: s for s in reading_suggestions(built_store, technique=ox.NamedNode(
        technique_iri("gated-deltanet").value), limit=50)}
    survey = found["https://doi.org/10.5555/techkg.survey"]
    coupled = [e for e in survey.evidence if e["kind"] == "coupled"]
    assert coupled and coupled[0]["n"] == 1 and coupled[0]["weight"] == 0.08
    assert 0 < survey.score <= 1
