"""GitHub ingest against the replay server: REST with ETags, 301, 202, 500, both rate
limits, GraphQL batching; triples asserted in the store."""

from __future__ import annotations

import json

import pyoxigraph as ox
import pytest

from ingest.github import GithubSource, ingest_github
from ingest.http import stats_for
from kg.errors import IngestError, RateLimitError
from kg.graphs import CATALOG, GITHUB
from kg.vocab import SCHEMA, TKG
from tests.ingest.replay import status

PYGITHUB = ox.NamedNode("https://github.com/pygithub/pygithub")


def facts(store, node: ox.NamedNode) -> dict[str, list[str]]:  # noqa: ANN001
    out: dict[str, list[str]] = {}
    for t in store.triples(GITHUB):
        if t.subject == node:
            out.setdefault(t.predicate.value.rsplit("/", 1)[-1].rsplit("#", 1)[-1], []).append(t.object.value)
    return {k: sorted(v) for k, v in out.items()}


def snapshots(store, node: ox.NamedNode) -> list[int]:  # noqa: ANN001
    rows = store.select("""SELECT ?stars ?t WHERE { ?repo tkg:snapshot ?s . ?s a tkg:RepositorySnapshot ;
                             tkg:stars ?stars ; prov:generatedAtTime ?t } ORDER BY ?t ?stars""", {"repo": node})
    return [r["stars"] for r in rows.records()]


def test_rest_records_counts_licence_topics_dates_and_latest_release(fresh_store, github_rest) -> None:
    report = ingest_github(fresh_store, github_rest, repos=["PyGithub/PyGithub"])
    assert report.mode == "rest" and report.added == ["PyGithub/PyGithub"]
    f = facts(fresh_store, PYGITHUB)
    assert f["name"] == ["PyGithub/PyGithub"] and f["codeRepository"] == ["https://github.com/PyGithub/PyGithub"]
    assert f["stars"] == ["5001"] and f["watchers"] and f["forks"] and f["openIssues"]
    assert f["license"] == ["https://spdx.org/licenses/LGPL-3.0"]
    assert f["keywords"] == ["github", "github-api", "pygithub", "python"]
    assert f["programmingLanguage"] == ["Python"] and f["defaultBranch"] == ["master"] and f["archived"] == ["false"]
    assert f["dateCreated"] == ["2012-02-25T12:53:47Z"] and f["pushedAt"] == ["2022-01-10T12:57:13Z"]
    assert f["latestRelease"] == ["v1.55"] and f["latestReleaseDate"] == ["2021-04-26T04:44:57Z"]
    assert f["description"] and f["url"] == ["https://pygithub.readthedocs.io/"] and f["githubId"] == ["3544490"]
    assert snapshots(fresh_store, PYGITHUB) == [5001]


def test_a_refresh_where_nothing_changed_gets_only_304s(fresh_store, github_rest, replay) -> None:
    repos = ["PyGithub/PyGithub", "akfish/PyGithub", "stellarcarbon/sorocarbon"]
    ingest_github(fresh_store, github_rest, repos=repos)
    served = len(replay.log)
    report = ingest_github(fresh_store, github_rest, repos=repos)
    refresh = replay.log[served:]
    assert refresh and {s.status for s in refresh} == {304}
    assert all(s.headers.get("if-none-match") for s in refresh)
    assert report.unchanged == repos and report.http["bodies"] == 0 and report.http["not_modified"] == len(refresh)


def test_snapshots_accumulate_so_growth_can_be_plotted(fresh_store, github_rest, replay) -> None:
    ingest_github(fresh_store, github_rest, repos=["PyGithub/PyGithub"])
    replay.use_version("/repos/PyGithub/PyGithub", 1)  # the 2025 recording
    report = ingest_github(fresh_store, github_rest, repos=["PyGithub/PyGithub"])
    assert report.updated == ["PyGithub/PyGithub"]
    assert sorted(snapshots(fresh_store, PYGITHUB)) == [5001, 7122]
    assert facts(fresh_store, PYGITHUB)["stars"] == ["7122"]  # one current count


def test_a_renamed_repository_keeps_its_node_and_its_old_name(fresh_store, github_rest, replay) -> None:
    old = ox.NamedNode("https://github.com/protoncoin/protoncoin")
    fresh_store.update(f"""INSERT DATA {{ GRAPH {CATALOG} {{ {old} a schema:SoftwareSourceCode .
        <https://w3id.org/techkg/id/technique/x> tkg:repository {old} }} }}""")
    report = ingest_github(fresh_store, github_rest)
    assert [s.status for s in replay.requests("/github/repos/protoncoin")] == [301]
    f = facts(fresh_store, old)
    assert f["name"] == ["padima2/protoncoin"] and f["formerName"] == ["protoncoin/protoncoin"]
    assert f["codeRepository"] == ["https://github.com/padima2/protoncoin"]
    repos = fresh_store.select("SELECT DISTINCT ?r WHERE { ?r a schema:SoftwareSourceCode }")
    assert [r["r"].value for r in repos] == [old.value]
    assert any("renamed" in n for n in report.notes)
    # The next run asks for the new name directly, and still writes to the same node.
    served = len(replay.log)
    ingest_github(fresh_store, github_rest, repos=["protoncoin/protoncoin"])
    assert [s.path for s in replay.log[served:]][0] == "/github/repos/padima2/protoncoin"
    assert len(fresh_store.select("SELECT DISTINCT ?r WHERE { ?r a schema:SoftwareSourceCode }")) == 1


def test_statistics_being_computed_202_are_waited_for(fresh_store, github_rest, replay, sleeps) -> None:
    report = ingest_github(fresh_store, github_rest, repos=["PyGithub/PyGithub"], contributors=True)
    statuses = [s.status for s in replay.requests("/github/repos/PyGithub/PyGithub/stats")]
    assert statuses == [202, 200] and report.failed == []
    assert facts(fresh_store, PYGITHUB)["contributors"] == ["21"]
    assert len(sleeps.waits) == 1


def test_a_500_is_retried_then_the_recorded_200_lands(fresh_store, github_rest, replay) -> None:
    replay.script("GET", "/github/repos/akfish/PyGithub", status(500, '{"message":"Server Error"}'))
    report = ingest_github(fresh_store, github_rest, repos=["akfish/PyGithub"])
    assert [s.status for s in replay.requests("/github/repos/akfish/PyGithub")][:2] == [500, 200]
    assert report.added == ["akfish/PyGithub"] and report.http["retries"] == 1


def test_a_primary_rate_limit_that_resets_soon_is_waited_out(fresh_store, github_rest, replay, sleeps) -> None:
    replay.primary_rate_limit("/repos/akfish/PyGithub", reset_in=20)
    report = ingest_github(fresh_store, github_rest, repos=["akfish/PyGithub"])
    assert [s.status for s in replay.requests("/github/repos/akfish/PyGithub")][:2] == [403, 200]
    assert report.added == ["akfish/PyGithub"] and any(18 <= w <= 22 for w in sleeps.waits)


def test_a_primary_rate_limit_far_off_stops_with_the_reset_time(fresh_store, github_rest, replay, dataset) -> None:
    before = dataset(fresh_store)
    replay.primary_rate_limit("/repos/stellarcarbon/sorocarbon", reset_in=3600)
    with pytest.raises(RateLimitError) as caught:
        ingest_github(fresh_store, github_rest, repos=["akfish/PyGithub", "stellarcarbon/sorocarbon", "a/b"])
    error = caught.value
    assert error.reset_at and error.reset_at in error.message and error.reset_at in error.hint
    assert "Fetched 1 of 3" in error.message and "nothing was written" in error.message
    assert dataset(fresh_store) == before
    assert not replay.requests("/github/repos/a/b")  # it stopped


def test_the_secondary_rate_limit_honours_retry_after(fresh_store, github_rest, replay, sleeps) -> None:
    replay.secondary_rate_limit("GET", "/repos/akfish/PyGithub", retry_after=30)
    report = ingest_github(fresh_store, github_rest, repos=["akfish/PyGithub"])
    assert report.added == ["akfish/PyGithub"] and 30.0 in sleeps.waits


def test_a_missing_repository_is_reported_not_dropped(fresh_store, github_rest) -> None:
    report = ingest_github(fresh_store, github_rest, repos=["akfish/PyGithub", "nobody/no-such-repo"])
    assert report.missing == ["nobody/no-such-repo"] and report.added == ["akfish/PyGithub"]


def test_a_repository_github_refuses_is_failed_and_the_rest_lands(fresh_store, github_rest, replay) -> None:
    replay.script("GET", "/github/repos/stellarcarbon/sorocarbon",
                  status(451, '{"message": "Repository access blocked"}'))
    report = ingest_github(fresh_store, github_rest, repos=["akfish/PyGithub", "stellarcarbon/sorocarbon"])
    assert report.added == ["akfish/PyGithub"]
    assert report.failed and report.failed[0][0] == "stellarcarbon/sorocarbon" and "451" in report.failed[0][1]


def test_graphql_fetches_many_repositories_in_one_query(fresh_store, replay, fast) -> None:
    client = fast("github", token="ghp_graphql_test_token_1234")
    source = GithubSource(client=client, api_url=replay.github_url)
    report = ingest_github(fresh_store, source, repos=["PyGithub/PyGithub", "akfish/PyGithub", "protoncoin/protoncoin",
                                                       "stellarcarbon/sorocarbon", "nobody/no-such-repo"])
    assert report.mode == "graphql" and stats_for(client).requests == 1
    assert sorted(report.added) == ["PyGithub/PyGithub", "akfish/PyGithub", "padima2/protoncoin",
                                    "stellarcarbon/sorocarbon"]
    assert report.missing == ["nobody/no-such-repo"]
    sent = json.loads(replay.requests("/github/graphql")[0].body)
    assert sent["variables"]["o4"] == "nobody" and "r4: repository(owner: $o4, name: $n4)" in sent["query"]
    assert replay.requests("/github/graphql")[0].headers["authorization"] == "Bearer ghp_graphql_test_token_1234"
    f = facts(fresh_store, PYGITHUB)
    assert f["stars"] == ["5001"] and f["license"] == ["https://spdx.org/licenses/LGPL-3.0"]  # as REST serves it
    assert facts(fresh_store, ox.NamedNode("https://github.com/padima2/protoncoin"))["formerName"] == \
        ["protoncoin/protoncoin"]


def test_graphql_batches_hold_at_most_100_repositories(fresh_store, replay, fast) -> None:
    base = json.loads(replay.github.routes["GET /repos/akfish/pygithub"][0].content)
    names = [f"bench/repo-{i:03d}" for i in range(150)]
    for i, name in enumerate(names):
        replay.add_github_repo(name, {**base, "full_name": name, "id": 10_000 + i, "stargazers_count": i})
    source = GithubSource(client=fast("github", token="ghp_batch_test_token_5678"), api_url=replay.github_url)
    report = ingest_github(fresh_store, source, repos=names)
    sizes = [len(json.loads(s.body)["variables"]) // 2 for s in replay.requests("/github/graphql")]
    assert sizes == [100, 50] and len(report.added) == 150


def test_graphql_needs_a_token(replay, fast) -> None:
    with pytest.raises(IngestError) as caught:
        GithubSource(client=fast("github"), api_url=replay.github_url, graphql=True)
    assert "GITHUB_TOKEN" in caught.value.hint


def test_the_catalog_repositories_are_fetched_by_default(built_store, github_rest, replay) -> None:
    report = ingest_github(built_store, github_rest)
    asked = {s.path.removeprefix("/github/repos/").lower() for s in replay.requests("/github/repos/")}
    linked = {r["r"].value.removeprefix("https://github.com/")
              for r in built_store.select("SELECT DISTINCT ?r WHERE { ?t tkg:repository ?r }")
              if r["r"].value.startswith("https://github.com/")}
    assert len(linked) > 10 and linked <= asked
    assert len(report.missing) == len(linked)  # none of them is recorded


def test_offline_github_answers_from_the_cache(fresh_store, github_rest, replay) -> None:
    from ingest.http import build_client, cache_for

    ingest_github(fresh_store, github_rest, repos=["PyGithub/PyGithub", "akfish/PyGithub"])
    offline = GithubSource(client=build_client("github", cache=cache_for(github_rest.client), offline=True),
                           api_url=replay.github_url)
    served = len(replay.log)
    report = ingest_github(fresh_store, offline, repos=["PyGithub/PyGithub", "akfish/PyGithub", "twitter/bootstrap"])
    assert len(replay.log) == served and report.unchanged == ["PyGithub/PyGithub", "akfish/PyGithub"]
    assert report.not_in_cache == ["twitter/bootstrap"]
    assert snapshots(fresh_store, PYGITHUB) == [5001, 5001]


def test_names_that_are_not_owner_slash_name_are_rejected(fresh_store, github_rest) -> None:
    with pytest.raises(IngestError) as caught:
        ingest_github(fresh_store, github_rest, repos=["not a repository"])
    assert "owner/name" in caught.value.message + caught.value.hint


def test_schema_terms_used_are_standard(fresh_store, github_rest) -> None:
    ingest_github(fresh_store, github_rest, repos=["akfish/PyGithub"])
    predicates = {t.predicate.value for t in fresh_store.triples(GITHUB)}
    assert SCHEMA.codeRepository.value in predicates and TKG.snapshot.value in predicates


def test_a_secondary_limit_without_retry_after_waits_a_minute_then_backs_off(fresh_store, github_rest, replay,
                                                                            sleeps) -> None:
    limited = status(403, '{"message": "secondary rate limit (synthesised answer)"}', times=1)
    replay.script("GET", "/github/repos/akfish/PyGithub", limited)
    assert ingest_github(fresh_store, github_rest, repos=["akfish/PyGithub"]).added == ["akfish/PyGithub"]
    assert sleeps.waits == [60.0]
    replay.script("GET", "/github/repos/akfish/PyGithub", status(403, '{"message": "secondary rate limit"}', times=2))
    with pytest.raises(RateLimitError) as caught:  # the second wait (120 s) is over --max-wait (60 s)
        ingest_github(fresh_store, github_rest, repos=["akfish/PyGithub"])
    assert "secondary rate limit" in caught.value.message and sleeps.waits == [60.0, 60.0]


def test_a_refused_token_fails_the_run(fresh_store, github_rest, replay, dataset) -> None:
    before = dataset(fresh_store)
    replay.script("GET", "/github/repos/akfish/PyGithub", status(401, '{"message": "Bad credentials"}'))
    with pytest.raises(IngestError) as caught:
        ingest_github(fresh_store, github_rest, repos=["akfish/PyGithub", "stellarcarbon/sorocarbon"])
    assert "401" in caught.value.message and "GITHUB_TOKEN" in caught.value.hint
    assert dataset(fresh_store) == before
