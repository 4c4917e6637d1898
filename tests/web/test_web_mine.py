"""The reader's own writes in the workbench, in headless Chromium against ``kg serve``: a
technique added and edited through the form (with the checks of kg technique add), the
follow toggle, and a paper's note on the reading page; and the guard in front of each."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from tests.web.conftest import Served

pytestmark = pytest.mark.browser

GPIPE = "https://arxiv.org/abs/1811.06965"


def _mine(served: Served) -> list[dict[str, str]]:
    return served.select("SELECT ?t ?name WHERE { GRAPH <https://w3id.org/techkg/graph/my-techniques> { "
                         "?t tkg:addedBy tkg:reader ; skos:prefLabel ?name } }")


def test_a_technique_added_and_edited_in_the_form(writable_server: Served, open_page) -> None:  # type: ignore[no-untyped-def]
    page, events = open_page(writable_server)
    page.goto("/")
    page.click("#add-technique")
    page.wait_for_url("**/techniques/new")
    page.fill("#f-name", "GPipe")
    page.fill("#f-new-category", "Pipeline parallelism")
    page.fill("#f-paper", "1811.06965")
    page.fill("#f-date", "2018")
    page.fill("#v-core_mechanism", "Micro-batches flow through the stages.")
    page.fill("#f-parents", "Gpip:extends")  # a typo: refused with a did-you-mean, the form kept
    page.click("#save-technique")
    problem = page.inner_text("#form-problem")
    assert "no technique is called 'Gpip'" in problem and "Did you mean" in problem
    assert page.input_value("#f-name") == "GPipe" and page.input_value("#f-date") == "2018"
    assert _mine(writable_server) == []
    page.fill("#f-parents", "")
    page.click("#save-technique")
    page.wait_for_url("**/techniques/gpipe")
    assert page.inner_text("#yours") == "yours: you added it"
    assert "Micro-batches flow through the stages." in page.inner_text("section.panel:has(h2:text('Comparison "
                                                                       "dimensions'))")
    # it is on the Techniques page, marked as yours
    page.goto("/")
    assert page.locator('article.card.mine[data-id="gpipe"]').count() == 1
    # your facts on a catalog technique: the date shown is yours, marked so
    page.goto("/techniques/kda")
    page.click("#edit-technique")
    page.wait_for_url("**/techniques/kda/edit")
    assert page.locator("#f-name").count() == 0  # a catalog technique's name is the catalog's
    page.fill("#f-date", "2025-11")
    page.fill("#f-aliases", "GDN")  # another technique's alias: refused, naming it
    page.click("#save-technique")
    assert "already used by Gated DeltaNet (gated-deltanet)" in page.inner_text("#form-problem")
    page.fill("#f-aliases", "Kimi DA")
    page.click("#save-technique")
    page.wait_for_url("**/techniques/kda")
    assert "2025-11" in page.inner_text("p.crumbs") and page.is_visible("#amended")
    refused = "error: Failed to load resource: the server responded with a status of 400 (Bad Request)"
    assert [p for p in events.problems() if p != refused] == []
    assert events.problems().count(refused) == 2  # the two forms that came back with their problem


def test_the_follow_toggle(writable_server: Served, open_page) -> None:  # type: ignore[no-untyped-def]
    page, events = open_page(writable_server)
    page.goto("/techniques/kda")
    assert "inferred" in page.inner_text("#follow-state")
    with page.expect_navigation():
        page.click("#follow-toggle")
    assert page.inner_text("#follow-state") == "following"
    followed = writable_server.select("SELECT ?t WHERE { GRAPH <https://w3id.org/techkg/graph/follows> { "
                                      "tkg:reader tkg:follows ?t } }")
    assert followed == [{"t": "https://w3id.org/techkg/id/technique/kda"}]
    with page.expect_navigation():
        page.click("#follow-toggle")  # now it unfollows
    assert page.inner_text("#follow-state") == "not followed"
    assert events.problems() == []


def _note_shown(page, paper: str) -> str:  # type: ignore[no-untyped-def]
    """The note the reading page shows for ``paper``: read again once if the page that came
    back first lacks it (once seen under heavy load; the write itself is checked below)."""
    note = page.locator(f'li.paper[data-paper="{paper}"] .note-text').first
    try:
        note.wait_for(timeout=5_000)
    except Exception:  # noqa: BLE001 - playwright's TimeoutError
        page.reload()
    return str(note.inner_text())


def test_a_note_on_the_reading_page(writable_server: Served, open_page) -> None:  # type: ignore[no-untyped-def]
    page, events = open_page(writable_server)
    page.goto("/reading")
    item = page.locator(f'li.paper[data-paper="{GPIPE}"]').first
    item.locator("details.note-edit summary").click()
    item.locator("textarea[name=text]").fill("Bubble: (p-1)/(m+p-1) <of the time>.")
    with page.expect_navigation():  # back on the reading page, at the paper's category
        item.locator("form.note-form button[type=submit]:not([name])").click()
    assert re.search(r"/reading#cat-\d+$", page.url)
    assert _note_shown(page, GPIPE) == "📝 Bubble: (p-1)/(m+p-1) <of the time>."
    item = page.locator(f'li.paper[data-paper="{GPIPE}"]').first
    # editing keeps one note
    item.locator("details.note-edit summary").click()
    assert item.locator("textarea[name=text]").input_value() == "Bubble: (p-1)/(m+p-1) <of the time>."
    item.locator("textarea[name=text]").fill("Bubble shrinks with more micro-batches.")
    with page.expect_navigation():
        item.locator("form.note-form button[type=submit]:not([name])").click()
    assert _note_shown(page, GPIPE) == "📝 Bubble shrinks with more micro-batches."
    item = page.locator(f'li.paper[data-paper="{GPIPE}"]').first
    # deleting asks first: dismissed, the note stays
    item.locator("details.note-edit summary").click()
    with page.expect_event("dialog"):
        item.locator("button.delete-note").click()
    page.wait_for_timeout(300)  # the dismissed confirm stops the form
    assert events.dialogs == ["Delete this note? kg undo brings it back."]
    assert item.locator(".note-text").count() == 1
    # confirmed (the form sent as the button would), it goes
    with page.expect_navigation():
        item.locator("form.note-form").evaluate("f => f.requestSubmit(f.querySelector('button.delete-note'))")
    assert page.locator(f'li.paper[data-paper="{GPIPE}"] .note-text').count() == 0
    notes = writable_server.select("SELECT ?a WHERE { GRAPH <https://w3id.org/techkg/graph/reading> { "
                                   "?e a tkg:NoteEvent ; tkg:noteAction ?a ; tkg:via \"web\" } }")
    assert sorted(n["a"] for n in notes) == ["added", "deleted", "edited"]
    assert events.errors == [] and events.foreign == []


def test_the_new_writes_are_guarded_like_the_others(writable_server: Served) -> None:
    base = writable_server.base
    with httpx.Client(base_url=base) as client:
        page = client.get("/techniques/new").text
        key = re.search(r'name="techkg-form-key" content="([^"]+)"', page).group(1)  # type: ignore[union-attr]
        forms: list[tuple[str, dict[str, Any]]] = [
            ("/techniques/new", {"name": "Forged", "category": "distributed"}),
            ("/techniques/kda/edit", {"date": "1999"}),
            ("/follows", {"technique": "kda", "follow": "1"}),
            ("/reading/note", {"paper": GPIPE, "text": "forged"}),
        ]
        for path, form in forms:
            foreign = client.post(path, data={**form, "key": key}, headers={"Origin": "http://evil.example"})
            assert foreign.status_code == 403, path
            no_key = client.post(path, data=form, headers={"Origin": base})
            assert no_key.status_code == 403, path
        done = client.post("/follows", data={"technique": "kda", "follow": "1", "key": key},
                           headers={"Origin": base, "Accept": "application/json"})
        assert done.status_code == 200 and done.json()["following"] is True
    assert _mine(writable_server) == []
    assert writable_server.select("SELECT ?n WHERE { GRAPH <https://w3id.org/techkg/graph/reading> { "
                                  "?n a tkg:Note } }") == []
