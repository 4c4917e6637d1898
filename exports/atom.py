"""What is new (:func:`kg.news.news`) as an Atom feed, made with ``feedgen``: one entry per
new paper, newest first, with the reason it is there and the evidence of its link, for a
feed reader to poll (``kg serve``'s ``/feeds/...``)."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from kg import __version__

if TYPE_CHECKING:
    from kg.news import NewsReport

__all__ = ["atom_feed"]


def _instant(text: str) -> dt.datetime:
    value = text.strip()
    if len(value) == 4:
        value += "-01-01"
    elif len(value) == 7:
        value += "-01"
    try:
        moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


def atom_feed(report: NewsReport, *, feed_id: str, title: str, feed_url: str, site_url: str,
              subtitle: str = "") -> bytes:
    """The Atom document of ``report``'s papers (newest first)."""
    from feedgen.feed import FeedGenerator

    feed = FeedGenerator()
    feed.id(feed_id)
    feed.title(title)
    feed.subtitle(subtitle or "New papers linked to the techniques you follow, from TechKG.")
    feed.author({"name": "TechKG"})
    feed.link(href=feed_url, rel="self", type="application/atom+xml")
    feed.link(href=site_url, rel="alternate", type="text/html")
    feed.generator("TechKG", version=__version__)
    items = sorted(report.items, key=lambda i: (_instant(i.date), i.paper))
    newest = max((_instant(i.date) for i in items), default=report.since)
    feed.updated(newest)
    for item in items:  # feedgen puts the last added first
        entry = feed.add_entry()
        entry.id(item.paper)
        entry.title(item.title)
        entry.link(href=item.link, rel="alternate")
        entry.published(_instant(item.date))
        entry.updated(_instant(item.date))
        entry.summary(f"{item.reason[0].upper()}{item.reason[1:]} (score {item.score:.2f})")
        entry.category(term=item.technique.rsplit("/", 1)[-1], label=item.technique_name)
    data: bytes = feed.atom_str(pretty=True)
    return data
