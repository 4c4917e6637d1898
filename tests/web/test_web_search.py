"""The workbench's search: the box at the top of every page, the results page with its facets,
from a real ``kg serve`` over HTTP."""

from __future__ import annotations

import re
from html import unescape

import httpx

from tests.web.conftest import HOSTILE_TITLE, Served

GDN_PAPER = "https://arxiv.org/abs/2412.06464"


def get(served: Served, path: str, **params: str) -> httpx.Response:
    return httpx.get(served.url(path), params=params or None, timeout=60)  # {} would drop the path's own query


def hit_iris(html: str) -> list[str]:
    return re.findall(r'<article class="hit panel" data-iri="([^"]+)"', html)


def test_every_page_has_the_search_box(server: Served) -> None:
    for path in ("/", "/techniques/gated-deltanet", "/reading", "/lineage", "/query", "/compare"):
        page = get(server, path)
        assert page.status_code == 200
        assert re.search(r'<form class="topsearch" method="get" action="/search" role="search">', page.text), path
    empty = get(server, "/search")
    assert empty.status_code == 200 and 'id="search-q"' in empty.text and not hit_iris(empty.text)


def test_results_are_ranked_with_marked_passages_and_facets_that_narrow(server: Served) -> None:
    page = get(server, "/search", q="delta rule")
    assert page.status_code == 200
    assert hit_iris(page.text)[0] == GDN_PAPER
    assert "<b>Delta</b>" in page.text and "<b>Rule</b>" in page.text
    facets = set(re.findall(r'<section class="facet" data-facet="(\w+)"', page.text))
    assert {"kind", "category", "technique"} <= facets
    # Following the "technique" facet narrows the results to the papers linked to it (and it).
    link = re.search(r'<a href="(/search\?[^"]*technique=gated-deltanet[^"]*)">Gated DeltaNet</a>', page.text)
    assert link, page.text
    narrowed = get(server, unescape(link.group(1)))
    assert narrowed.status_code == 200 and GDN_PAPER in hit_iris(narrowed.text)
    assert "linked to Gated DeltaNet" in narrowed.text and "technique: Gated DeltaNet ×" in narrowed.text
    read = get(server, "/search", q="", status="read")
    assert len(hit_iris(read.text)) == 8 and "8 results" in read.text


def test_a_bad_search_says_what_to_do(server: Served) -> None:
    page = get(server, "/search", q="attention", year="soon")
    assert page.status_code == 400 and "not a year" in page.text
    unknown = get(server, "/search", q="x", technique="Gated DeltNet")
    assert unknown.status_code == 404 and "Gated DeltaNet" in unknown.text


def test_hostile_titles_are_escaped_in_results(hostile_server: Served) -> None:
    page = get(hostile_server, "/search", q="Kimi Linear")
    assert page.status_code == 200 and hit_iris(page.text)
    assert "<script>alert(3)" not in page.text and "</script><script>" not in page.text
    assert "&lt;/script&gt;&lt;script&gt;alert(3)" in page.text or HOSTILE_TITLE not in page.text


def test_a_status_set_in_the_workbench_is_found_at_once(writable_server: Served) -> None:
    paper = "https://arxiv.org/abs/2006.15704"
    assert paper not in hit_iris(get(writable_server, "/search", q="", status="read").text)
    with httpx.Client(base_url=writable_server.base, timeout=60) as browser:
        key = re.search(r'name="techkg-form-key" content="([^"]+)"', browser.get("/reading").text)
        assert key
        done = browser.post("/reading/status", data={"paper": paper, "status": "read", "key": key.group(1)},
                            headers={"Origin": writable_server.base})
        assert done.status_code == 303
        assert paper in hit_iris(browser.get("/search", params={"status": "read"}).text)
