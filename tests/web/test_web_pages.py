"""The workbench's pages over HTTP, from a real ``kg serve``: what they show is what the
graph holds (checked through the same server's SPARQL endpoint), they load nothing from
elsewhere, and writes need the form key, a loopback host or the token."""

from __future__ import annotations

import re
from html import unescape

import httpx
import pytest

from tests.web.conftest import Served, kg

TECHNIQUE = "https://w3id.org/techkg/id/technique/"
PAGES = ["/", "/techniques/gated-deltanet", "/compare?t=gdn&t=kda&t=mamba2", "/lineage", "/reading", "/query"]


def card_ids(html: str) -> list[str]:
    return re.findall(r'<article class="card[^"]*" data-id="([^"]+)"', html)


def get(served: Served, path: str, **kwargs: object) -> httpx.Response:
    return httpx.get(served.url(path), timeout=30, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("path", PAGES)
def test_every_page_is_served_with_a_strict_policy_and_only_local_assets(server: Served, path: str) -> None:
    page = get(server, path)
    assert page.status_code == 200, page.text[:500]
    assert page.headers["content-type"].startswith("text/html")
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    assets = re.findall(r'<(?:script|link)\b[^>]*\b(?:src|href)="([^"]+)"', page.text)
    assert assets and all(a.startswith("/") and not a.startswith("//") for a in assets), assets
    for asset in assets:
        assert get(server, asset).status_code == 200, asset
    assert "<script>" not in page.text  # no inline script: the policy would block it anyway


def test_the_cards_are_the_techniques_of_the_comparison_page(server: Served) -> None:
    on_page = {r["id"] for r in server.select(
        "SELECT ?id WHERE { ?t a tkg:Technique ; tkg:onComparisonPage true ; skos:notation ?id }")}
    everything = {r["id"] for r in server.select("SELECT ?id WHERE { ?t a tkg:Technique ; skos:notation ?id }")}
    assert set(card_ids(get(server, "/").text)) == on_page
    assert set(card_ids(get(server, "/?all=1").text)) == everything > on_page


@pytest.mark.parametrize("query, sparql", [
    ("category=moe", "?t skos:broader/skos:notation 'moe'"),
    ("organisation=Moonshot AI", "?t tkg:organization/foaf:name 'Moonshot AI'"),
    ("year=2019", "?t dcterms:date ?d FILTER(STRSTARTS(STR(?d), '2019'))"),
    ("kernel=verified", "?run tkg:verifies ?t ; tkg:passed true"),
    ("q=gdn", "?t skos:altLabel ?a FILTER(LCASE(STR(?a)) = 'gdn')"),
    ("q=deltanet&category=attention", "?t skos:prefLabel ?n FILTER(CONTAINS(LCASE(STR(?n)), 'deltanet'))"),
])
def test_filters_pick_the_cards_the_graph_says_match(server: Served, query: str, sparql: str) -> None:
    expected = {r["id"] for r in server.select(
        f"SELECT DISTINCT ?id WHERE {{ ?t tkg:onComparisonPage true ; skos:notation ?id . {sparql} }}")}
    page = get(server, "/?" + query)
    assert expected and set(card_ids(page.text)) == expected
    assert f"{len(expected)} of 39 techniques match" in page.text


def test_a_search_matches_aliases_whatever_their_case_and_accents(server: Served) -> None:
    assert card_ids(get(server, "/?q=Gated Delta Net").text) == ["gated-deltanet"]
    assert card_ids(get(server, "/?q=MHA").text) == ["transformer"]
    nothing = get(server, "/?q=no such technique")
    assert card_ids(nothing.text) == [] and "No technique matches" in nothing.text


def test_a_card_shows_people_headline_conditions_kernel_and_reading(server: Served) -> None:
    cards = get(server, "/?q=kda").text
    block = cards[cards.index('data-id="kda"'):]
    block = unescape(block[:block.index("</article>")])
    assert "Kimi Delta Attention" in block and "Yu Zhang" in block and "Moonshot AI" in block
    headline = server.select(f"SELECT ?h ?c WHERE {{ <{TECHNIQUE}kda> tkg:headlineResult ?h ; "
                             "tkg:headlineConditions ?c ; tkg:headlineConditional true }")[0]
    assert headline["h"] in block and "* " + headline["c"] in block
    assert "kernel: not run" in block
    papers = server.select(f"SELECT (COUNT(DISTINCT ?p) AS ?n) WHERE {{ {{ <{TECHNIQUE}kda> tkg:primaryPaper ?p }} "
                           f"UNION {{ ?p tkg:usesTechnique <{TECHNIQUE}kda> }} }}")[0]["n"]
    listed = server.select(f"SELECT (COUNT(DISTINCT ?p) AS ?n) WHERE {{ {{ <{TECHNIQUE}kda> tkg:primaryPaper ?p }} "
                           f"UNION {{ ?p tkg:usesTechnique <{TECHNIQUE}kda> }} ?p tkg:readingStatus ?s }}")[0]["n"]
    from kg.wording import reading_summary

    assert int(papers) >= 1 and reading_summary(0, int(listed)) in block
    gdn = get(server, "/?q=gdn").text
    assert "kernel: verified" in gdn and "kernel: none" in get(server, "/?kernel=none").text


def test_the_technique_page_shows_its_verification_lineage_papers_and_provenance(server: Served) -> None:
    page = unescape(get(server, "/techniques/gated-deltanet").text)
    run = server.select(f"""SELECT ?device ?torch ?ended WHERE {{ ?run tkg:verifies <{TECHNIQUE}gated-deltanet> ;
                               tkg:device ?device ; tkg:torchVersion ?torch ; prov:endedAtTime ?ended }}""")[0]
    n = gdn_checks(server)
    assert f"passed {n}/{n} checks" in page and run["device"] in page and "torch " + run["torch"] in page
    assert run["ended"][:16].replace("T", " ") in page
    checks = server.select(f"""SELECT ?name ?tol WHERE {{ ?run tkg:verifies <{TECHNIQUE}gated-deltanet> ;
                                  tkg:check ?c . ?c rdfs:label ?name ; tkg:tolerance ?tol }}""")
    assert len(checks) == n and all(c["name"] in page for c in checks)
    ancestors = page[page.index("<h2>Ancestors</h2>"):page.index("<h2>Descendants</h2>")]
    assert "DeltaNet" in ancestors and "Mamba2" in ancestors and "combines" in ancestors
    assert 'href="/techniques/kda"' in page[page.index("<h2>Descendants</h2>"):]
    assert "Gated Delta Networks: Improving Mamba2 with Delta Rule" in page
    provenance = page[page.index('id="provenance"'):]
    assert "kg build" in provenance and "kg kernels verify" in provenance
    assert ">catalog<" in provenance and ">kernels<" in provenance
    assert "kg/data/lineage.toml" in provenance and "kernels/registry.py" in provenance
    assert 'stated in <a href="https://arxiv.org/abs/2412.06464"' in provenance
    assert "no GitHub snapshot yet" in page


def test_an_inferred_lineage_edge_is_labelled_on_the_technique_page(server: Served) -> None:
    page = get(server, "/techniques/stable-latentmoe").text
    ancestors = page[page.index("<h2>Ancestors</h2>"):page.index("<h2>Descendants</h2>")]
    assert ancestors.count('class="badge inferred"') == 2  # LatentMoE, and Sparsely-Gated MoE above it
    assert 'class="badge inferred"' not in get(server, "/techniques/kda").text


def test_a_technique_by_alias_redirects_and_an_unknown_one_suggests(server: Served) -> None:
    moved = get(server, "/techniques/GDN")
    assert moved.status_code == 308 and moved.headers["location"] == "/techniques/gated-deltanet"
    missing = get(server, "/techniques/gated-deltanett")
    assert missing.status_code == 404 and "Did you mean" in missing.text and "Gated DeltaNet" in missing.text


def test_the_comparison_has_the_page_dimensions_and_our_additions(server: Served) -> None:
    page = unescape(get(server, "/compare?t=gdn&t=kda&t=mamba2").text)
    for label in ("Category · date", "First author / team", "Core mechanism", "Token mixing", "KV / state layout",
                  "Selector / compressor", "S · Situation", "T · Target", "A · Action", "R · Result", "Suits",
                  "Compute / memory", "Parallel dimension", "Limitations", "Code / availability", "Evidence",
                  "Lineage between them", "Reference kernel", "Latest verification", "Reading"):
        assert f'data-row="{label}"' in page, label
    assert "combines Mamba2" in page and "refines Gated DeltaNet" in page
    assert '<a href="https://arxiv.org/abs/2412.06464"' in page
    assert "/compare?t=gated-deltanet&t=kda&t=mamba2" in page
    # Mamba2 is a lineage-only parent: its column says so once, not "not recorded" in every dimension.
    table = page[page.index("<table"):page.index("</table>")]
    assert table.count("not recorded") == 0 and table.count("Lineage-only: Mamba2 is a parent in the lineage") == 1


def test_the_compare_pickers_are_search_fields_that_ship_each_technique_once(server: Served) -> None:
    page = get(server, "/compare?t=gdn&t=kda").text
    assert "<select" not in page and page.count('list="technique-choices"') == 4
    techniques = server.select("SELECT DISTINCT ?id WHERE { ?t a tkg:Technique ; skos:notation ?id }")
    listed = re.findall(r'<option value="([^"]+)"', page)  # one datalist for the four pickers
    assert len(listed) == len(set(listed)) and 30 < len(listed) <= len(techniques)
    assert "gated-deltanet" in listed and "mamba2" in listed
    assert re.search(r'id="t0"[^>]*value="gated-deltanet"', page) and re.search(r'id="t1"[^>]*value="kda"', page)
    found = get(server, "/compare/choices?q=GDN").json()
    assert found[0]["id"] == "gated-deltanet" and found[0]["name"] == "Gated DeltaNet"
    assert get(server, "/compare/choices?q=nosuchthing").json() == []
    # without a script the form sends what was typed, which is looked up like kg compare's names
    assert "Latest verification" in get(server, "/compare?t=GDN&t=Kimi+Delta+Attention&t=&t=").text


def test_the_markdown_export_is_kg_compare_plus_the_verification_row(server: Served) -> None:
    exported = get(server, "/compare.md?t=GDN,KDA&t=Mamba2")
    assert exported.headers["content-type"].startswith("text/markdown")
    assert "attachment" in exported.headers["content-disposition"]
    cli = kg("compare", "GDN", "KDA", "Mamba2", "--markdown", store=server.sparql).stdout
    ours = exported.text.splitlines()
    assert ours[0] == "| Dimension | Gated DeltaNet | Kimi Delta Attention | Mamba2 |"
    missing = [line for line in cli.splitlines() if line and line not in ours]
    assert missing == []
    n = gdn_checks(server)
    assert any(line.startswith(f"| Latest verification | passed {n}/{n} checks") for line in ours)


@pytest.mark.parametrize("query, status, words", [
    ("t=gdn", 200, "Pick one to three more"),
    ("t=gdn&t=kda&t=mqa&t=gqa&t=mla", 400, "Pick 2 to 4 techniques"),
    ("t=gdn&t=GDN", 400, "one technique"),
    ("t=gdn&t=gated%20deltanett", 404, "Did you mean"),
])
def test_a_comparison_of_the_wrong_techniques_says_what_to_pick(server: Served, query: str, status: int,
                                                               words: str) -> None:
    page = get(server, "/compare?" + query)
    assert page.status_code == status and words in page.text
    assert 'id="comparison"' not in page.text
    markdown = get(server, "/compare.md?" + query)
    assert markdown.status_code == (400 if status == 200 else status) and "#" not in markdown.text[:1]


def test_the_reading_page_groups_by_category_with_the_progress_of_each(server: Served) -> None:
    page = get(server, "/reading").text
    rows = httpx.get(server.url("/queries/reading-progress"), timeout=30,
                     headers={"Accept": "application/sparql-results+json"}).json()["results"]["bindings"]
    progress = {r["category"]["value"]: (int(r["papers"]["value"]), int(r["read"]["value"])) for r in rows}
    sections = re.findall(r'<section class="panel rcat" id="[^"]+" data-category="([^"]+)"\s+data-read="(\d+)"'
                          r'[^>]*data-total="(\d+)"', page)
    assert {unescape(name): (int(total), int(read)) for name, read, total in sections} == progress
    read_only = get(server, "/reading?status=read").text
    statuses = set(re.findall(r'<li class="paper" data-paper="[^"]+" data-status="([^"]+)"', read_only))
    assert statuses == {"read"}


def _form_key(served: Served) -> str:
    match = re.search(r'name="techkg-form-key" content="([^"]+)"', get(served, "/reading").text)
    assert match
    return match.group(1)


def _status(served: Served, paper: str) -> str | None:
    rows = served.select(f"SELECT ?s WHERE {{ <{paper}> tkg:readingStatus ?s }}")
    return rows[0]["s"].rsplit("/", 1)[-1] if rows else None


def _browser_key(browser: httpx.Client) -> str:
    """The form key of a page, for the browser (cookie jar) that loaded it."""
    match = re.search(r'name="techkg-form-key" content="([^"]+)"', browser.get("/reading").text)
    assert match
    return match.group(1)


def test_a_status_write_needs_the_form_key_its_own_origin_and_a_loopback_host(writable_server: Served) -> None:
    paper = "https://arxiv.org/abs/2006.15704"
    before = _status(writable_server, paper)
    assert before == "to-read"
    url = "/reading/status"
    form = {"paper": paper, "status": "read", "next": "/reading"}
    own = {"Origin": writable_server.base}
    with httpx.Client(base_url=writable_server.base, timeout=30) as browser:
        # The form key is bound to a cookie that no other site's request carries.
        first = browser.get("/reading")
        assert paper not in browser.get("/reading?status=read").text  # kept by the workbench until a write
        cookie = next(v for k, v in first.headers.multi_items() if k == "set-cookie" and v.startswith("techkg_csrf="))
        key = _browser_key(browser)
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
        refused = [
            browser.post(url, data=form, headers=own),
            browser.post(url, data={**form, "key": "forged"}, headers=own),
            browser.post(url, data={**form, "key": key}, headers={"Origin": "http://evil.example"}),
            browser.post(url, data={**form, "key": key}),  # no Origin
            browser.post(url, data={**form, "key": key}, headers={"Origin": "null"}),  # a sandboxed frame
            httpx.post(writable_server.url(url), data={**form, "key": key}, headers=own),  # without its cookie
            browser.post(url, data={**form, "key": _form_key(writable_server)}, headers=own),  # another's key
        ]
        assert [r.status_code for r in refused] == [403] * 7
        assert "form key" in refused[0].text and "evil.example" in refused[2].text
        assert "Origin" in refused[3].text and "null" in refused[4].text and "form key" in refused[5].text
        rebound = browser.post(url, data={**form, "key": key}, headers={**own, "Host": "evil.example"})
        assert rebound.status_code == 400 and "does not answer to the host" in rebound.text
        assert _status(writable_server, paper) == before
        done = browser.post(url, data={**form, "key": key, "next": "//evil.example/"}, headers=own)
        assert done.status_code == 303 and done.headers["location"] == "/reading"
        assert _status(writable_server, paper) == "read"
        assert paper in browser.get("/reading?status=read").text  # the write made the kept page stale
        unknown = browser.post(url, data={**form, "paper": "https://arxiv.org/abs/0000.00000", "key": key},
                               headers={**own, "Accept": "application/json"})
        assert unknown.status_code == 404 and unknown.json()["ok"] is False
    via = writable_server.select(f"""SELECT ?via WHERE {{ ?e a tkg:ReadingEvent ; tkg:paper <{paper}> ;
                                       tkg:via ?via ; tkg:previousStatus ?p }}""")
    assert [r["via"] for r in via] == ["web"]


def test_the_server_has_the_workbench_on_the_same_port_as_the_endpoint(server: Served) -> None:
    assert httpx.get(server.sparql, params={"query": "ASK { ?s ?p ?o }"}, timeout=30).status_code == 200
    assert httpx.get(server.url("/queries/technique"), params={"technique": "GDN"}, timeout=30).status_code == 200
    assert get(server, "/static/../pyproject.toml").status_code == 404
    assert get(server, "/assets/lineage/README.md").status_code == 404


def test_reading_the_pages_writes_nothing(server: Served) -> None:
    # Reads never write: the provenance of the reading graph stays as it was.
    before = server.select("SELECT ?m WHERE { GRAPH <https://w3id.org/techkg/graph/provenance> { "
                           "<https://w3id.org/techkg/graph/reading> dcterms:modified ?m } }")
    for path in PAGES:
        get(server, path)
    after = server.select("SELECT ?m WHERE { GRAPH <https://w3id.org/techkg/graph/provenance> { "
                          "<https://w3id.org/techkg/graph/reading> dcterms:modified ?m } }")
    assert before == after


def gdn_checks(server: Served) -> int:
    """How many checks the recorded Gated DeltaNet run has (the kernel declares them)."""
    rows = server.select(
        f"SELECT (COUNT(?c) AS ?n) WHERE {{ ?run tkg:verifies <{TECHNIQUE}gated-deltanet> ; tkg:check ?c }}"
    )
    return int(rows[0]["n"])


def test_papers_added_one_by_one_are_counted_and_named_on_the_reading_page(web_store_dir, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import shutil

    from tests.web.conftest import workbench_process

    store = tmp_path / "store"
    shutil.copytree(web_store_dir, store)
    kg("reading", "set", "2501.00001", "read", "--add", store=store)
    kg("reading", "set", "2502.00002", "to-read", "--add", store=store)
    with workbench_process(store) as served:
        page = unescape(get(served, "/reading").text)
    loose = page[page.index('data-category="Not in a category"'):]
    assert 'data-read="1"' in loose[:400] and 'data-total="2"' in loose[:400]
    assert '<span class="n-read">1</span> of 2 read' in loose
    assert '<a href="https://arxiv.org/abs/2501.00001" rel="noopener noreferrer">arXiv:2501.00001</a>' in loose
    assert ">https://arxiv.org/abs/2501.00001<" not in page


def test_a_404_page_says_why_and_links_to_where_to_go_not_to_a_command(server: Served) -> None:
    missing = get(server, "/techniques/zzzz-nothing-like-it")
    assert missing.status_code == 404 and "no technique is called" in unescape(missing.text).lower()
    assert 'href="/?q=zzzz-nothing-like-it&amp;all=1"' in missing.text and "kg stats" not in missing.text
    nowhere = get(server, "/no/such/page")
    assert nowhere.status_code == 404 and "there is no page at /no/such/page" in nowhere.text.lower()
    assert 'href="/?all=1"' in nowhere.text and 'href="/reading"' in nowhere.text and "kg " not in nowhere.text
    as_json = get(server, "/no/such/page", headers={"Accept": "application/json"})
    assert as_json.status_code == 404 and as_json.json()["type"] == "NotFound"
