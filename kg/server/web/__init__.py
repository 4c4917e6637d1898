"""The comparison workbench: a web app over the live graph, served by ``kg serve`` beside
the SPARQL endpoint (``create_app(store, settings, extra_routes=workbench_routes())``).

Pages (server-rendered, Jinja2 with autoescape; small scripts of its own, nothing from
a CDN):

- ``/`` Techniques: every technique as a card, filtered by category, organisation,
  year and kernel status and searched by name or alias (``?q=&category=...``);
- ``/techniques/{id}``: one technique in full, with its papers and their reading
  status, repository, ancestors and descendants, kernel verification and the
  provenance of each fact;
- ``/compare?t=gdn&t=kda``: 2 to 4 techniques side by side; ``/compare.md`` is the
  same table in Markdown; ``/compare/choices?q=`` the techniques matching what a picker
  holds (JSON), so that a large lineage's thousands are not all sent with the page;
- ``/lineage``: the lineage graph as the HTML export draws it; a click opens a
  technique's page;
- ``/reading``: the reading list by category and status with progress bars; a status
  change (``POST /reading/status``) goes through :func:`kg.reading.set_status`;
- a technique's page also lists the papers citing it for its method and the lineage
  edges citations suggest; ``POST /suggestions/decide`` accepts or rejects one (as
  ``kg suggest accept``/``reject``), and ``/lineage`` draws the suggested edges dashed;
- a technique's page lists its papers with the evidence of each link, and the automatic
  links waiting for a verdict; ``POST /links/decide`` accepts or rejects one (as ``kg
  links accept``/``reject``); the reading page shows each paper's techniques as chips;
- ``/query``: a SPARQL editor over ``/sparql`` and the named queries ``/queries/{name}``;
- ``/search``: full-text search with facets (the box at the top of every page); ``/news``:
  what is new in the techniques followed (``POST /news/seen`` marks it seen), and its Atom
  feeds ``/feeds/news.atom`` and ``/feeds/technique/{id}.atom``; from :mod:`kg.server.web.discover`.
- the reader's own writes (:mod:`kg.server.web.mine`): ``/techniques/new`` and
  ``/techniques/{id}/edit`` (a technique of their own, their facts on any), ``POST /follows``
  (the follow toggle of a technique's page), ``POST /reading/note`` (a paper's note).

Every page reads the graph through the named queries or the store interface, in the
server's worker threads. Writes are guarded by :mod:`kg.server.web.guard`.

What belongs here: the pages (:mod:`~kg.server.web.pages`), what each shows
(:mod:`~kg.server.web.models`), who may write and the warm-up. What does not: the
machine endpoints (kg.server) or the rules a write follows (the core: kg.reading,
kg.decisions).
"""

from __future__ import annotations

from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from kg.server.web.discover import Discovery
from kg.server.web.mine import MyPages
from kg.server.web.pages import Workbench, static_dir

__all__ = ["Workbench", "workbench_routes"]


def workbench_routes() -> list[BaseRoute]:
    """The workbench's routes, to pass to :func:`kg.server.create_app` as ``extra_routes``."""
    bench = Workbench()
    h = bench.handlers()
    d = Discovery(bench).handlers()
    mine = MyPages(bench).handlers()
    return [
        Route("/search", d["search"], methods=["GET"], name="wb_search"),
        Route("/news", d["news"], methods=["GET"], name="wb_news"),
        Route("/news/seen", d["news_seen"], methods=["POST"], name="wb_news_seen"),
        Route("/feeds/news.atom", d["feed"], methods=["GET"], name="wb_feed"),
        Route("/feeds/technique/{id}.atom", d["feed"], methods=["GET"], name="wb_feed_technique"),
        Route("/", h["techniques"], methods=["GET"], name="wb_techniques"),
        Route("/techniques", h["techniques"], methods=["GET"], name="wb_techniques_list"),
        Route("/techniques/new", mine["new_technique"], methods=["GET", "POST"], name="wb_technique_new"),
        Route("/techniques/{id}/edit", mine["edit_technique"], methods=["GET", "POST"], name="wb_technique_edit"),
        Route("/follows", mine["follow"], methods=["POST"], name="wb_follow"),
        Route("/reading/note", mine["note"], methods=["POST"], name="wb_note"),
        Route("/techniques/{id}", h["technique"], methods=["GET"], name="wb_technique"),
        Route("/compare", h["compare"], methods=["GET"], name="wb_compare"),
        Route("/compare/choices", h["compare_choices"], methods=["GET"], name="wb_compare_choices"),
        Route("/compare.md", h["compare_markdown"], methods=["GET"], name="wb_compare_markdown"),
        Route("/lineage", h["lineage"], methods=["GET"], name="wb_lineage"),
        Route("/reading", h["reading"], methods=["GET"], name="wb_reading"),
        Route("/reading/status", h["set_status"], methods=["POST"], name="wb_set_status"),
        Route("/suggestions/decide", h["decide"], methods=["POST"], name="wb_decide"),
        Route("/links/decide", h["decide_link"], methods=["POST"], name="wb_decide_link"),
        Route("/unlock", h["unlock"], methods=["GET", "POST"], name="wb_unlock"),
        Route("/query", h["query"], methods=["GET"], name="wb_query"),
        Route("/assets/lineage/{name}", h["lineage_asset"], methods=["GET"], name="wb_lineage_asset"),
        Mount("/static", app=StaticFiles(directory=static_dir()), name="wb_static"),
        Route("/{path:path}", h["not_found"], methods=["GET"], name="wb_not_found"),  # last: any other page
    ]
