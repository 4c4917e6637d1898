"""A workbench that ``kg serve`` starts warms itself up: what its main pages read of the
whole graph is made once, before a person asks, and a page asked for meanwhile waits for
it instead of reading the graph a second time."""

from __future__ import annotations

import threading
import time
from collections import Counter

import httpx
import pytest

from kg.server.web import models
from kg.server.web.pages import _Recent
from tests.servers import serving


def test_a_value_asked_for_by_threads_at_once_is_made_once() -> None:
    kept = _Recent(4)
    made: list[int] = []
    started = threading.Event()

    def make() -> int:
        started.set()
        time.sleep(0.2)
        made.append(1)
        return 42

    answers: list[int] = []
    threads = [threading.Thread(target=lambda: answers.append(kept.get("key", make))) for _ in range(4)]
    threads[0].start()
    started.wait(5)
    for thread in threads[1:]:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert answers == [42, 42, 42, 42] and made == [1]


def test_a_value_that_failed_is_made_again_at_the_next_ask() -> None:
    kept = _Recent(4)

    def fail() -> int:
        raise RuntimeError("the store went away")

    with pytest.raises(RuntimeError, match="went away"):
        kept.get("key", fail)
    assert kept.get("key", lambda: 7) == 7


def test_the_started_workbench_keeps_its_main_pages_before_the_first_request(built_store, monkeypatch) -> None:
    from exports import lineage
    from kg.server import ServerSettings, create_app
    from kg.server.web import workbench_routes
    from kg.server.web.warm import warm_up

    reads: Counter[str] = Counter()
    for module, name in ((models, "technique_cards"), (models, "technique_choices"), (lineage, "build_lineage")):
        real = getattr(module, name)

        def counted(*args, _real=real, _name=name, **kwargs):  # type: ignore[no-untyped-def]
            reads[_name] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(module, name, counted)
    app = create_app(built_store, ServerSettings(), extra_routes=workbench_routes(), startup=[warm_up])
    with serving(app) as base, httpx.Client(base_url=base, timeout=60) as client:
        deadline = time.monotonic() + 60
        while getattr(app.state, "warmed", None) is None:
            assert time.monotonic() < deadline, "the warm-up did not end"
            time.sleep(0.05)
        warmed = reads.copy()
        assert warmed["technique_cards"] and warmed["technique_choices"] and warmed["build_lineage"]
        for path in ("/", "/lineage", "/compare", "/reading", "/techniques/gated-deltanet"):
            assert client.get(path).status_code == 200
        assert reads == warmed  # every one of them was kept by the warm-up
