"""OAI-PMH bulk harvesting: resumption tokens, Retry-After, interruption and resume,
incremental watermarks, both metadata formats."""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.oai import HarvestJob, OaiHarvester, ingest_oai
from kg.errors import IngestError
from kg.graphs import ARXIV
from kg.vocab import DCTERMS, TKG
from tests.ingest.replay import ReplayServer, reset, status


@pytest.fixture
def harvester(fast, tmp_path: Path) -> OaiHarvester:
    return OaiHarvester(client=fast("arxiv"), state_dir=tmp_path / "oai")


def count_papers(store) -> int:  # noqa: ANN001
    return len({t.subject for t in store.triples(ARXIV) if t.predicate == TKG.arxivId})


def test_a_harvest_follows_resumption_tokens_to_the_end(fresh_store, harvester, replay: ReplayServer) -> None:
    report = ingest_oai(fresh_store, harvester, HarvestJob(replay.oai_url, "arXivRaw", "cs"))
    pages = replay.requests("/oai")
    assert len(pages) > 3
    assert pages[0].query["set"] == ["cs"] and "resumptionToken" not in pages[0].query
    assert all("resumptionToken" in p.query and "set" not in p.query for p in pages[1:])
    assert len(report.added) == count_papers(fresh_store) > 30
    rows = fresh_store.select("""SELECT ?v ?c ?title WHERE { <https://arxiv.org/abs/cs/0503050> tkg:arxivVersion ?v ;
                                   tkg:arxivPrimaryCategory ?c ; dcterms:title ?title }""").records()
    assert rows == [{"v": 1, "c": "cs.SE", "title": "Systematic Method for Path-Complete White Box Testing"}]


def test_arxivraw_and_the_api_describe_a_paper_the_same_way(fresh_store, harvester, arxiv_source, replay) -> None:
    from ingest.arxiv import ingest_arxiv

    ingest_oai(fresh_store, harvester, HarvestJob(replay.oai_url, "arXivRaw", "math"))
    report = ingest_arxiv(fresh_store, arxiv_source, ids=["1605.08386"])
    assert report.unchanged == ["1605.08386"] or report.updated == ["1605.08386"]
    authors = fresh_store.select("""SELECT ?n WHERE { <https://arxiv.org/abs/1605.08386> bibo:authorList/rdf:_2 ?p .
                                      ?p foaf:name ?n }""").records()
    assert authors == [{"n": "Tobias Windisch"}]


def test_oai_dc_records_land_too(fresh_store, harvester, replay) -> None:
    report = ingest_oai(fresh_store, harvester, HarvestJob(replay.oai_url, "oai_dc", "math"))
    assert "1605.08386" in report.added
    subjects = sorted(t.object.value for t in fresh_store.triples(ARXIV)
                      if t.subject.value == "https://arxiv.org/abs/1605.08386" and t.predicate == DCTERMS.subject)
    assert subjects == ["math.CO", "math.ST"]
    names = fresh_store.select(
        """SELECT ?n WHERE { <https://arxiv.org/abs/1605.08386> tkg:firstAuthor/foaf:name ?n }""")
    assert names.records() == [{"n": "Caprice Stanley"}]


def test_retry_after_on_a_503_is_respected(fresh_store, harvester, replay, sleeps) -> None:
    replay.script("GET", "/oai", status(503, "Retry later", content_type="text/plain", headers={"Retry-After": "5"}))
    ingest_oai(fresh_store, harvester, HarvestJob(replay.oai_url, "arXivRaw", "math"))
    assert 5.0 in sleeps.waits and [s.status for s in replay.requests("/oai")][:2] == [503, 200]


def test_an_interrupted_harvest_writes_nothing_and_resumes_where_it_stopped(
        fresh_store, harvester, replay, dataset) -> None:
    job = HarvestJob(replay.oai_url, "arXivRaw", "cs")
    before = dataset(fresh_store)
    replay.script("GET", "/oai", reset(times=None, after=4))  # four pages come through, then it keeps dropping
    with pytest.raises(IngestError) as caught:
        ingest_oai(fresh_store, harvester, job)
    assert "connection" in caught.value.message
    assert dataset(fresh_store) == before
    assert harvester.pending(job)["pages"] == 4
    replay.clear_faults()
    served = len(replay.log)
    report = ingest_oai(fresh_store, harvester, job)
    resumed = replay.log[served:]
    assert "resumptionToken" in resumed[0].query  # not a fresh ListRecords
    assert any("resumed after page 4" in n for n in report.notes)
    assert count_papers(fresh_store) == len(replay.oai._records({"set": "cs"}))
    assert harvester.pending(job) is None


def test_the_next_harvest_starts_from_the_watermark(fresh_store, harvester, replay) -> None:
    job = HarvestJob(replay.oai_url, "arXivRaw", "math")
    ingest_oai(fresh_store, harvester, job)
    assert harvester.watermark(job) == replay.oai.response_date[:10]
    assert harvester.watermark(HarvestJob(replay.oai_url, "arXivRaw", "cs")) is None


def test_an_expired_resumption_token_says_to_restart(fresh_store, harvester, replay, tmp_path) -> None:
    job = HarvestJob(replay.oai_url, "arXivRaw", "cs")
    state = tmp_path / "oai" / f"{job.key}.json"
    state.parent.mkdir(parents=True)
    state.write_text('{"token": "expired-token", "pages": 2, "records": 20, "deleted": 0, '
                     '"response_date": null, "total": 94}')
    with pytest.raises(IngestError) as caught:
        ingest_oai(fresh_store, harvester, job)
    assert "badResumptionToken" in caught.value.message and "--restart" in caught.value.hint
    report = ingest_oai(fresh_store, harvester, job, restart=True)
    assert len(report.added) > 30


def test_a_set_without_records_adds_nothing_and_is_no_error(fresh_store, harvester, replay) -> None:
    report = ingest_oai(fresh_store, harvester, HarvestJob(replay.oai_url, "arXivRaw", "cs", "2099-01-01"))
    assert report.counts()["added"] == 0 and len(replay.requests("/oai")) == 1


def test_bad_dates_are_refused_before_any_request(fresh_store, harvester, replay) -> None:
    with pytest.raises(IngestError) as caught:
        ingest_oai(fresh_store, harvester, HarvestJob(replay.oai_url, "arXivRaw", "cs", "01/02/2024"))
    assert "YYYY-MM-DD" in caught.value.message and replay.requests("/oai") == []
