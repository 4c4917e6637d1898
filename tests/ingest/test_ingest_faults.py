"""Fault injection: every way an answer can go wrong gives a clear error and leaves the
graph exactly as it was. XML is parsed safely."""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.arxiv import ArxivSource, ingest_arxiv
from ingest.github import GithubSource, ingest_github
from ingest.http import Politeness, RetryPolicy, build_client
from ingest.oai import HarvestJob, OaiHarvester, ingest_oai
from kg.errors import IngestError
from tests.ingest.replay import ReplayServer, body, delay, reset, truncate

BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
<feed xmlns="http://www.w3.org/2005/Atom"><entry><id>http://arxiv.org/abs/1605.08386v1</id>
<title>&lol3;</title><published>2016-05-26T17:59:46Z</published><updated>2016-05-26T17:59:46Z</updated></entry></feed>"""

EXTERNAL_ENTITY = b"""<?xml version="1.0"?>
<!DOCTYPE feed [<!ENTITY secret SYSTEM "file:///etc/hostname">]>
<feed xmlns="http://www.w3.org/2005/Atom"><entry><id>http://arxiv.org/abs/1605.08386v1</id>
<title>&secret;</title><published>2016-05-26T17:59:46Z</published><updated>2016-05-26T17:59:46Z</updated></entry></feed>"""

HTML_PAGE = b"<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"

FAULTS = {
    "timeout": (lambda: delay(1.5, times=None), "timed out"),
    "connection reset": (lambda: reset(times=None), "connection"),
    "truncated body": (lambda: truncate(times=None), "truncated"),
    "html error page": (lambda: body(HTML_PAGE, "text/html"), "HTML page"),
}
XML_FAULTS = {
    "malformed xml": (lambda: body(b"<feed xmlns='http://www.w3.org/2005/Atom'><entry><id>x</id>",
                                   "application/atom+xml"),
                      "malformed"),
    "wrong content type": (lambda: body(b'{"feed": []}', "application/json"), "expected XML"),
    "billion laughs": (lambda: body(BILLION_LAUGHS, "application/atom+xml"), "DTD"),
    "external entity": (lambda: body(EXTERNAL_ENTITY, "application/atom+xml"), "DTD"),
}
JSON_FAULTS = {
    "malformed json": (lambda: body(b'{"full_name": "akfish/PyGithub", "stargazers_count": ', "application/json"),
                       "malformed"),
    "wrong content type": (lambda: body(b"<repository/>", "application/xml"), "expected JSON"),
}


def _client(source: str, tmp_path: Path):  # noqa: ANN202
    return build_client(source, politeness=Politeness(0), timeout=0.5,
                        retry=RetryPolicy(attempts=2, base=0.01, sleep=lambda s: None))


@pytest.fixture
def seeded(fresh_store, replay: ReplayServer, tmp_path: Path):  # noqa: ANN201
    """A store that already holds one earlier arXiv and one GitHub run."""
    ingest_arxiv(fresh_store, ArxivSource(client=_client("arxiv", tmp_path), api_url=replay.arxiv_url),
                 ids=["1707.08567"])
    ingest_github(fresh_store, GithubSource(client=_client("github", tmp_path), api_url=replay.github_url),
                  repos=["stellarcarbon/sorocarbon"])
    return fresh_store


def _check(run, store, dataset, expected: str) -> None:  # noqa: ANN001
    before = dataset(store)
    with pytest.raises(IngestError) as caught:
        run()
    assert expected.lower() in caught.value.message.lower(), caught.value.message
    assert caught.value.hint
    assert dataset(store) == before


def _arxiv(replay: ReplayServer, tmp_path: Path):  # noqa: ANN202
    """The path an arXiv run asks the API for, and the run."""
    source = ArxivSource(client=_client("arxiv", tmp_path), api_url=replay.arxiv_url)
    return "/api/query", lambda store: ingest_arxiv(store, source, ids=["1605.08386"])


def _github(replay: ReplayServer, tmp_path: Path):  # noqa: ANN202
    """The path a GitHub run asks the API for, and the run."""
    source = GithubSource(client=_client("github", tmp_path), api_url=replay.github_url)
    return "/github/repos/akfish/PyGithub", lambda store: ingest_github(store, source, repos=["akfish/PyGithub"])


@pytest.mark.parametrize(("source", "fault"), [*(("arxiv", f) for f in [*FAULTS, *XML_FAULTS]),
                                               *(("github", f) for f in [*FAULTS, *JSON_FAULTS])])
def test_arxiv_and_github_faults_give_a_clear_error_and_change_nothing(source, fault, seeded, replay, dataset,
                                                                       tmp_path) -> None:
    path, run = {"arxiv": _arxiv, "github": _github}[source](replay, tmp_path)
    make, expected = {**FAULTS, **(XML_FAULTS if source == "arxiv" else JSON_FAULTS)}[fault]
    replay.script("GET", path, make())
    _check(lambda: run(seeded), seeded, dataset, expected)


@pytest.mark.parametrize("fault", ["html error page", "truncated body", "malformed xml", "billion laughs"])
def test_oai_faults_give_a_clear_error_and_change_nothing(fault, seeded, replay, dataset, tmp_path) -> None:
    make, expected = {**FAULTS, **XML_FAULTS}[fault]
    replay.script("GET", "/oai", make())
    harvester = OaiHarvester(client=_client("arxiv", tmp_path), state_dir=tmp_path / "oai")
    _check(lambda: ingest_oai(seeded, harvester, HarvestJob(replay.oai_url, "arXivRaw", "math")),
           seeded, dataset, expected)


def test_graphql_html_error_page_changes_nothing(seeded, replay, dataset, tmp_path) -> None:
    replay.script("POST", "/github/graphql", body(HTML_PAGE, "text/html", code=200))
    client = build_client("github", token="ghp_fault_test_token_0000", politeness=Politeness(0),
                          retry=RetryPolicy(attempts=1))
    source = GithubSource(client=client, api_url=replay.github_url)
    _check(lambda: ingest_github(seeded, source, repos=["akfish/PyGithub"]), seeded, dataset, "HTML page")


def test_an_external_entity_is_never_resolved(seeded, replay, tmp_path) -> None:
    replay.script("GET", "/api/query", body(EXTERNAL_ENTITY, "application/atom+xml"))
    source = ArxivSource(client=_client("arxiv", tmp_path), api_url=replay.arxiv_url)
    with pytest.raises(IngestError):
        ingest_arxiv(seeded, source, ids=["1605.08386"])
    hostname = Path("/etc/hostname").read_text().strip() if Path("/etc/hostname").exists() else ""
    titles = seeded.select("SELECT ?t WHERE { ?p dcterms:title ?t }").records()
    assert not hostname or all(hostname not in r["t"] for r in titles)
