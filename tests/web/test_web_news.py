"""The workbench's What's new page and its Atom feeds, from a real ``kg serve`` over HTTP;
the feeds read back with feedparser, as a feed reader would."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import feedparser
import httpx
import pytest

from tests.news.test_news import BASE, write_news
from tests.web.conftest import Served, workbench_process


@pytest.fixture
def news_server(web_store_dir: Path, tmp_path: Path) -> Iterator[Served]:
    store = tmp_path / "store"
    shutil.copytree(web_store_dir, store)
    write_news(store)
    with workbench_process(store) as served:
        yield served


def test_whats_new_lists_the_new_papers_with_their_evidence(news_server: Served) -> None:
    page = httpx.get(news_server.url("/news"), timeout=60)
    assert page.status_code == 200
    assert re.search(r'<a href="/news"[^>]*>What', page.text)  # in the navigation of every page
    papers = re.findall(r'<article class="hit panel" data-paper="([^"]+)"', page.text)
    assert {p.removeprefix(BASE) for p in papers} == {"ext", "use", "intro", "mention", "both"}
    assert "We extend Gated DeltaNet with a chunkwise parallel form." in page.text
    assert 'href="/feeds/technique/gated-deltanet.atom"' in page.text
    only = httpx.get(news_server.url("/news"), params={"technique": "mla"}, timeout=60)
    assert {p.removeprefix(BASE) for p in re.findall(r'data-paper="([^"]+)"', only.text)} == {"intro", "both"}


def test_the_feeds_are_atom_a_feed_reader_reads(news_server: Served) -> None:
    answer = httpx.get(news_server.url("/feeds/news.atom"), timeout=60)
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("application/atom+xml")
    feed = feedparser.parse(answer.content)
    assert not feed.bozo, feed.bozo_exception
    assert feed.feed.title == "TechKG: what is new in the techniques you follow"
    entries = {e.id.removeprefix(BASE): e for e in feed.entries}
    assert set(entries) == {"ext", "use", "intro", "mention", "both"}
    ext = entries["ext"]
    assert ext.link == "https://doi.org/10.5555/techkg.news.ext"
    assert ext.summary.startswith("Extends Gated DeltaNet: “We extend") and ext.tags[0].label == "Gated DeltaNet"
    # Newest first.
    published = [e.published_parsed for e in feed.entries]
    assert published == sorted(published, reverse=True)
    one = feedparser.parse(httpx.get(news_server.url("/feeds/technique/mla.atom"), timeout=60).content)
    assert one.feed.title == "TechKG: what is new in Multi-Head Latent Attention"
    assert {e.id.removeprefix(BASE) for e in one.entries} == {"intro", "both"}
    longer = feedparser.parse(httpx.get(news_server.url("/feeds/news.atom"), params={"since": "2y"},
                                        timeout=60).content)
    assert "old" in {e.id.removeprefix(BASE) for e in longer.entries}
    unknown = httpx.get(news_server.url("/feeds/technique/no-such-thing.atom"), timeout=60)
    assert unknown.status_code == 404


def test_marking_seen_is_a_guarded_write(news_server: Served) -> None:
    with httpx.Client(base_url=news_server.base, timeout=60) as browser:
        page = browser.get("/news")
        key = re.search(r'name="techkg-form-key" content="([^"]+)"', page.text)
        papers = re.search(r'name="papers" value="([^"]+)"', page.text)
        assert key and papers
        refused = browser.post("/news/seen", data={"key": "forged", "papers": papers.group(1)},
                               headers={"Origin": news_server.base})
        assert refused.status_code == 403
        done = browser.post("/news/seen", data={"key": key.group(1), "papers": papers.group(1)},
                            headers={"Origin": news_server.base})
        assert done.status_code == 303
        assert 'id="nothing-new"' in browser.get("/news").text
    # The feeds are not a look: they still list the papers.
    assert feedparser.parse(httpx.get(news_server.url("/feeds/news.atom"), timeout=60).content).entries
