"""``/queries/NAME`` on ``kg serve`` answers like ``kg query NAME``: from fresh analytics
tables where the query has a DuckDB twin, by SPARQL once they are stale, with the same
rows either way, whole or page by page, and a header that says which answered."""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.servers import serving

JSON = {"Accept": "application/sparql-results+json"}


def _serve(store):
    from kg.server import ServerSettings, create_app

    return serving(create_app(store, ServerSettings(workers=1)))


def _rows(answer: httpx.Response) -> list[tuple]:
    data = answer.json()
    variables = data["head"]["vars"]
    return [tuple((b[v]["type"], b[v]["value"]) if v in b else None for v in variables)
            for b in data["results"]["bindings"]]


def _pages(client: httpx.Client, path: str, limit: int) -> tuple[list[tuple], set[str], int]:
    """Every row of ``path`` read ``limit`` at a time through the Link headers, the
    sources that answered, and how many pages it took."""
    url: str | None = f"{path}?limit={limit}"
    rows: list[tuple] = []
    sources: set[str] = set()
    pages = 0
    while url:
        answer = client.get(url, headers=JSON)
        assert answer.status_code == 200, answer.text
        sources.add(answer.headers["X-TechKG-Answered-By"])
        page = _rows(answer)
        assert 0 < len(page) <= limit
        rows += page
        pages += 1
        link = answer.links.get("next")
        url = link["url"] if link else None
    return rows, sources, pages


def test_named_queries_are_served_from_fresh_tables_and_by_sparql_once_stale(analysed_store) -> None:
    path = "/queries/lineage-paper-links"
    with _serve(analysed_store) as base, httpx.Client(base_url=base, timeout=120) as client:
        fresh = client.get(path, headers=JSON)
        assert fresh.status_code == 200 and fresh.headers["X-TechKG-Answered-By"] == "duckdb"
        assert "X-TechKG-Fallback" not in fresh.headers
        whole = _rows(fresh)
        assert len(whole) > 40, "the corpus should link many papers"
        paged, sources, pages = _pages(client, path, 17)
        assert sources == {"duckdb"} and pages == -(-len(whole) // 17)
        assert paged == whole  # each row once, in the page key's order
        table = client.get(path, params={"format": "csv"})
        assert table.headers["X-TechKG-Answered-By"] == "duckdb"
        assert len(list(csv.reader(io.StringIO(table.text)))) == len(whole) + 1

        # Any change to the store (here a graph the answer does not read) makes the tables stale.
        analysed_store.update("INSERT DATA { GRAPH <https://w3id.org/techkg/graph/served-test> "
                              "{ <http://example.org/a> <http://example.org/b> 1 } }")
        stale = client.get(path, headers=JSON)
        assert stale.status_code == 200 and stale.headers["X-TechKG-Answered-By"] == "sparql"
        assert "stale" in stale.headers["X-TechKG-Fallback"]
        assert sorted(_rows(stale)) == sorted(whole)
        paged, sources, _pages_ = _pages(client, path, 17)
        assert sources == {"sparql"} and paged == whole


def test_a_named_query_without_a_twin_says_sparql_answered(analysed_store) -> None:
    with _serve(analysed_store) as base, httpx.Client(base_url=base, timeout=60) as client:
        answer = client.get("/queries/technique", params={"technique": "gdn"}, headers=JSON)
        assert answer.status_code == 200 and answer.headers["X-TechKG-Answered-By"] == "sparql"
        assert "X-TechKG-Fallback" not in answer.headers and _rows(answer)


def test_a_whole_answer_streams_past_the_row_limit_and_a_page_keeps_to_it(analysed_store) -> None:
    from kg.server import ServerSettings, create_app

    with serving(create_app(analysed_store, ServerSettings(workers=1, max_rows=10))) as base, \
            httpx.Client(base_url=base, timeout=60) as client:
        whole = client.get("/queries/lineage-paper-links", headers=JSON)
        assert whole.status_code == 200 and whole.headers["transfer-encoding"] == "chunked"
        assert len(_rows(whole)) > 10
        page = client.get("/queries/lineage-paper-links", params={"limit": "50"}, headers=JSON)
        assert page.status_code == 200 and len(_rows(page)) == 10 and page.links.get("next")
        assert "transfer-encoding" not in page.headers


STREAMED = [("read-without-note", ()), ("reading-queue-lineage", ("-p", "technique=ZeRO"))]


@pytest.mark.parametrize(("name", "flags"), STREAMED, ids=[name for name, _ in STREAMED])
def test_a_whole_answer_streams_the_bytes_kg_query_writes_in_each_format(analysed_store, analysed_store_path,
                                                                         name: str, flags: tuple[str, ...]) -> None:
    params = dict(flag.split("=", 1) for flag in flags[1::2])
    with _serve(analysed_store) as base, httpx.Client(base_url=base, timeout=60) as client:
        for fmt in ("json", "jsonl", "csv", "tsv", "xml"):
            with client.stream("GET", f"/queries/{name}", params={**params, "format": fmt}) as answer:
                body = answer.read()
            assert answer.status_code == 200 and answer.headers["transfer-encoding"] == "chunked"
            assert answer.headers["X-TechKG-Answered-By"] == "duckdb"
            env = {**os.environ, "KG_STORE": str(analysed_store_path)}
            cli = subprocess.run([str(Path(sys.executable).with_name("kg")), "query", name, *flags, "-f", fmt],
                                 capture_output=True, env=env, timeout=300, check=True)
            assert body == cli.stdout, fmt
            if fmt == "jsonl":
                assert body.count(b"\n") >= 1  # rows, not only a frame


def test_card_paper_counts_from_fresh_tables_match_the_store(analysed_store) -> None:
    import copy

    from kg.server.web.models import count_papers, technique_cards

    cards = technique_cards(analysed_store, counts=False)
    assert cards and "papers" not in cards[0]
    tables = count_papers(analysed_store, copy.deepcopy(cards))
    sparql = count_papers(analysed_store, copy.deepcopy(cards), analytics=False)
    assert tables == sparql
    assert any(c["papers"] > 0 for c in tables) and any(c["read"] > 0 for c in tables)


def test_the_techniques_page_shows_every_technique_once_page_by_page(analysed_store, monkeypatch) -> None:
    import re

    from kg.server import ServerSettings, create_app
    from kg.server.web import models, workbench_routes

    expected = [c["id"] for c in models.technique_cards(analysed_store, counts=False)]
    monkeypatch.setattr(models, "CARDS_PER_PAGE", 10)
    app = create_app(analysed_store, ServerSettings(workers=1), extra_routes=workbench_routes())
    seen: list[str] = []
    with serving(app) as base, httpx.Client(base_url=base, timeout=60) as client:
        url: str | None = "/?all=1"
        while url:
            page = client.get(url)
            assert page.status_code == 200
            ids = re.findall(r'<article class="card[^"]*" data-id="([^"]+)"', page.text)
            assert 0 < len(ids) <= 10 and f"{len(expected)} techniques" in page.text
            seen += ids
            found = re.search(r'<a class="btn" rel="next" href="([^"]+)"', page.text)
            url = found.group(1).replace("&amp;", "&") if found else None
    assert seen == expected and len(expected) > 20


def test_kg_serve_keeps_fresh_tables_fresh_after_a_status_set_in_the_workbench(analysed_store_path: Path) -> None:
    import re

    from tests.servers import kg_serve

    paper = "https://arxiv.org/abs/1811.06965"  # GPipe
    with kg_serve(analysed_store_path) as (proc, info), \
            httpx.Client(base_url=str(info["sparql"]).removesuffix("/sparql"), timeout=120) as client:
        before = client.get("/queries/reading-list", params={"status": "reading"}, headers=JSON)
        assert before.headers["X-TechKG-Answered-By"] == "duckdb"
        assert paper not in {row[0][1] for row in _rows(before)}
        key = re.search(r'name="techkg-form-key" content="([^"]+)"', client.get("/reading").text)
        assert key
        done = client.post("/reading/status", data={"paper": paper, "status": "reading", "key": key.group(1)},
                           headers={"Origin": str(client.base_url).rstrip("/")})
        assert done.status_code == 303
        # the reply went out; the server's keeper patches the tables in the background, and a
        # query that comes meanwhile waits for the patch: fresh tables, with the new status
        after = client.get("/queries/reading-list", params={"status": "reading"}, headers=JSON)
        queue = client.get("/queries/reading-queue", params={"limit": 5}, headers=JSON)
    # (checked once the server has stopped: its log says what its keeper did)
    assert after.headers["X-TechKG-Answered-By"] == "duckdb", (after.headers.get("X-TechKG-Fallback"), proc.log)
    assert paper in {row[0][1] for row in _rows(after)}
    assert queue.headers["X-TechKG-Answered-By"] == "duckdb", proc.log


def test_kg_serve_keeps_fresh_tables_fresh_after_an_update_through_the_endpoint(analysed_store_path: Path,
                                                                                 kg_cli) -> None:
    from tests.servers import kg_serve

    with kg_serve(analysed_store_path, "--allow-update", "--token", "t0ken") as (_proc, info), \
            httpx.Client(base_url=str(info["sparql"]).removesuffix("/sparql"), timeout=120) as client:
        done = kg_cli("reading", "set", "Ring Attention", "reading", store=str(info["sparql"]),
                      env={"KG_STORE_TOKEN": "t0ken"}, check=True)
        assert "→ reading" in done.stdout
        after = client.get("/queries/reading-list", params={"status": "reading"}, headers=JSON)
        assert after.headers["X-TechKG-Answered-By"] == "duckdb", after.headers.get("X-TechKG-Fallback")
        assert any("Ring Attention" in (row[1] or ("", ""))[1] for row in _rows(after))
