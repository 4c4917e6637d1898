"""TechKG's Semantic Scholar client against the recorded API answers, replayed on loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ingest.http import Politeness, RetryPolicy, build_client
from ingest.semanticscholar import RETRY_STATUSES, SemanticScholarSource
from kg.errors import IngestError
from tests.citations.s2replay import S2Replay

LONG_FIELDS = ("abstract", "authors", "citationCount", "citationStyles", "corpusId", "externalIds", "fieldsOfStudy",
               "influentialCitationCount", "isOpenAccess", "journal", "openAccessPdf", "paperId", "publicationDate",
               "publicationTypes", "publicationVenue", "referenceCount", "s2FieldsOfStudy", "title", "url", "venue",
               "year")


@pytest.fixture
def replay() -> Iterator[S2Replay]:
    with S2Replay() as server:
        yield server


@pytest.fixture
def recorded(replay: S2Replay) -> Iterator[SemanticScholarSource]:
    client = build_client("semanticscholar", politeness=Politeness(0.0), retry_statuses=RETRY_STATUSES,
                          retry=RetryPolicy(attempts=2, base=0.01, sleep=lambda s: None))
    yield SemanticScholarSource(client=client, api_url=replay.url, page_size=50)
    client.close()


def test_the_batch_answers_each_id_in_the_order_asked(recorded: SemanticScholarSource, replay: S2Replay) -> None:
    ids = ["CorpusId:470667", "10.2139/ssrn.2250500", "0f40b1f08821e22e859c6050916cec3667778613"]
    papers = recorded.papers(ids, fields=("authors",))
    assert list(papers) == ids
    assert papers[ids[0]].paper_id == "c31c87c591a25c64fbaa82e8ac6a81831b6ac7ce"  # type: ignore[union-attr]
    assert papers[ids[1]].authors[:2] == ("E. Duflo", "A. Banerjee")  # type: ignore[union-attr]
    (seen,) = replay.log
    assert (seen.method, seen.path, seen.query) == ("POST", "/graph/v1/paper/batch", {"fields": "authors"})


def test_references_are_paged_through_offset_and_next(recorded: SemanticScholarSource, replay: S2Replay) -> None:
    listed = recorded.edges("10.2139/ssrn.2250500", "references", fields=("title",))
    assert listed is not None and listed.complete
    assert [(s.query["offset"], s.query["limit"]) for s in replay.log] == [("0", "50"), ("50", "50")]
    assert len(listed.edges) == 67
    # The second page holds references Semantic Scholar could not match to a paper.
    assert sum(1 for e in listed.edges if e.paper.paper_id is None) == 23
    assert listed.edges[0].paper.title == "Group lending or individual lending? Evidence from a randomised field " \
                                          "experiment in Mongolia"


def test_a_limit_stops_the_paging_and_says_the_list_is_cut(recorded: SemanticScholarSource) -> None:
    listed = recorded.edges("10.2139/ssrn.2250500", "references", fields=("title",), limit=50)
    assert listed is not None and len(listed.edges) == 50 and not listed.complete


def test_the_recorded_single_paper_lookups(recorded: SemanticScholarSource) -> None:
    paper = recorded.paper("10.1093/mind/lix.236.433", fields=("title",))
    assert paper is not None and paper.title == "Computing Machinery and Intelligence"
    assert recorded.paper("0", fields=("t", "i", "t", "l", "e")) is None


def test_an_unknown_paper_is_none_and_not_an_error(recorded: SemanticScholarSource) -> None:
    assert recorded.edges("CorpusId:0", "citations", fields=("title",)) is None


def test_an_unknown_field_is_reported_with_the_api_s_words(recorded: SemanticScholarSource) -> None:
    with pytest.raises(IngestError) as caught:
        recorded.paper("10.1093/mind/lix.236.433", fields=("unknown",))
    message = caught.value.message
    assert "HTTP 400" in message and "Unrecognized or unsupported fields: [unknown]" in message
    with pytest.raises(IngestError, match=r"fields: \[cititations\]"):
        recorded.edges("10.2139/ssrn.2250500", "references", fields=("title", "cititations"))


def test_a_403_says_what_to_do_with_and_without_a_key(replay: S2Replay) -> None:
    ids = ["CorpusId:470667", "10.2139/ssrn.2250500", "0f40b1f08821e22e859c6050916cec3667778613"]
    for has_key, words in ((False, "set S2_API_KEY"), (True, "refused the API key")):
        with build_client("semanticscholar", politeness=Politeness(0.0)) as client:
            source = SemanticScholarSource(client=client, api_url=replay.url, has_key=has_key)
            with pytest.raises(IngestError) as caught:
                source.papers(ids, fields=LONG_FIELDS)
        assert "HTTP 403" in caught.value.message and "Forbidden" in caught.value.message
        assert words in caught.value.hint and "Nothing was written" in caught.value.hint


def test_search_follows_next_to_the_second_page(recorded: SemanticScholarSource, replay: S2Replay) -> None:
    found = recorded.search("turing", limit=200, fields=("title",))
    assert len(found) == 200 and len({p.paper_id for p in found}) == 200
    assert [s.query["offset"] for s in replay.log] == ["0", "100"]
    assert recorded.search("n0 r3sult s3arch t3rm", limit=100, fields=("title",)) == []


def test_recommendations_for_a_paper(recorded: SemanticScholarSource) -> None:
    papers = recorded.recommendations("10.2139/ssrn.2250500", limit=100, fields=("title",), pool="recent")
    assert papers is not None and len(papers) == 100 and all(p.paper_id and p.title for p in papers)
