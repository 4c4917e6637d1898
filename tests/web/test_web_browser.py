"""The workbench in a real browser: headless Chromium (Playwright) against ``kg serve``
started on 127.0.0.1 with a free port."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.web.conftest import (
    HOSTILE_ALIAS,
    HOSTILE_NAME,
    HOSTILE_TITLE,
    MAIN_PAGES,
    Served,
    kg,
    overflow_at,
    screenshot,
)
from tests.web.test_web_pages import gdn_checks

pytestmark = pytest.mark.browser

TECHNIQUE = "https://w3id.org/techkg/id/technique/"
OUR_SCRIPTS = {"/static/app.js", "/static/query.js", "/static/lineage-page.js", "/assets/lineage/cytoscape.min.js",
               "/assets/lineage/lineage.js", "/static/katex/katex.min.js", "/static/math.js"}


def cards(page: Any) -> list[str]:
    return page.locator("article.card").evaluate_all("els => els.map(e => e.dataset.id)")


def test_filtering_the_cards(server: Served, open_page) -> None:  # type: ignore[no-untyped-def]
    page, events = open_page(server)
    page.goto("/")
    assert len(cards(page)) == 39
    page.fill("#q", "gdn")
    page.wait_for_url("**/?q=gdn")
    assert cards(page) == ["gated-deltanet"]
    assert page.input_value("#q") == "gdn"  # the search box keeps its text (and focus) after the reload
    page.goto("/")
    page.select_option("#category", "moe")
    page.wait_for_url("**/?category=moe")
    moe = {r["id"] for r in server.select("SELECT ?id WHERE { ?t tkg:onComparisonPage true ; skos:notation ?id ; "
                                          "skos:broader/skos:notation 'moe' }")}
    assert set(cards(page)) == moe
    assert page.inner_text("#count").startswith(f"{len(moe)} of 39")
    page.select_option("#kernel", "verified")
    page.wait_for_url("**kernel=verified**")
    assert cards(page) == [] and page.is_visible("text=No technique matches these filters")
    page.select_option("#category", "attention")
    page.wait_for_url("**category=attention**")
    assert cards(page) == ["gated-deltanet"]
    assert page.inner_text("article.card .kernel") == "kernel: verified"
    assert events.problems() == []


def test_comparing_gdn_kda_and_mamba2(server: Served, open_page, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    page, events = open_page(server, accept_downloads=True)
    page.goto("/?all=1")
    go = page.locator("#compare-go")
    assert go.is_disabled()
    for ident in ("gated-deltanet", "kda", "mamba2"):
        page.check(f'article[data-id="{ident}"] input[name="t"]')
    assert go.is_enabled() and " ".join(go.inner_text().split()) == "Compare (3)"
    page.check('article[data-id="mqa"] input[name="t"]')
    assert page.locator('article[data-id="gqa"] input[name="t"]').is_disabled()  # four at most
    page.uncheck('article[data-id="mqa"] input[name="t"]')
    go.click()
    page.wait_for_url("**/compare?t=gated-deltanet&t=kda&t=mamba2")
    headers = page.locator("#comparison thead th").all_inner_texts()
    assert headers == ["Dimension", "Gated DeltaNet", "Kimi Delta Attention", "Mamba2"]

    def row(label: str) -> list[str]:
        return page.locator(f'#comparison tr[data-row="{label}"] td').all_inner_texts()

    assert row("Lineage between them") == ["combines Mamba2", "refines Gated DeltaNet", "—"]
    assert row("Reference kernel") == ["verified", "not run", "not run"]
    n = gdn_checks(server)
    assert row("Latest verification")[0].startswith(f"passed {n}/{n} checks on cpu")
    assert row("Reading")[0] in ("no paper on the reading list",) or "read" in row("Reading")[0]
    assert page.locator('#comparison tr[data-row="Evidence"] a[href="https://arxiv.org/abs/2412.06464"]').count() == 1
    assert page.inner_text("#share-link") == server.url("/compare?t=gated-deltanet&t=kda&t=mamba2")
    with page.expect_download() as download:
        page.click("#markdown-link")
    saved = tmp_path / "comparison.md"
    download.value.save_as(saved)
    markdown = saved.read_text(encoding="utf-8")
    assert markdown.splitlines()[0] == "| Dimension | Gated DeltaNet | Kimi Delta Attention | Mamba2 |"
    assert "| Lineage between them | combines Mamba2 | refines Gated DeltaNet | — |" in markdown
    assert events.problems() == []


def test_a_click_in_the_lineage_opens_the_technique_page(server: Served, open_page) -> None:  # type: ignore[no-untyped-def]
    page, events = open_page(server)
    page.goto("/lineage")
    page.wait_for_function("() => window.techkgLineage && window.techkgLineage.cy.nodes('.technique').length > 0")
    shown = page.evaluate("() => window.techkgLineage.cy.nodes('.technique').length")
    assert shown == len(server.select("SELECT ?t WHERE { ?t a tkg:Technique }"))
    point = page.evaluate(f"""() => {{
        const cy = window.techkgLineage.cy, node = cy.getElementById("{TECHNIQUE}kda");
        const box = cy.container().getBoundingClientRect(), at = node.renderedPosition();
        return {{x: box.left + at.x, y: box.top + at.y}};
    }}""")
    assert 0 < point["x"] < 1366 and 0 < point["y"] < 800
    page.mouse.move(point["x"], point["y"])
    page.mouse.click(point["x"], point["y"])
    page.wait_for_url("**/techniques/kda")
    assert page.inner_text("h1") == "Kimi Delta Attention"
    assert "Gated DeltaNet" in page.inner_text("section.panel.two")
    assert events.problems() == []


def test_the_compare_pickers_suggest_what_matches_the_typing_and_compare_it(server: Served, open_page) -> None:  # type: ignore[no-untyped-def]
    page, events = open_page(server)
    page.goto("/compare")
    listed = page.locator("#technique-choices option")
    assert listed.count() > 30  # a small lineage: every technique, before any typing
    with page.expect_response("**/compare/choices?q=delta"):
        page.fill("#t0", "delta")  # the suggestions become the matches from /compare/choices
    for _ in range(50):  # the page's policy allows no evaluated script: poll from here
        if listed.count() < 10:
            break
        page.wait_for_timeout(100)
    found = listed.evaluate_all("os => os.map(o => [o.value, o.label])")
    assert ["gated-deltanet", "Gated DeltaNet · Attention"] in found
    assert all("delta" in (value + label).lower() for value, label in found)
    page.fill("#t0", "gated-deltanet")
    page.fill("#t1", "Mamba2")  # a name typed is looked up as kg compare does
    page.click("#picker button[type=submit]")
    page.wait_for_url("**/compare?t=gated-deltanet&t=Mamba2**")
    assert page.locator("#comparison thead th a").all_inner_texts() == ["Gated DeltaNet", "Mamba2"]
    assert page.input_value("#t1") == "mamba2"
    assert events.problems() == []


def test_a_status_changed_in_the_browser_shows_in_kg_reading_list(writable_server: Served, open_page) -> None:  # type: ignore[no-untyped-def]
    paper = "https://arxiv.org/abs/2006.15704"
    page, events = open_page(writable_server)
    page.goto("/reading")
    row = page.locator(f'li.paper[data-paper="{paper}"]').first
    section = page.locator("section.rcat", has=row)
    title = row.locator(".p-main a").inner_text()
    read_before = int(section.locator(".n-read").inner_text())
    total_before = int(page.inner_text("#read-total"))
    assert row.get_attribute("data-status") == "to-read"
    assert not page.locator(".status-form .save").first.is_visible()  # saved in place, no button needed
    row.locator("select").select_option("read")
    row.locator(".saved", has_text="saved").wait_for()
    assert row.get_attribute("data-status") == "read"
    assert int(section.locator(".n-read").inner_text()) == read_before + 1
    assert int(page.inner_text("#read-total")) == total_before + 1
    listed = kg("reading", "list", "--status", "read", "--format", "json", store=writable_server.sparql)
    assert title in [r["title"] for r in json.loads(listed.stdout)]
    events_in_graph = writable_server.select(
        f"SELECT ?via WHERE {{ ?e tkg:paper <{paper}> ; tkg:via ?via ; tkg:status ?s }}")
    assert [r["via"] for r in events_in_graph if r["via"] == "web"] == ["web"]
    page.reload()
    assert page.locator(f'li.paper[data-paper="{paper}"] select').first.input_value() == "read"
    assert events.problems() == []


def test_running_a_named_query_and_an_edited_one(server: Served, open_page) -> None:  # type: ignore[no-untyped-def]
    page, events = open_page(server)
    page.goto("/query")
    page.select_option("#named", "descendants")
    page.wait_for_function("() => document.getElementById('sparql').value.includes('# title: Descendants')")
    assert page.inner_text("#named-title") == "Descendants of a technique"
    page.fill("#param-technique", "MQA")
    page.click("#run")
    page.locator("#results tbody tr").first.wait_for()
    table = page.inner_text("#results")
    assert "Grouped-Query Attention" in table and "generalizes" in table
    assert page.get_attribute("#results tbody a", "href") is not None
    assert page.url.endswith("/query?name=descendants")
    count = server.select("SELECT (COUNT(?t) AS ?n) WHERE { ?t a tkg:Technique }")[0]["n"]
    page.fill("#sparql", "SELECT (COUNT(?t) AS ?n) WHERE { ?t a tkg:Technique }")
    assert "against /sparql" in page.inner_text("#run-mode")
    page.click("#run")
    page.wait_for_function("() => document.querySelector('#results thead th')?.textContent === 'n'")
    assert page.inner_text("#results tbody td") == count
    page.fill("#sparql", "SELEKT nonsense")
    page.click("#run")
    page.locator("#query-status.error").wait_for()
    assert "Error 400" in page.inner_text("#query-status")
    assert events.problems() == [] or all("400" in p for p in events.problems())


def test_hostile_names_render_as_text_everywhere(hostile_server: Served, open_page) -> None:  # type: ignore[no-untyped-def]
    page, events = open_page(hostile_server)
    for path in ("/", "/?q=onerror", "/techniques/kda", "/compare?t=kda&t=gdn", "/reading", "/lineage",
                 "/query?name=technique"):
        page.goto(path)
        page.wait_for_load_state("networkidle")
        scripts = page.locator("script[src]").evaluate_all("els => els.map(e => e.getAttribute('src'))")
        assert set(scripts) <= OUR_SCRIPTS, path
        assert page.locator("script:not([src]):not([type='application/json'])").count() == 0, path
        assert page.locator("img").count() == 0, path
    page.goto("/?q=onerror")
    assert cards(page) == ["kda"]
    assert page.inner_text("article.card h2") == HOSTILE_NAME
    assert HOSTILE_ALIAS in page.inner_text("article.card .aliases")
    page.goto("/techniques/kda")
    assert page.inner_text("h1") == HOSTILE_NAME
    assert page.locator("#papers li.paper", has_text=HOSTILE_TITLE).count() == 1
    repo = hostile_server.select("SELECT (MAX(?s) AS ?stars) (MAX(?p) AS ?pushed) WHERE { "
                                 "<https://github.com/pygithub/pygithub> tkg:stars ?s ; tkg:pushedAt ?p }")[0]
    assert page.inner_text(".repo .stars") == "★ " + repo["stars"]
    assert "last push " + repo["pushed"][:10] in page.inner_text(".repo")
    page.goto("/compare?t=kda&t=gdn")
    assert page.locator("#comparison thead th").all_inner_texts()[1] == HOSTILE_NAME
    assert HOSTILE_NAME in (page.text_content("#markdown") or "")
    page.goto("/lineage")
    page.wait_for_function("() => window.techkgLineage")
    page.fill(".tkg-search input", "alert")
    assert page.inner_text(".tkg-results .tkg-result-name") == HOSTILE_NAME
    page.goto("/query?name=technique")
    page.wait_for_function("() => document.getElementById('sparql').value.includes('# title')")
    page.fill("#param-technique", "kda")
    page.click("#run")
    page.locator("#results tbody tr").first.wait_for()
    assert HOSTILE_NAME in page.locator("#results tbody td").all_inner_texts()
    assert events.dialogs == [] and events.errors == [] and events.foreign == []


VIEWPORTS = {"laptop": (1366, 800), "phone": (390, 844)}


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_screenshots_of_the_main_pages_fit_the_screen(server: Served, open_page, tmp_path: Path,
                                                      viewport: str) -> None:  # type: ignore[no-untyped-def]
    width, height = VIEWPORTS[viewport]
    page, events = open_page(server, width=width, height=height)
    for name, path in MAIN_PAGES.items():
        overflow = overflow_at(page, path)
        assert overflow <= 0, f"{name} is {overflow}px wider than a {viewport} screen"
        links = page.locator(".nav a").evaluate_all(
            "els => els.map(e => { const r = e.getBoundingClientRect(); return [r.left, r.right]; })")
        assert all(0 <= left and right <= width for left, right in links), (name, links)
        screenshot(page, tmp_path / f"{viewport}-{name}.png", name)
    assert events.problems() == []


def test_a_status_set_on_a_technique_page_shows_there_after_a_reload(writable_server: Served, open_page) -> None:  # type: ignore[no-untyped-def]
    page, events = open_page(writable_server)
    page.goto("/techniques/gated-deltanet")
    row = page.locator("#papers li.paper").first
    paper = row.get_attribute("data-paper")
    new = "skipped" if row.get_attribute("data-status") != "skipped" else "read"
    row.locator("select").select_option(new)
    row.locator(".saved", has_text="saved").wait_for()
    page.reload()  # the page kept across the write, its papers' statuses read again
    assert page.locator(f'#papers li.paper[data-paper="{paper}"]').first.get_attribute("data-status") == new
    assert events.problems() == []


def test_the_lineage_around_a_technique_folds_the_farther_ones_a_click_opens(server: Served, open_page) -> None:  # type: ignore[no-untyped-def]
    page, events = open_page(server)
    page.goto("/lineage?root=transformer&limit=2")
    page.wait_for_function("() => window.techkgLineage && window.techkgLineage.cy.nodes('.technique').length > 0")
    assert page.evaluate("() => window.techkgLineage.cy.nodes('.technique').length") < len(
        server.select("SELECT ?t WHERE { ?t a tkg:Technique }"))
    point = page.evaluate("""() => {
        const cy = window.techkgLineage.cy, node = cy.nodes('.cluster')[0];
        const box = cy.container().getBoundingClientRect(), at = node.renderedPosition();
        return {x: box.left + at.x, y: box.top + at.y, href: node.data('href')};
    }""")
    assert point["href"].startswith("/lineage?root=")
    page.mouse.click(point["x"], point["y"])
    page.wait_for_url("**" + point["href"])
    page.wait_for_function("() => window.techkgLineage && window.techkgLineage.cy.nodes('.technique').length > 0")
    assert events.problems() == []
