"""``kg search`` as a user runs it: the real ``kg`` script on a store on disk, the index
beside it made on first use, and kept current by the writes that change what it holds."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyoxigraph as ox
import pytest

from kg.follows import follow
from kg.graphs import graph_iri
from kg.search import freshness, index_root, update_index
from kg.store.base import Activity
from kg.store.embedded import OxigraphStore
from kg.vocab import BIBO, DCTERMS, RDF, text

GDN_PAPER = "https://arxiv.org/abs/2412.06464"


def hits(kg_cli, store: Path, *args: str) -> dict:
    proc = kg_cli("search", *args, "-f", "json", store=store)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def iris(found: dict) -> list[str]:
    return [h["iri"] for h in found["hits"]]


def test_the_first_search_makes_the_index_and_finds_papers_and_techniques(kg_cli, built_store_path) -> None:
    proc = kg_cli("search", "delta rule", "-f", "json", store=built_store_path)
    assert proc.returncode == 0, proc.stderr
    assert "making the search index" in proc.stderr
    found = json.loads(proc.stdout)
    assert found["hits"][0]["iri"] == GDN_PAPER
    assert "«Delta» «Rule»" in found["hits"][0]["snippet"] and "<b>Delta</b>" in found["hits"][0]["snippet_html"]
    assert (index_root(str(built_store_path)) / "current").exists()
    # An alias finds its technique; the second search reads the index alone.
    again = kg_cli("search", "GDN", "--kind", "technique", "-f", "json", store=built_store_path)
    assert "making" not in again.stderr
    assert json.loads(again.stdout)["hits"][0]["iri"].endswith("/technique/gated-deltanet")


def test_phrases_prefixes_and_leaving_out(kg_cli, built_store_path) -> None:
    phrase = iris(hits(kg_cli, built_store_path, '"delta rule"'))
    assert phrase[0] == GDN_PAPER
    prefix = hits(kg_cli, built_store_path, "deltan*", "--kind", "technique", "-n", "50")
    assert {h["iri"].rsplit("/", 1)[1] for h in prefix["hits"]} >= {"gated-deltanet", "kda"}
    assert any("«" in h["snippet"] for h in prefix["hits"])
    without = iris(hits(kg_cli, built_store_path, "deltan* -kimi", "--kind", "technique", "-n", "50"))
    assert without and not any(i.endswith("/kda") for i in without)


def test_filters_narrow_what_the_words_find(kg_cli, built_store_path) -> None:
    by_technique = hits(kg_cli, built_store_path, "", "--technique", "Gated DeltaNet")
    assert by_technique["technique"] == {"id": "gated-deltanet", "name": "Gated DeltaNet"}
    assert GDN_PAPER in iris(by_technique)
    assert all("gated-deltanet" in h["techniques"] for h in by_technique["hits"])
    moe = hits(kg_cli, built_store_path, "", "--category", "moe", "-n", "200")
    assert moe["total"] > 5 and all("Mixture of Experts" in h["categories"] for h in moe["hits"])
    years = hits(kg_cli, built_store_path, "attention", "--year", "2024-2025", "-n", "200")
    assert years["hits"] and all(2024 <= h["year"] <= 2025 for h in years["hits"])
    read = hits(kg_cli, built_store_path, "", "--status", "read", "-n", "200")
    assert read["total"] == 8 and all(h["status"] == "read" and h["mine"] for h in read["hits"])
    mine = hits(kg_cli, built_store_path, "", "--mine", "--kind", "paper", "-n", "500")
    assert mine["total"] >= 53 and all(h["mine"] for h in mine["hits"])
    facets = hits(kg_cli, built_store_path, "attention", "--facets")["facets"]
    assert {f["value"] for f in facets["kind"]} == {"paper", "technique"}
    assert any(f["value"] == "Attention" for f in facets["category"])


def test_bad_input_is_refused_with_a_hint(kg_cli, built_store_path) -> None:
    for args, words in ((["x", "--year", "20a4"], "not a year"), (["x", "--technique", "Gated DeltNet"],
                                                                  "Did you mean: Gated DeltaNet"),
                        (["x", "--category", "atention"], "Did you mean: Attention"), ([], "nothing to search for"),
                        (['"unclosed'], "cannot read the search")):
        proc = kg_cli("search", *args, store=built_store_path)
        assert proc.returncode == 1, (args, proc.stdout)
        assert words in proc.stderr, (args, proc.stderr)
        assert "Traceback" not in proc.stderr


def test_a_status_set_is_found_at_once_without_remaking_the_index(kg_cli, built_store_path) -> None:
    kg_cli("search", "gpipe", store=built_store_path, check=True)
    current = os.readlink(index_root(str(built_store_path)) / "current")
    assert not iris(hits(kg_cli, built_store_path, "gpipe", "--status", "reading"))
    kg_cli("reading", "set", "GPipe", "reading", store=built_store_path, check=True)
    found = hits(kg_cli, built_store_path, "gpipe", "--status", "reading")
    assert [h["title"] for h in found["hits"]] == [
        "GPipe: Efficient Training of Giant Neural Networks using Pipeline Parallelism"]
    assert os.readlink(index_root(str(built_store_path)) / "current") == current  # updated in place
    with OxigraphStore.open_reader(built_store_path) as store:
        assert freshness(store).state == "fresh"


def test_a_status_change_keeps_the_index_current_without_loading_arrow(kg_cli, built_store_path) -> None:
    # Arrow (with numpy) took 0.1 s of the patch's time at 700k papers: a few documents' facts
    # go to DuckDB as plain lists.
    kg_cli("search", "gpipe", store=built_store_path, check=True)
    done = kg_cli("reading", "set", "GPipe", "reading", store=built_store_path, check=True,
                  env={"PYTHONPROFILEIMPORTTIME": "1"})
    with OxigraphStore.open_reader(built_store_path) as store:
        assert freshness(store).state == "fresh"  # kept by the command itself
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "kg.search.facts" in imported
    assert not {name for name in imported if name.split(".")[0] in ("pyarrow", "numpy")}
    found = hits(kg_cli, built_store_path, "gpipe", "--status", "reading")
    assert [h["iri"] for h in found["hits"]] == ["https://arxiv.org/abs/1811.06965"]


def test_documents_made_again_from_a_few_subjects_are_those_of_the_whole_index(built_store_path) -> None:
    import kg.search.documents as documents
    from kg.search.facts import all_facts, facts_of

    def made(con) -> dict[str, dict[str, object]]:
        try:
            return {iri: json.loads(doc) for iri, doc in documents.documents(con, targets=targets)}
        finally:
            con.close()

    with OxigraphStore(built_store_path) as store:
        follow(store, [ox.NamedNode("https://w3id.org/techkg/id/technique/kda")])
        targets = [GDN_PAPER, "https://arxiv.org/abs/1811.06965", "https://w3id.org/techkg/id/technique/kda",
                   "https://w3id.org/techkg/id/technique/gated-deltanet"]
        whole = made(documents.load(all_facts(store)))
        patched = made(documents.load_rows(facts_of(store, targets)))
    assert sorted(whole) == sorted(targets)
    assert patched == whole


@contextmanager
def _written(path: Path, activity: str, graph: str, triples: list[ox.Triple]) -> Iterator[OxigraphStore]:
    """The store at ``path``, open, after one write of ``triples`` into ``graph`` that tells the index nothing."""
    with OxigraphStore(path) as store:
        with store.transaction(Activity(activity)) as tx:
            tx.insert(graph_iri(graph), triples)
        yield store


def test_a_write_that_did_not_say_is_caught_up_by_the_next_search(kg_cli, built_store_path) -> None:
    kg_cli("search", "gpipe", store=built_store_path, check=True)
    paper = ox.NamedNode("https://doi.org/10.5555/techkg.search-test")
    with _written(built_store_path, "a test's own write", "import/notes-test", [
            ox.Triple(paper, RDF.type, BIBO.Document),
            ox.Triple(paper, DCTERMS.title, text("Zebra routing for sparse experts", None)),
            ox.Triple(paper, DCTERMS.abstract, text("Stripes of experts take turns.", None))]) as store:
        assert freshness(store).state == "stale"
    found = hits(kg_cli, built_store_path, "zebra")
    assert iris(found) == [paper.value]


def test_notes_are_searched_and_are_the_readers_own(kg_cli, built_store_path) -> None:
    kg_cli("search", "gpipe", store=built_store_path, check=True)

    def fresh() -> bool:
        with OxigraphStore.open_reader(built_store_path) as store:
            return freshness(store).state == "fresh"

    kg_cli("reading", "note", GDN_PAPER, "Compare the decay with Mamba2 on the quokka benchmark",
           store=built_store_path, check=True)
    assert fresh()  # kg reading note kept the index current: nothing left for the next search
    found = hits(kg_cli, built_store_path, "quokka", "--mine")
    assert iris(found) == [GDN_PAPER] and found["hits"][0]["snippet"].count("«quokka»") == 1
    # An edit replaces the text the paper is found by; a deletion takes it away.
    kg_cli("reading", "note", GDN_PAPER, "Compare the decay on the wombat benchmark", "--edit",
           store=built_store_path, check=True)
    assert fresh()
    assert not iris(hits(kg_cli, built_store_path, "quokka"))
    assert iris(hits(kg_cli, built_store_path, "wombat", "--mine")) == [GDN_PAPER]
    kg_cli("reading", "note", GDN_PAPER, "--delete", "--yes", store=built_store_path, check=True)
    assert fresh()
    assert not iris(hits(kg_cli, built_store_path, "wombat"))


def test_kg_follow_and_unfollow_keep_the_readers_own_techniques_current(kg_cli, built_store_path) -> None:
    kg_cli("search", "gpipe", store=built_store_path, check=True)
    gdn = "https://w3id.org/techkg/id/technique/gated-deltanet"

    def mine() -> list[str]:
        with OxigraphStore.open_reader(built_store_path) as store:
            assert freshness(store).state == "fresh"  # the command kept the index current itself
        return iris(hits(kg_cli, built_store_path, "", "--mine", "--kind", "technique", "-n", "100"))

    kg_cli("follow", "Gated DeltaNet", store=built_store_path, check=True)
    assert gdn in mine()
    kg_cli("unfollow", "Gated DeltaNet", store=built_store_path, check=True)
    assert gdn not in mine()


def test_losing_the_index_loses_nothing(kg_cli, built_store_path) -> None:
    first = hits(kg_cli, built_store_path, "expert routing", "-n", "10")
    shutil.rmtree(index_root(str(built_store_path)))
    second = hits(kg_cli, built_store_path, "expert routing", "-n", "10")
    assert iris(second) == iris(first) and second["total"] == first["total"]


def test_kg_build_makes_the_index_and_ingests_keep_it_current(kg_cli, tmp_path, emulator) -> None:
    store = tmp_path / "store"
    kg_cli("build", "--no-validate", store=store, check=True)
    assert (index_root(str(store)) / "current").exists()
    assert not iris(hits(kg_cli, store, "chunkwise retrieval"))
    kg_cli("ingest", "citations", "--api-url", emulator.url, "--delay", "0", store=store, check=True)
    with OxigraphStore.open_reader(store) as reader:
        assert freshness(reader).state == "fresh"  # the ingest kept it so: no repair needed
    found = hits(kg_cli, store, "chunkwise retrieval")
    assert iris(found) == ["https://doi.org/10.5555/techkg.delta-study"]


def test_the_links_an_ingest_brings_are_searchable_at_once(kg_cli, tmp_path, emulator) -> None:
    """kg ingest citations links the papers it brought (a citation sentence names Gated
    DeltaNet), and tells the index which: the paper is found by its technique with no repair."""
    store = tmp_path / "store"
    kg_cli("build", "--no-validate", store=store, check=True)
    study = "https://doi.org/10.5555/techkg.delta-study"
    assert study not in iris(hits(kg_cli, store, "", "--technique", "Gated DeltaNet", "-n", "500"))
    kg_cli("ingest", "citations", "--api-url", emulator.url, "--delay", "0", store=store, check=True)
    with OxigraphStore.open_reader(store) as reader:
        assert reader.ask(f"ASK {{ GRAPH {graph_iri('links')} {{ <{study}> tkg:usesTechnique ?t }} }}")
        assert freshness(reader).state == "fresh"
    found = hits(kg_cli, store, "", "--technique", "Gated DeltaNet", "-n", "500")
    assert study in iris(found)
    assert "gated-deltanet" in next(h for h in found["hits"] if h["iri"] == study)["techniques"]


@pytest.mark.parametrize("fmt", ["table", "csv"])
def test_the_output_fits_80_columns_and_pipes(kg_cli, built_store_path, fmt: str) -> None:
    proc = kg_cli("search", "pipeline parallelism", "-f", fmt, store=built_store_path, env={"COLUMNS": "80"})
    assert proc.returncode == 0, proc.stderr
    if fmt == "csv":
        assert proc.stdout.splitlines()[0] == "rank,kind,title,year,status,match,link,iri"
    else:
        assert all(len(line) <= 80 for line in proc.stdout.splitlines())
        assert "GPipe" in proc.stdout and "«" in proc.stdout


def test_a_followed_technique_is_the_readers_own(kg_cli, built_store_path) -> None:
    kg_cli("search", "gpipe", store=built_store_path, check=True)
    gdn = "https://w3id.org/techkg/id/technique/gated-deltanet"
    assert gdn not in iris(hits(kg_cli, built_store_path, "", "--mine", "--kind", "technique", "-n", "100"))
    with OxigraphStore(built_store_path) as store:
        follow(store, [ox.NamedNode(gdn)])  # the core's write, which tells the index nothing
    # No write said what changed: the next search follows the changed graph to its documents.
    assert gdn in iris(hits(kg_cli, built_store_path, "", "--mine", "--kind", "technique", "-n", "100"))


def test_a_changed_graph_too_large_to_follow_makes_the_index_again(built_store_path, monkeypatch) -> None:
    import kg.search.index as index
    from kg.search import rebuild_index

    with OxigraphStore(built_store_path) as store:
        rebuild_index(store)
        paper = ox.NamedNode("https://doi.org/10.5555/techkg.search-big")
        with store.transaction(Activity("a large write")) as tx:
            tx.insert(graph_iri("import/big"), [ox.Triple(paper, RDF.type, BIBO.Document),
                                                 ox.Triple(paper, DCTERMS.title, text("Capybara routing", None))])
        monkeypatch.setattr(index, "REPAIR_LIMIT", 1)
        report = update_index(store)
        assert report.mode == "rebuilt" and freshness(store).state == "fresh"
        monkeypatch.setattr(index, "REPAIR_LIMIT", 300_000)
        with store.transaction(Activity("a small write")) as tx:
            tx.insert(graph_iri("import/big"), [ox.Triple(paper, DCTERMS.abstract, text("Wombats too.", None))])
        report = update_index(store)
        assert report.mode == "updated" and report.written >= 1


def test_a_write_of_many_documents_leaves_the_index_to_the_next_search_and_says_so(kg_cli, built_store_path,
                                                                                   tmp_path) -> None:
    kg_cli("search", "gpipe", store=built_store_path, check=True)
    current = os.readlink(index_root(str(built_store_path)) / "current")
    rdf = tmp_path / "two.nt"
    rdf.write_text("".join(
        f'<https://doi.org/10.5555/techkg.okapi-{i}> <{RDF.type.value}> <{BIBO.Document.value}> .\n'
        f'<https://doi.org/10.5555/techkg.okapi-{i}> <{DCTERMS.title.value}> "Okapi routing part {i}" .\n'
        for i in (1, 2)), encoding="utf-8")
    done = kg_cli("import", "rdf", str(rdf), "--graph", "okapi", store=built_store_path, check=True,
                  env={"KG_KEEP_DOCUMENTS": "1"})  # two papers are more than this keeper makes again
    said = " ".join(done.stderr.split())
    assert "the search index is stale now (" in said and "the next kg search brings it up to date" in said
    with OxigraphStore.open_reader(built_store_path) as store:
        assert freshness(store).state == "stale"  # left as it was, not half made
    assert os.readlink(index_root(str(built_store_path)) / "current") == current
    # a small write meanwhile leaves the stale index to the search too, without saying it again
    done = kg_cli("reading", "set", "GPipe", "reading", store=built_store_path, check=True)
    assert "search index" not in done.stderr
    with OxigraphStore.open_reader(built_store_path) as store:
        assert freshness(store).state == "stale"
    found = hits(kg_cli, built_store_path, "okapi")
    assert sorted(iris(found)) == [f"https://doi.org/10.5555/techkg.okapi-{i}" for i in (1, 2)]
    # within the bound, the write keeps it current itself
    rdf.write_text(f'<https://doi.org/10.5555/techkg.okapi-3> <{RDF.type.value}> <{BIBO.Document.value}> .\n'
                   f'<https://doi.org/10.5555/techkg.okapi-3> <{DCTERMS.title.value}> "Okapi routing part 3" .\n',
                   encoding="utf-8")
    done = kg_cli("import", "rdf", str(rdf), "--graph", "okapi-3", store=built_store_path, check=True,
                  env={"KG_KEEP_DOCUMENTS": "50"})
    assert "search index is stale" not in done.stderr
    with OxigraphStore.open_reader(built_store_path) as store:
        assert freshness(store).state == "fresh"


def test_a_whole_index_made_in_parts_holds_the_same_documents_as_one_made_at_once(built_store_path, tmp_path,
                                                                                   monkeypatch) -> None:
    import kg.search.documents as documents
    from kg.search.facts import all_facts

    def made(folder: Path | None) -> dict[str, dict[str, object]]:
        con = documents.load(all_facts(store), folder)
        try:
            return {iri: json.loads(doc) for iri, doc in documents.documents(con)}
        finally:
            con.close()

    with OxigraphStore(built_store_path) as store:
        at_once = made(None)
        monkeypatch.setattr(documents, "PART_BYTES", 2_000)  # the built store's facts in many parts
        monkeypatch.setattr(documents, "LOT_ROWS", 300)  # copied into DuckDB a few hundred rows at a time
        in_parts = made(tmp_path)
    assert len(at_once) > 100
    assert in_parts == at_once
    assert (tmp_path / "facts.duckdb").exists()  # made in the file, within the memory bound
