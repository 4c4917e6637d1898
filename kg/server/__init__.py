"""TechKG over HTTP: the ASGI application that ``kg serve`` runs under uvicorn.

:func:`create_app` builds a Starlette app around one open store:

- ``/sparql``: a SPARQL 1.1 Protocol endpoint (see :mod:`kg.server.sparql`);
- ``/store``: the read-only Graph Store Protocol;
- ``/queries`` and ``/queries/{name}``: the named query library, one URL per query;
- ``/``: an index of the endpoints, unless ``extra_routes`` provide their own ``/``.

Other front ends plug in without touching the endpoint: pass their routes (or a
``Mount("/", app=...)``) as ``extra_routes``; they come after the endpoint's routes,
so /sparql and /queries keep working. ``app.state`` holds ``store``, ``settings``,
``runner`` (a :class:`QueryRunner` that gives any blocking store call of the server's
process the server's timeout) and ``pool`` (the query workers: call
``pool.invalidate()`` after writing to the store, so their view catches up).

Every request passes :class:`kg.server.security.HostGuard` (DNS rebinding) and
:class:`~kg.server.security.URLLimit` (414 for an over-long URL); CORS
applies to the machine endpoints only, for ``settings.cors_origins``.

What belongs here: the HTTP side of TechKG (endpoints, query workers, security, the
workbench in :mod:`kg.server.web`). What does not: answering a named query (it asks
:mod:`kg.answer`), drawing a lineage (the workbench asks ``exports/``, the one consumer
another consumer may use) or anything of the CLI (``kg serve`` starts the server).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from contextlib import asynccontextmanager
from html import escape
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import BaseRoute, Route

import queries
from kg.server.security import EndpointCORS, HostGuard, URLLimit
from kg.server.sparql import QueryRunner, ServerSettings, sparql_routes, worker_pool
from kg.store.base import GraphStore
from kg.version import __version__
from kg.wording import counted

__all__ = ["QueryRunner", "ServerSettings", "create_app"]


def create_app(
    store: GraphStore,
    settings: ServerSettings | None = None,
    *,
    extra_routes: Sequence[BaseRoute] = (),
    middleware: Sequence[Middleware] = (),
    startup: Sequence[Callable[[Starlette], Coroutine[Any, Any, None]]] = (),
) -> Starlette:
    """The ASGI app serving ``store``: the SPARQL endpoint, the named queries and
    whatever ``extra_routes`` add. The caller keeps ownership of ``store``; the app's
    query workers stop when its lifespan ends. Each of ``startup`` runs as a task of its
    own once the app starts (e.g. :func:`kg.server.web.warm.warm_up`), cancelled if it
    is still running when the app stops."""
    settings = settings or ServerSettings()
    runner = QueryRunner(timeout=settings.timeout, workers=settings.workers)
    pool = worker_pool(store, settings)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        tasks: list[asyncio.Task[None]] = [asyncio.create_task(start(app)) for start in startup]
        try:
            yield
        finally:
            for task in tasks:
                task.cancel()
            pool.close()
            runner.shutdown()

    routes: list[BaseRoute] = [*sparql_routes(store, settings, runner, pool), *extra_routes]
    routes.append(Route("/", _index, methods=["GET"], name="index"))
    app = Starlette(
        routes=routes,
        middleware=[
            Middleware(HostGuard, bind_host=settings.host, allowed_hosts=settings.allowed_hosts),
            Middleware(URLLimit),
            Middleware(EndpointCORS, origins=settings.cors_origins),
            *middleware,
        ],
        lifespan=lifespan,
    )
    app.state.store = store
    app.state.settings = settings
    app.state.runner = runner
    app.state.pool = pool
    return app


async def _index(request: Request) -> HTMLResponse:
    settings: ServerSettings = request.app.state.settings
    sparql = str(request.url_for("sparql"))
    items = []
    for q in queries.all_queries():
        url = str(request.url_for("named_query", name=q.name))
        params = ", ".join(f"<code>{escape(p.name)}</code>: {escape(p.signature)}" for p in q.params)
        items.append(
            f'<li><a href="{escape(url)}"><code>{escape(q.name)}</code></a> {escape(q.title)}'
            + (f" <small>({params})</small>" if params else "")
            + f"<br><small>{escape(q.description)}</small></li>"
        )
    writes = "accepts updates with its token" if settings.allow_update else "is read-only"
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>TechKG SPARQL endpoint</title>
<style>body{{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;line-height:1.4}}
li{{margin:.4rem 0}}code{{background:#f3f3f3;padding:0 .2rem}}</style></head>
<body>
<h1>TechKG {escape(__version__)}</h1>
<p>SPARQL 1.1 endpoint: <a href="{escape(sparql)}"><code>{escape(sparql)}</code></a>. It {writes}.
The default graph is the union of all named graphs, unless a query names its dataset
(<code>FROM</code>, <code>default-graph-uri</code>). Each graph is also at
<code>/store?graph=IRI</code>. Point any SPARQL client at it,
or run <code>kg --store {escape(sparql)} query --list</code>.</p>
<p>Limits: {settings.timeout:g} s per query, {counted(settings.max_rows, "row")} per result.</p>
<h2>Named queries</h2>
<p>Each runs at its own URL, with its parameters in the query string
(<a href="{escape(str(request.url_for("queries")))}">list as JSON</a>); add <code>format=csv</code>
or send an Accept header for another format.</p>
<ul>
{"".join(items)}
</ul>
</body></html>
"""
    return HTMLResponse(page)
