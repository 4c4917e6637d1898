"""The Zotero read side (``kg ingest zotero``): items, creators, tags, collections,
child notes, relations and reading statuses land in the graph, mapped onto their papers,
incrementally, and nothing is written to Zotero."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from pyoxigraph import NamedNode

from ingest.emulators.zotero import ZoteroEmulator
from ingest.zotero import (
    LibrarySpec,
    ZoteroAPI,
    api_key,
    paper_iri_for,
    parse_item,
    status_from_zotero,
)
from ingest.zotero_sync import ingest
from kg.errors import SyncError
from kg.graphs import READING, ZOTERO
from kg.reading import current_statuses
from tests.conftest import FIXTURES
from tests.sync.conftest import GROUP_ID, USER_ID

GDN = NamedNode("https://arxiv.org/abs/2412.06464")
TRANSFORMER = NamedNode("https://arxiv.org/abs/1706.03762")
RECOMPUTATION = NamedNode("https://arxiv.org/abs/2205.05198")
LIB = LibrarySpec("user", USER_ID)


def _values(store, sparql: str, **bindings: Any) -> set[str]:
    return {str(next(iter(row.values())).value) for row in store.select(sparql, bindings)}  # type: ignore[union-attr]


# -- items → papers --------------------------------------------------------------------------------


@pytest.mark.parametrize("data", [
    {"itemType": "preprint", "url": "http://arxiv.org/abs/2412.06464v3"},
    {"itemType": "journalArticle", "extra": "arXiv: 2412.06464"},
    {"itemType": "preprint", "archiveID": "arXiv:2412.06464"},
    {"itemType": "report", "archive": "arXiv", "archiveLocation": "2412.06464"},
    {"itemType": "conferencePaper", "DOI": "10.48550/arXiv.2412.06464"},
    {"itemType": "journalArticle", "publicationTitle": "arXiv:2412.06464 [cs]"},
])
def test_an_item_maps_to_its_paper_by_arxiv_id(data: dict[str, Any]) -> None:
    item = parse_item({"key": "ABCD2345", "version": 3, "title": "Gated Delta Networks", **data})
    assert item.arxiv == "2412.06464"
    assert paper_iri_for(item, LIB) == GDN


def test_items_without_arxiv_id_map_by_doi_then_by_their_own_name() -> None:
    by_doi = parse_item({"key": "ABCD2345", "itemType": "conferencePaper", "DOI": "https://doi.org/10.1145/3503221.3508418"})
    assert paper_iri_for(by_doi, LIB) == NamedNode("https://doi.org/10.1145/3503221.3508418")
    ours = parse_item({"key": "ABCD2345", "itemType": "webpage",
                       "extra": "TechKG-ID: https://w3id.org/techkg/id/paper/deepep"})
    assert paper_iri_for(ours, LIB) == NamedNode("https://w3id.org/techkg/id/paper/deepep")
    other = parse_item({"key": "ABCD2345", "itemType": "book", "title": "The Hound"})
    assert paper_iri_for(other, LIB).value.endswith("/paper/zotero-user-475425-abcd2345")


def test_reading_status_comes_from_extra_or_tags_and_custom_ones_stay_verbatim() -> None:
    item = parse_item({"key": "ABCD2345", "itemType": "preprint",
                       "extra": "Some note\nRead_Status: In Progress\nRead_Status_Date: 2025-03-04T05:06:07.123Z",
                       "tags": [{"tag": "status/Skimmed twice"}, {"tag": "moe"}]})
    assert item.extra_status == "reading" and item.extra_status_at is not None
    assert item.extra_status_at.isoformat() == "2025-03-04T05:06:07.123000+00:00"
    assert item.tag_status == "Skimmed twice" and item.tags == ["moe"] and item.extra_rest == ["Some note"]
    assert [status_from_zotero(s) for s in ("To Read", "Read", "Not Reading", "New", "🙋 later", "read")] == [
        "to-read", "read", "skipped", "New", "🙋 later", "read"]


def test_a_library_is_named_user_or_group_with_its_id() -> None:
    assert LibrarySpec.parse("group:169947") == LibrarySpec("group", 169947)
    assert str(LibrarySpec.parse("users/475425")) == "user:475425"
    with pytest.raises(SyncError) as error:
        LibrarySpec.parse("me")
    assert "user:<userID>" in error.value.hint


def test_the_api_key_comes_from_the_environment_or_the_keyring(monkeypatch: pytest.MonkeyPatch) -> None:
    import keyring
    from keyring.backend import KeyringBackend

    class Memory(KeyringBackend):
        priority = 1  # type: ignore[assignment]

        def __init__(self) -> None:
            self.data = {("techkg-zotero", "user:475425"): "FROMKEYRING123"}

        def get_password(self, service: str, username: str) -> str | None:
            return self.data.get((service, username))

        def set_password(self, service: str, username: str, password: str) -> None:
            self.data[(service, username)] = password

        def delete_password(self, service: str, username: str) -> None:
            self.data.pop((service, username), None)

    previous = keyring.get_keyring()
    keyring.set_keyring(Memory())
    try:
        assert api_key(LIB, environ={}) == "FROMKEYRING123"
        assert api_key(LIB, environ={"ZOTERO_API_KEY": "FROMENV12345"}) == "FROMENV12345"
        assert api_key(LibrarySpec("group", 1), environ={}) is None
    finally:
        keyring.set_keyring(previous)


# -- kg ingest zotero ------------------------------------------------------------------------------


def _fill(emulator: ZoteroEmulator) -> dict[str, str]:
    """The recorded public library plus reading-list items as the plugin writes them."""
    lib = emulator.library("user", USER_ID)
    recorded = json.loads((FIXTURES / "zotero" / "pyzotero" / "items_doc.json").read_text())
    for key in sorted({c for item in recorded for c in item["data"]["collections"]}):
        lib.create_collection(f"Sherlock {key}", key=key)
    lib.create_items([{k: v for k, v in item["data"].items() if k not in ("version", "dateAdded", "dateModified")}
                      for item in recorded])
    attention = lib.create_collection("Attention")
    gdn, transformer, recompute = lib.create_items([
        {"itemType": "preprint", "title": "Gated Delta Networks: Improving Mamba2 with Delta Rule",
         "url": "http://arxiv.org/abs/2412.06464v3", "date": "2024-12-09",
         "creators": [{"creatorType": "author", "firstName": "Songlin", "lastName": "Yang"},
                      {"creatorType": "author", "name": "NVIDIA Research"}],
         "extra": "Read_Status: Read\nRead_Status_Date: 2025-01-02T03:04:05.000Z",
         "tags": [{"tag": "linear attention"}], "collections": [attention]},
        {"itemType": "journalArticle", "title": "Attention is all you need", "archive": "arXiv",
         "archiveLocation": "1706.03762", "extra": "Read_Status: Skimmed twice", "collections": [attention]},
        {"itemType": "conferencePaper", "title": "Reducing Activation Recomputation in Large Transformer Models",
         "DOI": "10.48550/arXiv.2205.05198", "tags": [{"tag": "status/reading"}]},
    ])
    lib.update_item(transformer, relations={"dc:relation": f"http://zotero.org/users/{USER_ID}/items/{gdn}"})
    lib.create_items([{"itemType": "note", "parentItem": gdn, "note": "<p>The delta rule, gated.</p>"}])
    return {"gdn": gdn, "transformer": transformer, "recompute": recompute}


def test_ingest_reads_items_onto_their_papers(built_store, emulator: ZoteroEmulator, api: ZoteroAPI) -> None:
    keys = _fill(emulator)
    report = ingest(built_store, api)
    assert report.direction == "pull" and not report.failed
    assert emulator.request_count("POST") == 0 and all(r.method == "GET" for r in emulator.requests)
    statuses = current_statuses(built_store)
    assert statuses[GDN.value][0] == "read" and statuses[GDN.value][1] == "2025-01-02T03:04:05Z"
    assert statuses[TRANSFORMER.value][0] == "skimmed-twice"
    assert _values(built_store, "SELECT ?l WHERE { ?p tkg:readingStatus ?s . ?s skos:prefLabel ?l }",
                   p=TRANSFORMER) == {"Skimmed twice"}
    assert statuses[RECOMPUTATION.value][0] == "to-read", "status tags are read only with --status-format tags"
    zg = f"GRAPH {ZOTERO}"
    assert _values(built_store, f"SELECT ?t WHERE {{ {zg} {{ ?p tkg:tag ?t }} }}", p=GDN) == {"linear attention"}
    assert _values(built_store, f"SELECT ?l WHERE {{ {zg} {{ ?p tkg:readingCategory ?c }} ?c skos:prefLabel ?l }}",
                   p=GDN) == {"Attention"}
    assert _values(built_store, f"SELECT ?n WHERE {{ {zg} {{ ?p dcterms:creator/foaf:name ?n }} }}", p=GDN) == {
        "Songlin Yang", "NVIDIA Research"}
    assert _values(built_store, f"SELECT ?v WHERE {{ {zg} {{ ?n tkg:noteOf ?p ; rdf:value ?v }} }}", p=GDN) == {
        "<p>The delta rule, gated.</p>"}
    assert _values(built_store, "SELECT ?h WHERE { ?p tkg:hasNote ?h }", p=GDN) == {"true"}
    assert _values(built_store, f"SELECT ?k WHERE {{ {zg} {{ ?p tkg:zoteroItem/tkg:zoteroKey ?k }} }}", p=GDN) == {
        keys["gdn"]}
    assert _values(built_store, f"SELECT ?r WHERE {{ {zg} {{ ?p tkg:zoteroItem/dcterms:relation ?r }} }}",
                   p=TRANSFORMER) == {f"http://zotero.org/users/{USER_ID}/items/{keys['gdn']}"}
    assert any("ArticleType: research-article" in v for v in _values(
        built_store, f"SELECT ?x WHERE {{ {zg} {{ ?p tkg:zoteroItem/skos:note ?x }} }}",
        p=NamedNode("https://doi.org/10.2307/2321200")))
    sherlock = NamedNode("https://doi.org/10.2307/2321200")
    assert _values(built_store, "SELECT ?t WHERE { ?p dcterms:title ?t }", p=sherlock) == {"Sherlock Holmes in Babylon"}
    # no second node for a paper the catalog knows
    assert _values(built_store, "SELECT ?p WHERE { ?p tkg:arxivId ?id }", id=_lit("2412.06464")) == {GDN.value}


def _lit(value: str):
    from pyoxigraph import Literal

    return Literal(value)


def test_ingest_validates_against_the_shapes(built_store, emulator: ZoteroEmulator, api: ZoteroAPI) -> None:
    from kg.validate import validate_store

    _fill(emulator)
    ingest(built_store, api)
    assert validate_store(built_store) == []


def test_ingest_is_incremental_per_library(built_store, emulator: ZoteroEmulator,
                                           api_for: Callable[..., ZoteroAPI]) -> None:
    keys = _fill(emulator)
    user = api_for()
    ingest(built_store, user)
    lib = emulator.library("user", USER_ID)
    watermark = lib.version
    emulator.requests.clear()
    assert ingest(built_store, user).changes == []
    assert [(r.path, r.params.get("since"), r.params.get("format")) for r in emulator.requests] == [
        (f"/users/{USER_ID}/items", str(watermark), "versions")]
    lib.update_item(keys["gdn"], extra="Read_Status: To Read")
    emulator.requests.clear()
    report = ingest(built_store, user)
    assert [c.fields for c in report.changes] == [("status",)]
    fetched = [r for r in emulator.requests if "itemKey" in r.params]
    assert [r.params["itemKey"] for r in fetched] == [keys["gdn"]]
    assert all(r.params.get("since") == str(watermark) for r in emulator.requests if "since" in r.params)
    assert current_statuses(built_store)[GDN.value][0] == "to-read"
    group = emulator.library("group", GROUP_ID)
    group.create_items([{"itemType": "preprint", "title": "GRPO", "url": "https://arxiv.org/abs/2402.03300"}])
    ingest(built_store, api_for(f"group:{GROUP_ID}"))
    versions = _values(built_store, "SELECT ?l WHERE { GRAPH ?g { ?s tkg:library ?l ; tkg:libraryVersion ?v } }")
    assert versions == {f"user:{USER_ID}", f"group:{GROUP_ID}"}


def test_ingest_leaves_graph_edits_for_the_two_way_sync(built_store, emulator: ZoteroEmulator,
                                                        api: ZoteroAPI) -> None:
    from kg.reading import set_status

    keys = _fill(emulator)
    ingest(built_store, api)
    set_status(built_store, GDN, "reading")
    emulator.library("user", USER_ID).update_item(keys["gdn"], extra="Read_Status: Not Reading")
    report = ingest(built_store, api)
    assert [(c.field, c.rule) for c in report.conflicts if c.paper == GDN.value] == [("status", "pending")]
    assert current_statuses(built_store)[GDN.value][0] == "reading"
    assert "Not Reading" in emulator.library("user", USER_ID).item(keys["gdn"])["extra"]


def test_a_failed_read_leaves_the_graph_as_it_was(built_store, emulator: ZoteroEmulator, api: ZoteroAPI) -> None:
    from kg.errors import IngestError

    _fill(emulator)
    before = sorted(str(t) for t in built_store.triples(READING))
    emulator.faults.answer(500, "Internal Server Error", times=10, on="read", path="/items")
    with pytest.raises(IngestError) as error:
        ingest(built_store, api)
    assert "Zotero" in str(error.value) and error.value.hint
    assert sorted(str(t) for t in built_store.triples(READING)) == before
    assert built_store.count(ZOTERO) == 0


def test_a_public_library_is_read_without_a_key(fresh_store, emulator: ZoteroEmulator,
                                                api_for: Callable[..., ZoteroAPI]) -> None:
    public = emulator.add_library("group", 555, name="public", public=True)
    public.create_items([{"itemType": "preprint", "title": "GRPO", "url": "https://arxiv.org/abs/2402.03300",
                          "extra": "Read_Status: To Read"}])
    report = ingest(fresh_store, api_for("group:555", key=None))
    assert report.counts()["graph_created"] == 1
    assert current_statuses(fresh_store)["https://arxiv.org/abs/2402.03300"][0] == "to-read"
    assert not any(r.authorized for r in emulator.requests)
