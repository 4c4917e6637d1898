"""The Semantic Scholar emulator answers as the recorded API does."""

from __future__ import annotations

import json

import httpx
import pytest
import yaml

from ingest.emulators.semanticscholar import SemanticScholarEmulator
from tests.citations.conftest import KEY
from tests.conftest import FIXTURES


def _recorded(name: str) -> dict:
    data = yaml.safe_load((FIXTURES / "semanticscholar" / name).read_text(encoding="utf-8"))
    response = data["interactions"][0]["response"]
    body = response["body"]["string"] if "body" in response else response["content"]
    return json.loads(body)


@pytest.fixture
def http(emulator: SemanticScholarEmulator):
    with httpx.Client(base_url=emulator.url) as client:
        yield client


def test_errors_have_the_recorded_shapes(http, emulator) -> None:
    bad = http.get("/graph/v1/paper/ARXIV:2412.06464", params={"fields": "unknown"})
    assert bad.status_code == 400 and bad.json() == _recorded("test_bad_query_parameters.yaml")
    missing = http.get("/graph/v1/paper/0", params={"fields": "title"})
    assert missing.status_code == 404 and missing.json() == _recorded("test_not_found.yaml")
    refused = http.post("/graph/v1/paper/batch", json={"ids": ["ARXIV:2412.06464"]}, headers={"x-api-key": "nope"})
    assert refused.status_code == 403 and refused.json() == _recorded("test_debug.yaml")
    assert http.post("/graph/v1/paper/batch", json={"ids": ["x"] * 501}).status_code == 400
    assert http.get("/graph/v1/paper/ARXIV:2412.06464/citations", params={"limit": 1001}).status_code == 400


def test_lists_page_with_offset_and_next_and_carry_contexts(http, emulator) -> None:
    gdn = emulator.ids["gated-deltanet"]
    first = http.get(f"/graph/v1/paper/{gdn}/citations", params={"fields": "contexts,intents,contextsWithIntent,"
                                                                           "isInfluential,title", "limit": 2}).json()
    assert first["offset"] == 0 and first["next"] == 2 and len(first["data"]) == 2
    edge = first["data"][0]
    assert set(edge) == {"contexts", "intents", "contextsWithIntent", "isInfluential", "citingPaper"}
    assert set(edge["citingPaper"]) == {"paperId", "title"}
    rest = http.get(f"/graph/v1/paper/{gdn}/citations", params={"fields": "title", "offset": 2, "limit": 100}).json()
    assert "next" not in rest and len(first["data"]) + len(rest["data"]) == emulator.citation_count(gdn)


def test_the_batch_keeps_the_order_and_nulls_unknown_ids(http, emulator) -> None:
    answer = http.post("/graph/v1/paper/batch", params={"fields": "title,externalIds,citationCount"},
                       json={"ids": ["DOI:10.5555/none", "arXiv:2412.06464", "10.5555/TECHKG.SURVEY"]}).json()
    assert answer[0] is None and answer[1]["externalIds"]["ArXiv"] == "2412.06464"
    assert answer[2]["title"] == "A survey of efficient sequence models" and answer[1]["citationCount"] >= 3


def test_keys_and_the_rate_without_one() -> None:
    with SemanticScholarEmulator(keys=[KEY], unauthenticated_per_second=1.0) as emu, \
            httpx.Client(base_url=emu.url) as client:
        emu.add_paper("A paper", doi="10.5555/a")
        statuses = [client.get("/graph/v1/paper/DOI:10.5555/a").status_code for _ in range(2)]
        assert statuses == [200, 429]
        keyed = [client.get("/graph/v1/paper/DOI:10.5555/a", headers={"x-api-key": KEY}).status_code
                 for _ in range(3)]
        assert keyed == [200, 200, 200]
        assert not any(KEY in repr(r) for r in emu.requests) and [r.with_key for r in emu.requests][-1]


def test_the_bulk_search_reads_its_syntax_and_pages_by_token(http, emulator) -> None:
    def titles(query: str, **params: str) -> list[str]:
        answer = http.get("/graph/v1/paper/search/bulk", params={"query": query, "fields": "title", **params})
        assert answer.status_code == 200
        return [p["title"] for p in answer.json()["data"]]

    assert sorted(titles('"gated delta"')) == ["Chunkwise gated delta rules for long-context retrieval",
                                               "Gated Delta Networks: Improving Mamba2 with Delta Rule"]
    assert titles('"delta networks"') == ["Gated Delta Networks: Improving Mamba2 with Delta Rule"]
    assert all("delta" in t.lower() for t in titles("delt*"))
    assert not any("Mamba2" in t for t in titles("delt* -mamba2"))
    both = titles("chunkwise | survey")
    assert "A survey of efficient sequence models" in both and any("Chunkwise" in t for t in both)
    for i in range(1005):
        emulator.add_paper(f"Okapi routing note {i}", doi=f"10.5555/okapi.{i}")
    first = http.get("/graph/v1/paper/search/bulk", params={"query": "okapi"}).json()
    assert first["total"] == 1005 and len(first["data"]) == 1000 and first["token"]
    rest = http.get("/graph/v1/paper/search/bulk", params={"query": "okapi", "token": first["token"]}).json()
    assert len(rest["data"]) == 5 and "token" not in rest
    assert not {p["paperId"] for p in first["data"]} & {p["paperId"] for p in rest["data"]}


def test_list_recommendations_are_like_the_positives_and_unlike_the_negatives(http, emulator) -> None:
    ids = emulator.ids
    answer = http.post("/recommendations/v1/papers", params={"fields": "title", "limit": 10},
                       json={"positivePaperIds": [ids["gated-deltanet"]], "negativePaperIds": []})
    found = [p["paperId"] for p in answer.json()["recommendedPapers"]]
    assert found[0] == ids["recommended"] or ids["recommended"] in found
    assert ids["gated-deltanet"] not in found
    against = http.post("/recommendations/v1/papers", params={"fields": "title"},
                        json={"positivePaperIds": [ids["gated-deltanet"]], "negativePaperIds": [ids["recommended"]]})
    assert ids["recommended"] not in [p["paperId"] for p in against.json()["recommendedPapers"]]
    unknown = http.post("/recommendations/v1/papers", json={"positivePaperIds": ["ARXIV:2999.00001"]})
    assert unknown.status_code == 404
    too_many = http.post("/recommendations/v1/papers", params={"limit": 501},
                         json={"positivePaperIds": [ids["gated-deltanet"]]})
    assert too_many.status_code == 400
