"""Who may write through the workbench: the reader on loopback, anyone with the token
elsewhere, and never a page on another site."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from pyoxigraph import NamedNode

from kg.server.web.guard import COOKIE, is_loopback

PAPER = "https://arxiv.org/abs/2006.15704"
TOKEN = "s3cret-t0ken-for-the-test"


def status_of(store: Any, paper: str) -> str | None:
    rows = store.select("SELECT ?s WHERE { ?p tkg:readingStatus ?s }", {"p": NamedNode(paper)})
    return rows.rows[0]["s"].value.rsplit("/", 1)[-1] if rows.rows else None


def form_key(client: httpx.Client) -> str:
    match = re.search(r'name="techkg-form-key" content="([^"]+)"', client.get("/reading").text)
    assert match
    return match.group(1)


@pytest.mark.parametrize("host, loopback", [
    ("127.0.0.1", True), ("127.4.5.6", True), ("::1", True), ("[::1]", True), ("localhost", True),
    ("LOCALHOST", True), ("0.0.0.0", False), ("::", False), ("192.168.1.20", False), ("example.org", False),
    ("", False),
])
def test_loopback_addresses_are_recognised(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_beyond_loopback_a_browser_writes_only_after_unlocking_with_the_token(built_store, workbench) -> None:  # type: ignore[no-untyped-def]
    with workbench(built_store, host="0.0.0.0", token=TOKEN) as base, \
            httpx.Client(base_url=base, headers={"Origin": base}) as client:
        reading = client.get("/reading").text
        assert "unlock writes" in reading and "disabled" in reading and TOKEN not in reading
        key = form_key(client)
        form = {"paper": PAPER, "status": "read", "key": key, "next": "/reading"}
        refused = client.post("/reading/status", data=form)
        assert refused.status_code == 403 and "token" in refused.text
        wrong = client.post("/unlock", data={"token": "guess", "key": key})
        assert wrong.status_code == 403 and COOKIE not in client.cookies
        forged = client.post("/unlock", data={"token": TOKEN, "key": key}, headers={"Origin": "http://evil.example"})
        assert forged.status_code == 403 and COOKIE not in client.cookies  # no login from another page
        unlocked = client.post("/unlock", data={"token": TOKEN, "key": key})
        assert unlocked.status_code == 303
        cookie = unlocked.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie and TOKEN not in cookie
        assert status_of(built_store, PAPER) == "to-read"
        assert client.post("/reading/status", data={**form, "key": "forged"}).status_code == 403
        done = client.post("/reading/status", data=form)
        assert done.status_code == 303 and status_of(built_store, PAPER) == "read"
        assert "unlock writes" not in client.get("/reading").text


def test_beyond_loopback_a_script_writes_with_the_bearer_token(built_store, workbench) -> None:  # type: ignore[no-untyped-def]
    with workbench(built_store, host="0.0.0.0", token=TOKEN) as base:
        url = base + "/reading/status"
        form = {"paper": PAPER, "status": "reading"}
        bad = httpx.post(url, data=form, headers={"Authorization": "Bearer nope", "Accept": "application/json"})
        assert bad.status_code == 403 and bad.json()["ok"] is False and "token" in bad.json()["error"]
        good = httpx.post(url, data=form, headers={"Authorization": f"Bearer {TOKEN}", "Accept": "application/json"})
        assert good.status_code == 200
        assert good.json() | {"at": None} == {"ok": True, "paper": PAPER, "status": "reading", "previous": "to-read",
                                             "label": "Reading", "at": None}
        assert status_of(built_store, PAPER) == "reading"


def test_beyond_loopback_without_a_token_every_write_is_refused(built_store, workbench) -> None:  # type: ignore[no-untyped-def]
    with workbench(built_store, host="0.0.0.0") as base, \
            httpx.Client(base_url=base, headers={"Origin": base}) as client:
        key = form_key(client)
        answer = client.post("/reading/status", data={"paper": PAPER, "status": "read", "key": key})
        assert answer.status_code == 403 and "token" in answer.text
        assert client.post("/unlock", data={"token": "", "key": key}).status_code == 403
        assert status_of(built_store, PAPER) == "to-read"
        assert client.get("/").status_code == 200  # reading stays open


def test_on_loopback_the_reader_writes_without_a_token_but_not_through_a_foreign_host(built_store, workbench) -> None:  # type: ignore[no-untyped-def]
    with workbench(built_store) as base, httpx.Client(base_url=base, headers={"Origin": base}) as client:
        key = form_key(client)
        rebound = client.post("/reading/status", data={"paper": PAPER, "status": "read", "key": key},
                              headers={"Host": "attacker.example:8080"})
        assert rebound.status_code == 400 and status_of(built_store, PAPER) == "to-read"
        done = client.post("/reading/status", data={"paper": PAPER, "status": "Skimmed twice", "key": key},
                           headers={"Accept": "application/json"})
        assert done.status_code == 200 and done.json()["status"] == "skimmed-twice"
        assert status_of(built_store, PAPER) == "skimmed-twice"
        too_long = client.post("/reading/status", data={"paper": PAPER, "status": "x" * 61, "key": key})
        assert too_long.status_code == 400 and "60 characters" in too_long.text
        not_a_form = client.post("/reading/status", json={"paper": PAPER, "status": "read", "key": key})
        assert not_a_form.status_code == 400 and "x-www-form-urlencoded" in not_a_form.text
