"""Links on the workbench: a technique's page lists its papers with their evidence and the
automatic links waiting for a verdict, which can be accepted or rejected there (guarded
like every write: no other site can); the reading page shows each paper's techniques."""

from __future__ import annotations

import httpx
import pytest

from kg.linking.apply import link_everything
from kg.linking.listing import list_links
from tests.web.conftest import form_key, workbench  # noqa: F401 - a fixture

ZERO = "https://w3id.org/techkg/id/technique/zero"


@pytest.fixture
def linked(built_store):
    link_everything(built_store)
    return built_store


def test_the_technique_page_lists_papers_with_evidence_and_links_to_review(linked, workbench) -> None:  # noqa: F811
    offload = next(r for r in list_links(linked, technique=ZERO) if r.paper_title and "Offload" in r.paper_title)
    with workbench(linked) as base, httpx.Client(base_url=base) as client:
        page = client.get("/techniques/zero").text
    papers = page[page.index('id="papers"'):page.index('id="links"')]
    assert "ZeRO-Offload: Democratizing Billion-Scale Model Training" in papers and "extends it" in papers
    assert 'class="context evidence"' in papers and "(title, catalog)" in papers
    review = page[page.index('id="links"'):page.index("<h2>Ancestors</h2>")]
    assert f'data-id="{offload.id}"' in review and 'action="/links/decide"' in review
    assert 'value="accept"' in review and 'value="reject"' in review


def test_accept_and_reject_on_the_page_and_no_other_site_can(linked, workbench) -> None:  # noqa: F811
    rows = [r for r in list_links(linked, technique=ZERO) if r.link.status == "auto"]
    assert len(rows) >= 2
    with workbench(linked) as base, httpx.Client(base_url=base) as client:
        key = form_key(client.get("/techniques/zero").text)
        form = {"id": rows[0].id, "verdict": "reject", "key": key, "next": "/techniques/zero#links"}
        own = {"Origin": base}
        assert client.post("/links/decide", data={**form, "key": "forged"}, headers=own).status_code == 403
        assert client.post("/links/decide", data=form, headers={"Origin": "https://evil.example"}).status_code == 403
        assert client.post("/links/decide", data=form, headers={"Origin": "null"}).status_code == 403
        assert list_links(linked, paper=rows[0].link.paper, technique=ZERO)[0].link.status == "auto"  # nothing yet
        done = client.post("/links/decide", data=form, headers=own)
        assert done.status_code == 303 and done.headers["location"] == "/techniques/zero#links"
        assert list_links(linked, paper=rows[0].link.paper, technique=ZERO)[0].link.status == "rejected"
        answer = client.post("/links/decide", data={"id": rows[1].id, "verdict": "accept", "key": key},
                             headers={**own, "Accept": "application/json"})
        assert answer.status_code == 200 and answer.json()["status"] == "accepted"
        page = client.get("/techniques/zero").text
        review = page[page.index('id="links"'):page.index("<h2>Ancestors</h2>")]
        assert f'data-id="{rows[0].id}"' not in review and f'data-id="{rows[1].id}"' not in review
        unknown = client.post("/links/decide", data={"id": "ln-0000000000000000", "verdict": "accept", "key": key},
                              headers=own)
        assert unknown.status_code == 404
        bad = client.post("/links/decide", data={"id": "ln-nope", "verdict": "accept", "key": key}, headers=own)
        assert bad.status_code == 400


def test_the_reading_page_shows_technique_chips(linked, workbench) -> None:  # noqa: F811
    with workbench(linked) as base, httpx.Client(base_url=base) as client:
        page = client.get("/reading?category=Distributed").text
    item = page[page.index("ZeRO-Offload: Democratizing"):]
    item = item[:item.index("</li>")]
    assert 'class="chip rel-extends"' in item and 'href="/techniques/zero"' in item and "DeepSpeed ZeRO" in item
