"""A planted GITHUB_TOKEN never reaches the graph, the cache, the output or the logs."""

from __future__ import annotations

import io
import logging
import uuid
from pathlib import Path

import pyoxigraph as ox
import pytest

from ingest.cache import HttpCache, cache_files
from ingest.github import GithubSource, ingest_github
from ingest.http import Politeness, RetryPolicy, build_client
from ingest.secrets import token_from_env
from kg.errors import IngestError
from tests.conftest import nquads
from tests.ingest.replay import ReplayServer, status
from tests.servers import LoopbackServer, QuietHandler

REPOS = ["PyGithub/PyGithub", "akfish/PyGithub", "protoncoin/protoncoin", "nobody/no-such-repo"]


def test_a_planted_token_is_used_but_never_written_anywhere(kg_cli, replay: ReplayServer, tmp_path: Path) -> None:
    token = "ghp_planted_" + uuid.uuid4().hex
    store, cache = tmp_path / "store", tmp_path / "cache"
    env = {"GITHUB_TOKEN": token, "KG_CACHE_DIR": str(cache)}
    runs = [
        kg_cli("ingest", "github", *REPOS, "--api-url", replay.github_url, store=store, env=env),
        kg_cli("ingest", "github", *REPOS, "--rest", "--api-url", replay.github_url, store=store, env=env),
        kg_cli("ingest", "github", *REPOS, "--rest", "--api-url", replay.github_url, "-f", "json",
               store=store, env=env),
        kg_cli("ingest", "github", "--offline", "--rest", "--api-url", replay.github_url, store=store, env=env),
    ]
    replay.script("POST", "/github/graphql", status(401, '{"message": "Bad credentials"}'))
    runs.append(kg_cli("ingest", "github", *REPOS, "--api-url", replay.github_url, store=store, env=env))
    assert [r.returncode for r in runs] == [0, 0, 0, 0, 1], [r.stderr for r in runs]
    # It was used: every request carried it.
    assert {s.headers.get("authorization") for s in replay.requests("/github/")} == {f"Bearer {token}"}
    planted = token.encode()
    for run in runs:
        assert token not in run.stdout and token not in run.stderr
    assert planted not in nquads(store)
    files = cache_files(cache)
    assert files and all(planted not in f.read_bytes() for f in files)
    assert all(token not in str(f) for f in files)


def test_the_token_stays_out_of_logs_and_error_messages(monkeypatch, replay: ReplayServer, fresh_store,
                                                        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    token = "ghp_planted_" + uuid.uuid4().hex
    monkeypatch.setenv("GITHUB_TOKEN", token)
    caplog.set_level(logging.DEBUG)
    client = build_client("github", token=token_from_env("GITHUB_TOKEN"), cache=HttpCache(tmp_path / "c"),
                          politeness=Politeness(0), retry=RetryPolicy(attempts=1))
    ingest_github(fresh_store, GithubSource(client=client, api_url=replay.github_url, graphql=False), repos=REPOS)
    ingest_github(fresh_store, GithubSource(client=client, api_url=replay.github_url), repos=REPOS)
    # A server that echoes the credentials back in its error message.
    replay.script("GET", "/github/repos/akfish/PyGithub",
                  status(500, f'{{"message": "bad header Authorization: Bearer {token}"}}'))
    with pytest.raises(IngestError) as caught:
        ingest_github(fresh_store, GithubSource(client=client, api_url=replay.github_url, graphql=False),
                      repos=["akfish/PyGithub"])
    assert "***" in caught.value.message and token not in caught.value.message
    assert caplog.records and token not in caplog.text
    out = io.BytesIO()
    fresh_store.dump(out, fmt=ox.RdfFormat.N_QUADS)
    assert token.encode() not in out.getvalue()


# -- credentials never follow a redirect to another origin ---------------------------------------


class _Hop(LoopbackServer):
    """A loopback server: ``/go?to=URL`` redirects there (302), anything else answers 200
    and records the request's headers."""

    def __init__(self) -> None:
        from urllib.parse import parse_qs, urlsplit

        hop = self
        self.seen: list[dict[str, str]] = []

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                if parts.path == "/go":
                    self.send_response(302)
                    self.send_header("Location", parse_qs(parts.query)["to"][0])
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                hop.seen.append({k.lower(): v for k, v in self.headers.items()})
                self.reply(200, b'{"ok": true}', "application/json")

        super().__init__(Handler)


def _clients(secret: str) -> dict[str, object]:
    """Each source's client, carrying ``secret`` the way that source sends its credential."""
    from ingest.http import register_secret
    from ingest.zotero import build_client as zotero_client

    register_secret(secret)
    zotero = zotero_client()
    zotero.headers.update({"Zotero-API-Key": secret, "Authorization": f"Bearer {secret}"})  # as pyzotero sends it
    return {
        "semanticscholar": build_client("semanticscholar", headers={"x-api-key": secret}),
        "github": build_client("github", token=secret),
        "zotero": zotero,
        "custom header": build_client("other", headers={"X-Custom-Token": secret, "X-Thing": f"v={secret}"}),
    }


@pytest.mark.parametrize("other_host", ["127.0.0.1", "localhost"])
def test_no_credential_header_follows_a_redirect_to_another_origin(other_host: str) -> None:
    secret = "planted-" + uuid.uuid4().hex
    first, second = _Hop(), _Hop()
    try:
        for name, client in _clients(secret).items():
            # another port (or host): every credential header is gone
            away = f"http://{other_host}:{second.port}/landing"
            answer = client.get(f"http://127.0.0.1:{first.port}/go", params={"to": away})  # type: ignore[attr-defined]
            assert answer.status_code == 200 and len(answer.history) == 1, name
            headers = second.seen.pop()
            assert not any(secret in value for value in headers.values()), (name, headers)
            assert "user-agent" in headers  # the rest of the request is sent as it was
            # the same origin: the credentials go along
            home = f"http://127.0.0.1:{first.port}/landing"
            answer = client.get(f"http://127.0.0.1:{first.port}/go", params={"to": home})  # type: ignore[attr-defined]
            assert answer.status_code == 200 and any(secret in v for v in first.seen.pop().values()), name
            client.close()  # type: ignore[attr-defined]
    finally:
        first.close()
        second.close()
