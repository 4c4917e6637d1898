"""Ingest benchmark (issue #3): requests needed to refresh arXiv ids and GitHub
repositories, and Atom parse-and-load throughput, each beside a baseline measured in
the same run.

    python -m bench.ingest                                   # 1,000 ids, 1,000 repositories, 10,000 entries
    python -m bench.ingest --ids 200 --repos 200 --entries 2000   # quicker

Everything is served from a local server (the test suite's replay server, loaded with
synthetic Atom entries and repository bodies): no network, politeness delay 0.

- arXiv: TechKG's batched lookup (≤ 100 ids per request) against one request per id,
  the obvious use of the ``arxiv`` package. Target: ≤ 10 requests for 1,000 ids.
- GitHub: GraphQL with a token (≤ 100 repositories per query) against REST; then a
  REST refresh where nothing changed, which must see only 304s and download no body.
  Target: ≤ 10 requests for 1,000 repositories.
- Parse and load: an Atom feed of N entries parsed (safely), mapped to triples and
  written to a store, against ``feedparser.parse`` of the same bytes alone.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ATOM_NS = 'xmlns="http://www.w3.org/2005/Atom" xmlns:arxiv="http://arxiv.org/schemas/atom"'
WORDS = ("sparse", "attention", "expert", "routing", "gradient", "parallel", "pipeline", "kernel", "quantized",
         "low-rank", "optimizer", "memory", "efficient", "scalable", "state", "delta", "policy", "reward")
NAMES = ("Ada", "Bo", "Chen", "Dana", "Emil", "Fatima", "Goro", "Hana", "Ivo", "Jun", "Kira", "Lev")
SURNAMES = ("Lindqvist", "Okafor", "Zhang", "Moreau", "Silva", "Tanaka", "Novak", "Haddad", "Kowalski", "Reyes")
CATEGORIES = ("cs.LG", "cs.CL", "cs.DC", "cs.AI", "stat.ML", "math.OC")


def synthetic_ids(n: int, start: int = 1) -> list[str]:
    """Synthetic new-style ids in a made-up month (served only by the local server)."""
    return [f"2401.{i:05d}" for i in range(start, start + n)]


def synthetic_entry(ident: str, rng: random.Random) -> bytes:
    title = " ".join(rng.choice(WORDS) for _ in range(6)).capitalize()
    authors = "".join(f"<author><name>{rng.choice(NAMES)} {rng.choice(SURNAMES)}</name></author>"
                      for _ in range(rng.randint(2, 6)))
    cats = rng.sample(CATEGORIES, rng.randint(1, 3))
    extra = f"<arxiv:comment>{rng.randint(8, 40)} pages</arxiv:comment>" if rng.random() < 0.5 else ""
    if rng.random() < 0.3:
        extra += f"<arxiv:doi>10.5555/bench.{ident}</arxiv:doi>"
    day = rng.randint(1, 28)
    return (
        f"<entry {ATOM_NS}><id>http://arxiv.org/abs/{ident}v1</id>"
        f"<updated>2024-01-{day:02d}T12:00:00Z</updated><published>2024-01-{day:02d}T12:00:00Z</published>"
        f"<title>{title}</title><summary>{' '.join(rng.choice(WORDS) for _ in range(120))}</summary>{authors}"
        f"<link href=\"https://arxiv.org/abs/{ident}v1\" rel=\"alternate\" type=\"text/html\"/>"
        f"<link href=\"https://arxiv.org/pdf/{ident}v1\" rel=\"related\" type=\"application/pdf\" title=\"pdf\"/>"
        + "".join(f'<category term="{c}" scheme="http://arxiv.org/schemas/atom"/>' for c in cats)
        + f'<arxiv:primary_category term="{cats[0]}"/>{extra}</entry>'
    ).encode()


def synthetic_entries(ids: list[str], seed: int = 42) -> dict[str, bytes]:
    rng = random.Random(seed)
    return {ident: synthetic_entry(ident, rng) for ident in ids}


def synthetic_feed(entries: list[bytes]) -> bytes:
    head = (f'<?xml version="1.0" encoding="UTF-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom" '
            'xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" xmlns:arxiv="http://arxiv.org/schemas/atom">'
            f"<id>https://arxiv.org/api/bench</id><title>bench</title><updated>2024-02-01T00:00:00Z</updated>"
            f"<opensearch:totalResults>{len(entries)}</opensearch:totalResults>"
            f"<opensearch:startIndex>0</opensearch:startIndex>"
            f"<opensearch:itemsPerPage>{len(entries)}</opensearch:itemsPerPage>")
    return head.encode() + b"".join(entries) + b"</feed>"


def _fast_client(source: str, **kwargs: Any) -> Any:
    from ingest.http import Politeness, RetryPolicy, build_client

    return build_client(source, politeness=Politeness(0.0, one_at_a_time=True),
                        retry=RetryPolicy(attempts=2, base=0.01), timeout=60.0, **kwargs)


def bench_arxiv(server: Any, n: int) -> dict[str, Any]:
    import arxiv

    from ingest.arxiv import ArxivSource, ingest_arxiv
    from kg.store.embedded import OxigraphStore

    ids = synthetic_ids(n)
    server.add_arxiv_entries(synthetic_entries(ids))
    store = OxigraphStore(None)
    source = ArxivSource(client=_fast_client("arxiv"), api_url=server.arxiv_url)
    before = len(server.requests("/api/query"))
    start = time.perf_counter()
    report = ingest_arxiv(store, source, ids=ids)
    ours_s = time.perf_counter() - start
    ours = len(server.requests("/api/query")) - before
    before = len(server.requests("/api/query"))
    refresh = ingest_arxiv(store, source, ids=ids)
    refresh_requests = len(server.requests("/api/query")) - before
    # Baseline: one Search per paper with the arxiv package (delay 0 here; 3 s in real use).
    client = arxiv.Client(page_size=100, delay_seconds=0.0, num_retries=0)
    client.query_url_format = server.arxiv_url + "?{}"
    before = len(server.requests("/api/query"))
    start = time.perf_counter()
    found = sum(1 for ident in ids for _ in client.results(arxiv.Search(id_list=[ident])))
    base_s = time.perf_counter() - start
    baseline = len(server.requests("/api/query")) - before
    store.close()
    return {"ids": n, "requests": ours, "refresh_requests": refresh_requests, "added": len(report.added),
            "refresh_unchanged": len(refresh.unchanged), "seconds": round(ours_s, 2),
            "baseline_requests": baseline, "baseline_found": found, "baseline_seconds": round(base_s, 2),
            "ratio": round(baseline / max(ours, 1), 1),
            "at_arxiv_pace_s": ours * 3, "baseline_at_arxiv_pace_s": baseline * 3}


def bench_github(server: Any, n: int, tmp: Path) -> dict[str, Any]:
    from ingest.cache import HttpCache
    from ingest.github import GithubSource, ingest_github
    from kg.store.embedded import OxigraphStore

    template = json.loads(server.github.routes["GET /repos/akfish/pygithub"][0].content)
    rng = random.Random(7)
    names = [f"bench-org/repo-{i:04d}" for i in range(n)]
    for i, name in enumerate(names):
        server.add_github_repo(name, {**template, "full_name": name, "name": name.split("/")[1], "id": 900_000 + i,
                                      "stargazers_count": rng.randint(0, 50_000), "forks_count": rng.randint(0, 5000),
                                      "subscribers_count": rng.randint(0, 900),
                                      "open_issues_count": rng.randint(0, 300),
                                      "topics": rng.sample(list(WORDS), 3),
                                      "latest_release": {"id": i, "tag_name": f"v{rng.randint(0, 9)}.{i % 10}",
                                                         "published_at": "2024-01-15T10:00:00Z"}})
    store = OxigraphStore(None)
    # GraphQL, with a token: up to 100 repositories per query.
    graphql = GithubSource(client=_fast_client("github", token="bench-token-not-secret"), api_url=server.github_url)
    before = len(server.log)
    start = time.perf_counter()
    report = ingest_github(store, graphql, repos=names)
    graphql_s = time.perf_counter() - start
    graphql_requests = len(server.log) - before
    # REST without a token: the baseline for the first fetch, then an unchanged refresh.
    rest = GithubSource(client=_fast_client("github", cache=HttpCache(tmp / "github")), api_url=server.github_url)
    before = len(server.log)
    start = time.perf_counter()
    ingest_github(store, rest, repos=names)
    rest_s = time.perf_counter() - start
    rest_requests = len(server.log) - before
    before = len(server.log)
    start = time.perf_counter()
    refresh = ingest_github(store, rest, repos=names)
    refresh_s = time.perf_counter() - start
    statuses = Counter(s.status for s in server.log[before:])
    snapshots = len(store.select("SELECT ?s WHERE { ?s a tkg:RepositorySnapshot }"))
    store.close()
    return {"repositories": n, "graphql_requests": graphql_requests, "graphql_added": len(report.added),
            "graphql_seconds": round(graphql_s, 2), "rest_requests": rest_requests, "rest_seconds": round(rest_s, 2),
            "ratio": round(rest_requests / max(graphql_requests, 1), 1),
            "refresh_requests": sum(statuses.values()), "refresh_statuses": dict(statuses),
            "refresh_bodies": refresh.http["bodies"], "refresh_unchanged": len(refresh.unchanged),
            "refresh_seconds": round(refresh_s, 2), "snapshots": snapshots}


def bench_parse(server: Any, n: int) -> dict[str, Any]:
    import feedparser
    from arxiv import _feed

    from ingest.arxiv import ArxivRecord, ArxivSource, ingest_arxiv, ingest_records
    from ingest.safexml import parse_lxml
    from kg.store.embedded import OxigraphStore

    ids = synthetic_ids(n, start=20_001)
    entries = synthetic_entries(ids, seed=3)
    feed = synthetic_feed(list(entries.values()))
    # Ours, from bytes: safe strict parse + the arxiv package's parser + triples + one transaction.
    store = OxigraphStore(None)
    client = _fast_client("arxiv")
    start = time.perf_counter()
    parse_lxml(feed, source="arxiv", url="bench")
    records = [ArxivRecord.from_result(r) for r in _feed.parse(feed).results]
    parsed_s = time.perf_counter() - start
    report = ingest_records(store, records, client=client, used="https://bench.invalid", label="bench", mode="ids")
    ours_s = time.perf_counter() - start
    triples = store.count()
    store.close()
    # Ours, end to end over HTTP: 100 ids per request from the local server.
    server.add_arxiv_entries(entries)
    store = OxigraphStore(None)
    start = time.perf_counter()
    http_report = ingest_arxiv(store, ArxivSource(client=client, api_url=server.arxiv_url), ids=ids)
    http_s = time.perf_counter() - start
    store.close()
    # Baseline: feedparser alone on the same bytes (no store).
    start = time.perf_counter()
    parsed = feedparser.parse(feed)
    base_s = time.perf_counter() - start
    return {"entries": n, "feed_mb": round(len(feed) / 1e6, 1), "added": len(report.added), "triples": triples,
            "parse_seconds": round(parsed_s, 2), "parse_and_load_seconds": round(ours_s, 2),
            "entries_per_s": round(n / ours_s), "http_end_to_end_seconds": round(http_s, 2),
            "http_entries_per_s": round(len(http_report.added) / http_s),
            "feedparser_entries": len(parsed.entries), "feedparser_seconds": round(base_s, 2),
            "feedparser_entries_per_s": round(n / base_s), "ratio": round(base_s / ours_s, 2)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.ingest", description=__doc__.split("\n")[0])
    parser.add_argument("--ids", type=int, default=1000)
    parser.add_argument("--repos", type=int, default=1000)
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.ingest.replay import ReplayServer

    with ReplayServer() as server, tempfile.TemporaryDirectory() as tmp:
        results = {"arxiv": bench_arxiv(server, args.ids), "github": bench_github(server, args.repos, Path(tmp)),
                   "parse": bench_parse(server, args.entries)}
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    a, g, p = results["arxiv"], results["github"], results["parse"]
    print(f"arXiv refresh of {a['ids']} ids: {a['requests']} requests (target ≤ 10; unchanged refresh "
          f"{a['refresh_requests']}) vs {a['baseline_requests']} one-per-id  → {a['ratio']}× fewer; at arXiv's "
          f"3 s pace {a['at_arxiv_pace_s']} s vs {a['baseline_at_arxiv_pace_s']} s")
    print(f"GitHub, {g['repositories']} repositories: GraphQL {g['graphql_requests']} requests (target ≤ 10) vs "
          f"REST {g['rest_requests']}  → {g['ratio']}× fewer")
    print(f"GitHub REST refresh, nothing changed: {g['refresh_requests']} requests, statuses "
          f"{g['refresh_statuses']}, {g['refresh_bodies']} bodies downloaded; {g['snapshots']} snapshots kept")
    print(f"Parse and load {p['entries']} Atom entries ({p['feed_mb']} MB, {p['triples']} triples): "
          f"{p['parse_and_load_seconds']} s = {p['entries_per_s']} entries/s (parse alone {p['parse_seconds']} s); "
          f"feedparser alone {p['feedparser_seconds']} s = {p['feedparser_entries_per_s']} entries/s "
          f" → {p['ratio']}× feedparser's throughput")
    print(f"  end to end over HTTP (100 ids per request): {p['http_end_to_end_seconds']} s = "
          f"{p['http_entries_per_s']} entries/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
