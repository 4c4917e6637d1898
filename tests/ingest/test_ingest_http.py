"""The shared HTTP layer against a real loopback server: User-Agent, retries, politeness,
Retry-After and Backoff, safe URLs and redaction."""

from __future__ import annotations

import time

import httpx
import pytest

from ingest.http import (
    Politeness,
    RetryPolicy,
    build_client,
    expect_json,
    retry_after_seconds,
    send,
    stats_for,
    user_agent,
)
from ingest.secrets import redact, register_secret, safe_url
from kg.errors import IngestError
from tests.conftest import at_once
from tests.ingest.replay import ReplayServer, reset, status


def test_user_agent_names_techkg_and_the_contact_the_user_set(replay: ReplayServer) -> None:
    assert user_agent().startswith("TechKG/") and "mailto" not in user_agent()
    with build_client("arxiv", contact="someone@example.org") as client:
        client.get(replay.arxiv_url, params={"id_list": "1605.08386"})
    sent = replay.log[-1].headers["user-agent"]
    assert sent.startswith("TechKG/") and "mailto:someone@example.org" in sent


def test_a_500_is_retried_with_backoff_until_the_recorded_answer(replay: ReplayServer, fast, sleeps) -> None:
    replay.script("GET", "/github/repos/akfish/PyGithub", status(500, '{"message": "Server Error"}', times=2))
    with fast("github") as client:
        response = client.get(replay.github_url + "/repos/akfish/PyGithub")
        assert response.status_code == 200 and response.json()["full_name"] == "akfish/PyGithub"
        assert stats_for(client).retries == 2
    assert [s.status for s in replay.requests("/github/repos/akfish")] == [500, 500, 200]
    assert len(sleeps.waits) == 2 and sleeps.waits[1] > sleeps.waits[0] * 0.5 > 0


def test_backoff_grows_exponentially_with_jitter_and_a_cap() -> None:
    policy = RetryPolicy(base=1.0, cap=5.0)
    for attempt, full in enumerate([1, 2, 4, 5, 5]):
        waits = [policy.backoff(attempt) for _ in range(50)]
        assert all(full / 2 <= w <= full for w in waits)
        assert len({round(w, 6) for w in waits}) > 1  # jitter


def test_retry_after_on_503_is_honoured(replay: ReplayServer, fast, sleeps) -> None:
    replay.script("GET", "/oai", status(503, "busy", content_type="text/plain", headers={"Retry-After": "7"}))
    with fast("arxiv") as client:
        response = client.get(replay.oai_url, params={"verb": "ListRecords", "metadataPrefix": "arXivRaw"})
    assert response.status_code == 200 and sleeps.waits == [7.0]


def test_a_retry_after_too_long_to_wait_goes_back_to_the_caller(replay: ReplayServer, sleeps) -> None:
    replay.script("GET", "/oai", status(503, "busy", content_type="text/plain", headers={"Retry-After": "3600"}))
    policy = RetryPolicy(base=0.01, max_retry_after=60, sleep=sleeps)
    with build_client("arxiv", retry=policy, politeness=Politeness(0)) as client:
        response = client.get(replay.oai_url)
    assert response.status_code == 503 and sleeps.waits == []
    assert retry_after_seconds(response) == 3600


def test_retry_after_as_an_http_date() -> None:
    when = time.time() + 120
    stamp = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(when))
    response = httpx.Response(429, headers={"Retry-After": stamp})
    assert 100 < (retry_after_seconds(response) or 0) <= 121


def test_a_connection_reset_is_retried_and_then_reported_clearly(replay: ReplayServer, fast) -> None:
    replay.script("GET", "/github/repos/akfish/PyGithub", reset(times=1))
    with fast("github") as client:
        assert client.get(replay.github_url + "/repos/akfish/PyGithub").status_code == 200
    replay.script("GET", "/github/repos/akfish/PyGithub", reset(times=None))
    with fast("github") as client, pytest.raises(IngestError) as caught:
        send(client, "GET", replay.github_url + "/repos/akfish/PyGithub", source="github")
    assert "connection" in caught.value.message and "tried 3 times" in caught.value.message
    assert caught.value.hint


def test_politeness_spaces_requests_to_one_host(replay: ReplayServer) -> None:
    polite = Politeness(min_interval=0.3, one_at_a_time=True)
    with build_client("arxiv", politeness=polite) as client:
        started = time.monotonic()
        for _ in range(3):
            client.get(replay.arxiv_url, params={"id_list": "1605.08386"})
        elapsed = time.monotonic() - started
    assert elapsed >= 0.6


def test_one_connection_at_a_time_serialises_parallel_callers(replay: ReplayServer) -> None:
    from tests.ingest.replay import delay

    replay.script("GET", "/api/query", delay(0.2, times=4))
    polite = Politeness(min_interval=0.0, one_at_a_time=True)
    with build_client("arxiv", politeness=polite) as client:
        started = time.monotonic()
        at_once(lambda: client.get(replay.arxiv_url), 4)
        elapsed = time.monotonic() - started
    assert elapsed >= 0.8  # four 0.2 s answers, one after the other


def test_zotero_style_backoff_header_delays_the_next_request(replay: ReplayServer, fast, sleeps) -> None:
    replay.script("GET", "/api/query", status(200, b"<feed/>", content_type="application/atom+xml",
                                               headers={"Backoff": "5"}))
    with fast("zotero") as client:
        client.get(replay.arxiv_url)
        client.get(replay.arxiv_url)
    assert sleeps.waits and 4.0 < sleeps.waits[-1] <= 5.0


def test_safe_url_strips_credentials_and_registered_secrets_are_redacted() -> None:
    assert safe_url("https://user:pw@api.example.org/x?api_key=abc&q=1&access_token=zz") == \
        "https://api.example.org/x?api_key=***&q=1&access_token=***"
    register_secret("s3cr3t-value-123")
    assert redact("Authorization: Bearer s3cr3t-value-123") == "Authorization: Bearer ***"
    assert "s3cr3t" not in safe_url("https://example.org/s3cr3t-value-123/")


def test_expect_json_names_an_html_error_page(replay: ReplayServer) -> None:
    replay.script("GET", "/github/repos/a/b", status(200, "<html><head><title>Unicorn! GitHub</title></head></html>",
                                                     content_type="text/html"))
    with build_client("github") as client:
        response = client.get(replay.github_url + "/repos/a/b")
    with pytest.raises(IngestError) as caught:
        expect_json(response, source="github")
    assert "HTML page" in caught.value.message and "Unicorn" in caught.value.message
    assert "--api-url" in caught.value.hint


def test_a_proxy_from_the_environment_is_used_except_for_no_proxy_hosts(monkeypatch, replay: ReplayServer) -> None:
    from ingest.http import _network_transport

    # The replay server stands in for the proxy: a proxied request arrives with the absolute URL.
    monkeypatch.setenv("HTTP_PROXY", replay.url)
    monkeypatch.setenv("NO_PROXY", ".internal.example,direct.example")
    with build_client("github", politeness=Politeness(0), retry=RetryPolicy(attempts=1)) as client:
        assert client.get("http://api.example.invalid/github/repos/akfish/PyGithub").status_code == 200
    assert replay.log[-1].path == "/github/repos/akfish/PyGithub"
    router = _network_transport()
    assert router._bypass("git.internal.example") and router._bypass("direct.example")
    assert router._bypass("127.0.0.1") and not router._bypass("api.github.com")
