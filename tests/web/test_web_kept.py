"""What the workbench keeps of the techniques' side of the graph across reading-status
writes: the pages read it once, yet show each paper's status as it is now; any other
write makes them read it again."""

from __future__ import annotations

import httpx
from pyoxigraph import Literal, NamedNode, Triple

from kg.graphs import graph_iri
from kg.reading import set_status
from kg.resolve import resolve_technique
from kg.server.web import models
from kg.store.base import Activity
from kg.vocab import SKOS


def test_a_status_write_shows_at_once_without_reading_the_technique_again(built_store, workbench,
                                                                          monkeypatch) -> None:
    store = built_store
    gdn = resolve_technique(store, "gdn")
    card = models.technique_page(store, gdn)["card"]
    paper = str(card["papers"][0]["paper"])
    reads: list[str] = []
    real = models.technique_page

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        reads.append("page")
        return real(*args, **kwargs)

    monkeypatch.setattr(models, "technique_page", counted)
    with workbench(store) as base, httpx.Client(base_url=base, timeout=60) as client:
        assert client.get("/techniques/gated-deltanet").status_code == 200
        for status in ("skipped", "read"):
            set_status(store, NamedNode(paper), status, via="test")
            data = models.with_statuses(store, real(store, gdn))
            page = client.get("/techniques/gated-deltanet")
            assert page.status_code == 200
            assert reads == ["page"]  # the technique was read once, before the writes
            assert data["readingBadge"] in page.text  # the badge counts the status just set
            assert f'data-paper="{paper}" data-status="{status}"' in page.text

        # Any other write (here a new alias in a graph of the user's) is read again at once.
        with store.transaction(Activity("test alias")) as tx:
            tx.insert(graph_iri("test-aliases"), [Triple(gdn, SKOS.altLabel, Literal("Delta Gate Test Alias"))])
        again = client.get("/techniques/gated-deltanet")
        assert again.status_code == 200 and "Delta Gate Test Alias" in again.text
        assert reads == ["page", "page"]


def test_the_catalog_signature_changes_with_every_graph_but_the_reading_state(built_store) -> None:
    store = built_store
    before = models.catalog_signature(store)
    paper = next(iter(store.select("SELECT ?p WHERE { ?p a bibo:Document } LIMIT 1")))["p"]
    set_status(store, paper, "read", via="test")  # type: ignore[arg-type]
    assert models.catalog_signature(store) == before
    with store.transaction(Activity("test note")) as tx:
        tx.insert(graph_iri("test-notes"), [Triple(NamedNode("https://example.org/n"), SKOS.note, Literal("x"))])
    assert models.catalog_signature(store) != before
