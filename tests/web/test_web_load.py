"""The workbench under load: about 1,000 requests from 10 concurrent clients on loopback
against a real ``kg serve``; no errors, and the p95 latency reported."""

from __future__ import annotations

import asyncio
import statistics
import time

import httpx

from tests.web.conftest import Served

#: What a reader clicks through, weighted roughly by how often; static files are cached
#: by a browser, so they weigh little.
MIX = [
    "/", "/", "/?q=gdn", "/?category=moe", "/?kernel=verified&year=2024",
    "/techniques/gated-deltanet", "/techniques/kda", "/techniques/transformer",
    "/compare?t=gdn&t=kda&t=mamba2", "/compare?t=mqa&t=gqa", "/compare.md?t=gdn&t=kda",
    "/reading", "/reading?status=read", "/query", "/lineage",
    "/queries/descendants?technique=MQA", "/static/app.css", "/static/app.js",
]
CLIENTS = 10
PER_CLIENT = 100


async def _client(base: str, offset: int, latencies: list[float], failures: list[str]) -> None:
    async with httpx.AsyncClient(base_url=base, timeout=60) as client:
        for i in range(PER_CLIENT):
            path = MIX[(offset + i) % len(MIX)]
            started = time.perf_counter()
            try:
                answer = await client.get(path)
                answer.read()
            except httpx.HTTPError as error:
                failures.append(f"{path}: {type(error).__name__}: {error}")
                continue
            latencies.append(time.perf_counter() - started)
            if answer.status_code != 200:
                failures.append(f"{path}: {answer.status_code} {answer.text[:200]}")


async def _load(base: str) -> tuple[list[float], list[str], float]:
    latencies: list[float] = []
    failures: list[str] = []
    started = time.perf_counter()
    await asyncio.gather(*(_client(base, c * 7, latencies, failures) for c in range(CLIENTS)))
    return latencies, failures, time.perf_counter() - started


def test_a_thousand_requests_from_ten_clients_all_succeed(server: Served) -> None:
    latencies, failures, wall = asyncio.run(_load(server.base))
    assert failures == []
    assert len(latencies) == CLIENTS * PER_CLIENT
    ordered = sorted(latencies)
    p50 = statistics.median(ordered)
    p95 = ordered[int(0.95 * len(ordered)) - 1]
    print(f"\nworkbench load: {len(ordered)} requests, {CLIENTS} clients, {wall:.1f} s "
          f"({len(ordered) / wall:.0f} req/s); p50 {p50 * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms, "
          f"max {ordered[-1] * 1000:.0f} ms")
    assert p95 < 5.0
    assert server.process.poll() is None  # still serving
