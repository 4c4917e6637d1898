"""The workbench says what the command line says: a technique's kernel state and how much
of its reading is done, in kg.wording's words, on its card, its page and in kg compare."""

from __future__ import annotations

import json
import re
from html import unescape

import httpx

from kg.wording import KernelState
from tests.web.conftest import Served, kg


def _badges(html: str) -> dict[str, tuple[str, str]]:
    """technique id → (kernel badge, reading badge) of every card on the page."""
    cards = re.findall(r'<article class="card[^"]*" data-id="([^"]+)"(.*?)</article>', html, re.S)
    out = {}
    for ident, body in cards:
        kernel = re.search(r'<span class="badge kernel[^"]*"[^>]*>kernel: ([^<]+)</span>', body)
        reading = re.search(r'<span class="badge reading"[^>]*>([^<]+)</span>', body)
        assert kernel and reading, ident
        out[ident] = (unescape(kernel.group(1)), unescape(reading.group(1)))
    return out


def test_cards_use_the_cli_kernel_states(server: Served) -> None:
    cards = _badges(httpx.get(server.url("/?all=1"), timeout=60).text)
    cli = {r["technique"]: r["status"] for r in json.loads(kg("kernels", "list", "-f", "json",
                                                                store=server.sparql).stdout)}
    assert {ident: kernel for ident, (kernel, _reading) in cards.items()} == {t: cli[t] for t in cards}
    assert set(cli.values()) <= {str(s) for s in KernelState} | {"missing"}
    assert cards["gated-deltanet"][0] == "verified"


def test_cards_pages_and_kg_compare_say_the_same_about_reading(server: Served) -> None:
    cards = _badges(httpx.get(server.url("/"), timeout=60).text)
    compared = json.loads(kg("compare", "GDN", "KDA", "ZeRO", "-f", "json", store=server.sparql).stdout)
    reading = dict(compared["rows"])["Reading"]
    kernels = dict(compared["rows"])["Reference kernel"]
    for ident, words, kernel in zip(("gated-deltanet", "kda", "zero"), reading, kernels, strict=True):
        page = unescape(httpx.get(server.url(f"/techniques/{ident}"), timeout=60).text)
        assert cards[ident][1] == words and words in page, ident
        assert cards[ident][0] == kernel and f"kernel: {kernel}" in page, ident
    show = json.loads(kg("show", "GDN", "-f", "json", store=server.sparql).stdout)
    assert show["kernel"] == cards["gated-deltanet"][0]
