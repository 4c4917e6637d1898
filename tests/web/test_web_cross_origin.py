"""A page on another loopback origin, in the same real browser as the reader's
workbench, tries what an attacker's page would: read the reading list, the form key or
the graph, and change a status (by fetch, by form, from a sandboxed frame). Everything
fails, and the workbench itself keeps working in that browser."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.servers import LoopbackServer, QuietHandler
from tests.web.conftest import Served

pytestmark = pytest.mark.browser

PAPER = "https://arxiv.org/abs/2006.15704"

ATTACK = """<!doctype html><html><head><meta charset="utf-8"><title>elsewhere</title></head><body>
<iframe id="sandboxed" sandbox="allow-forms allow-scripts" style="display:none"></iframe>
<form id="plain" method="post" target="sink" action="TARGET/reading/status" style="display:none">
  <input name="paper" value="PAPER"><input name="status" value="pwned-form"><input name="key" value="guess">
</form>
<iframe name="sink" style="display:none"></iframe>
<script>
const target = "TARGET";
async function attempt(name, run) {
  try { return [name, "read: " + String(await run()).slice(0, 80)]; }
  catch (e) { return [name, "blocked: " + e.name]; }
}
window.results = (async () => {
  const out = [];
  out.push(await attempt("reading", () => fetch(target + "/reading").then(r => r.text())));
  out.push(await attempt("reading with cookies",
    () => fetch(target + "/reading", {credentials: "include"}).then(r => r.text())));
  out.push(await attempt("sparql", () => fetch(target + "/sparql?query=" +
    encodeURIComponent("SELECT ?s WHERE { ?p tkg:readingStatus ?s } LIMIT 1")).then(r => r.text())));
  out.push(await attempt("graph store", () => fetch(target + "/store?default").then(r => r.text())));
  out.push(await attempt("status by fetch", () => fetch(target + "/reading/status", {
    method: "POST", credentials: "include", mode: "no-cors",
    headers: {"Content-Type": "application/x-www-form-urlencoded"},
    body: "paper=" + encodeURIComponent("PAPER") + "&status=pwned-fetch&key=guess"}).then(r => r.type)));
  document.getElementById("plain").submit();
  const frame = document.getElementById("sandboxed");
  frame.srcdoc = '<form method="post" action="' + target + '/reading/status">' +
    '<input name="paper" value="PAPER"><input name="status" value="pwned-null"><input name="key" value="guess">' +
    '</form><script>document.forms[0].submit()<\\/script>';
  await new Promise(resolve => setTimeout(resolve, 1500));
  return out;
})();
</script></body></html>"""


class _Attacker(QuietHandler):
    page = b""

    def do_GET(self) -> None:  # noqa: N802 - the http.server API
        self.reply(200, self.page, "text/html; charset=utf-8")


@pytest.fixture
def attacker(writable_server: Served) -> Iterator[str]:
    """Another origin on loopback (127.0.0.1, another port) serving :data:`ATTACK`."""
    handler = type("Handler", (_Attacker,), {"page": ATTACK.replace("TARGET", writable_server.base)
                                             .replace("PAPER", PAPER).encode()})
    with LoopbackServer(handler) as server:
        yield f"{server.base}/attack.html"


def _status(served: Served) -> str | None:
    rows = served.select(f"SELECT ?s WHERE {{ <{PAPER}> tkg:readingStatus ?s }}")
    return rows[0]["s"].rsplit("/", 1)[-1] if rows else None


def test_a_page_on_another_loopback_origin_can_neither_read_nor_write(writable_server: Served, attacker: str,
                                                                      open_page: Any) -> None:
    page, _events = open_page(writable_server)
    page.goto("/reading")  # the reader's browser holds the workbench's cookie
    assert page.context.cookies()  # the CSRF cookie that a same-site page would send along
    assert _status(writable_server) == "to-read"
    evil = page.context.new_page()
    evil.goto(attacker)
    results = dict(evil.evaluate("window.results"))
    assert results == {
        "reading": "blocked: TypeError",
        "reading with cookies": "blocked: TypeError",
        "sparql": "blocked: TypeError",
        "graph store": "blocked: TypeError",
        "status by fetch": "read: opaque",  # sent blind; refused by the server, as below
    }, results
    evil.close()
    assert _status(writable_server) == "to-read"
    # The workbench itself still works in this very browser.
    page.goto("/reading")
    row = page.locator(f'li.paper[data-paper="{PAPER}"]').first
    row.locator("select").select_option("read")
    row.locator(".saved", has_text="saved").wait_for()
    assert _status(writable_server) == "read"
