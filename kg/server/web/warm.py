"""Warming the workbench up as ``kg serve`` starts, so that a person's first pages come
as fast as the next ones.

What the pages read of the whole graph (every technique's card, the lineage edges and
names, the lineage drawn, the reading list's overview) takes seconds on a large store
(700k papers) the first time a server process asks, and is then kept
(:meth:`kg.server.web.pages.Workbench.kept`). :func:`warm_up` asks for the main pages
once, in the server's own process and through the app itself (no socket), right after
the server starts listening: by the time a browser opens the workbench, what they read
is kept. A page asked for while the warm-up makes it waits for that one
(``_Recent.get``) instead of reading the graph a second time. Nothing is written.
"""

from __future__ import annotations

import logging
import re
import time

import httpx
from starlette.applications import Starlette

__all__ = ["PAGES", "warm_up"]

log = logging.getLogger("kg.server")

#: The pages asked for, in order; then the page of the first technique "/" lists (what
#: every technique page reads of the whole lineage is the same).
PAGES = ("/", "/lineage", "/reading", "/compare")
_TECHNIQUE = re.compile(r'href="(/techniques/[^"?#]+)"')


async def warm_up(app: Starlette) -> None:
    """Ask ``app`` for :data:`PAGES` and one technique page, one at a time; log how long
    it took (``kg.server``, info). A page that fails is logged and skipped."""
    started = time.perf_counter()
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", timeout=None) as client:
        pages = list(PAGES)
        for path in pages:
            try:
                answer = await client.get(path)
            except Exception as exc:  # a warm-up never stops the server
                log.info("warm-up: %s failed: %s", path, exc)
                continue
            if answer.status_code != 200:
                log.info("warm-up: %s answered %d", path, answer.status_code)
            elif path == "/" and (found := _TECHNIQUE.search(answer.text)):
                pages.append(found.group(1))
    app.state.warmed = time.perf_counter() - started
    log.info("workbench warmed up in %.1f s (%s)", app.state.warmed, ", ".join(pages))
