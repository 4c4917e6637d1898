"""Every workbench page in Chromium at 1400 and 800 pixels wide, and on a 390-pixel phone: it fits, it loads nothing
from elsewhere, formulas are typeset by the vendored KaTeX, the lineage fits its frame on load and on resize (on a
phone it opens at a legible zoom), the 404 page suggests once and the compare pickers keep their picks.
Screenshots land in /tmp/web-shots for people to look at."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.web.conftest import MAIN_PAGES, SHOTS, Served, overflow_at, screenshot

pytestmark = pytest.mark.browser

PAGES = {**MAIN_PAGES, "search": "/search?q=delta+rule", "news": "/news?since=1y",
         "not-found": "/techniques/gated-deltanetz"}
WIDTHS = (1400, 800)
PHONE = 390
HEIGHT = 900


@pytest.mark.parametrize("width", (*WIDTHS, PHONE))
def test_every_page_fits_and_is_screenshot(server: Served, open_page, tmp_path: Path, width: int) -> None:  # type: ignore[no-untyped-def]
    page, events = open_page(server, width=width, height=HEIGHT)
    for name, path in PAGES.items():
        overflow = overflow_at(page, path)
        assert overflow <= 0, f"{name} is {overflow}px wider than {width}px"
        screenshot(page, tmp_path / f"{width}-{name}.png", name)
    # The not-found page answers 404 on purpose; nothing else may complain.
    problems = [p for p in events.problems() if "404" not in p]
    assert problems == []


@pytest.mark.parametrize("path", ["/techniques/gated-deltanet", "/compare?t=gdn&t=kda"])
def test_formulas_are_typeset_by_the_vendored_katex(server: Served, open_page, path: str) -> None:  # type: ignore[no-untyped-def]
    page, events = open_page(server, width=1400, height=HEIGHT)
    loaded: list[str] = []
    page.on("response", lambda r: loaded.append(r.url) if "katex" in r.url else None)
    page.goto(path)
    page.wait_for_load_state("networkidle")
    assert page.locator("span.math.rendered .katex").count() >= 2
    assert page.locator("span.math:not(.rendered)").count() == 0
    assert any(u.endswith("/static/katex/katex.min.js") for u in loaded)
    assert any(re.search(r"/static/katex/fonts/KaTeX_Main-Regular\.woff2$", u) for u in loaded)
    text = page.locator("main").inner_text()
    assert "$" not in text and "\\alpha" not in text and "\\top" not in text
    assert events.problems() == [] and events.foreign == []


def test_formulas_read_as_plain_notation_without_scripts(server: Served, open_page) -> None:  # type: ignore[no-untyped-def]
    page, _events = open_page(server, width=1400, height=HEIGHT, java_script_enabled=False)
    page.goto("/techniques/gated-deltanet")
    core = page.locator("dd", has=page.locator("span.math")).first.inner_text()
    assert "S_{t-1}" in core and "α_t" in core and "kᵀ" in core.replace("k_tᵀ", "kᵀ") and "$" not in core


def _layout(page: Any) -> dict[str, Any]:
    return page.evaluate("""() => {
      const cy = window.techkgLineage.cy;
      const frame = document.querySelector('.tkg-graph').getBoundingClientRect();
      const legend = document.querySelector('.tkg-legend').getBoundingClientRect();
      const box = cy.nodes(':visible').renderedBoundingBox();
      return {frame: {w: frame.width, h: frame.height, top: frame.top, bottom: frame.bottom},
              legendTop: legend.top, box: {x1: box.x1, y1: box.y1, x2: box.x2, y2: box.y2},
              nodes: cy.nodes(':visible').length};
    }""")


def _assert_fits(layout: dict[str, Any]) -> None:
    box, frame = layout["box"], layout["frame"]
    assert layout["nodes"] > 30
    assert box["x1"] >= -1 and box["y1"] >= -1, layout
    assert box["x2"] <= frame["w"] + 1 and box["y2"] <= frame["h"] + 1, layout
    assert frame["bottom"] <= layout["legendTop"] + 1, layout  # nothing of the graph sits behind the legend
    # Fitted, not merely inside: the drawing fills most of the frame in one direction.
    assert max((box["x2"] - box["x1"]) / frame["w"], (box["y2"] - box["y1"]) / frame["h"]) > 0.8, layout


def test_the_lineage_fits_on_load_and_on_resize(server: Served, open_page) -> None:  # type: ignore[no-untyped-def]
    page, events = open_page(server, width=1400, height=HEIGHT)
    page.goto("/lineage")
    page.wait_for_function("() => window.techkgLineage && window.techkgLineage.cy")
    page.wait_for_timeout(300)
    _assert_fits(_layout(page))
    page.set_viewport_size({"width": 800, "height": 700})
    page.wait_for_timeout(600)
    small = _layout(page)
    _assert_fits(small)
    page.set_viewport_size({"width": 1400, "height": HEIGHT})
    page.wait_for_timeout(600)
    _assert_fits(_layout(page))
    assert events.problems() == []


def test_on_a_phone_a_query_result_scrolls_in_its_frame_and_lineage_labels_read(server: Served, open_page) -> None:  # type: ignore[no-untyped-def]
    page, events = open_page(server, width=PHONE, height=844, is_mobile=True, has_touch=True, device_scale_factor=2)
    page.goto("/query?name=bibliography")
    page.wait_for_load_state("networkidle")
    page.click("#run")
    page.wait_for_selector("#results:not([hidden]) tbody tr")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE  # the table scrolls, not the page
    assert page.evaluate("() => document.querySelector('#results').scrollWidth") > PHONE
    page.goto("/lineage")
    page.wait_for_function("() => window.techkgLineage && window.techkgLineage.cy")
    page.wait_for_timeout(500)
    label_px = page.evaluate("""() => { const cy = window.techkgLineage.cy;
        const n = cy.nodes('.technique')[0]; return n.pstyle('font-size').pfValue * cy.zoom(); }""")
    assert label_px >= 10.5, f"lineage labels are {label_px:.1f} px on a phone"
    assert "Drag to move around" in page.locator(".tkg-hint").inner_text()
    page.click(".tkg-fit")  # the whole lineage on request
    page.wait_for_timeout(500)
    assert page.evaluate("() => window.techkgLineage.cy.zoom()") < 1
    assert events.problems() == []


def test_the_not_found_page_suggests_once(server: Served, open_page) -> None:  # type: ignore[no-untyped-def]
    page, _events = open_page(server, width=1400, height=HEIGHT)
    answer = page.goto("/techniques/gated-deltanetz")
    assert answer is not None and answer.status == 404
    text = page.locator("main").inner_text()
    assert text.lower().count("did you mean") == 1
    assert page.locator("main a[href^='/techniques/']").count() >= 1


@pytest.mark.parametrize(("query", "picks", "problem"), [
    ("t=GDN&t=kda", ["gated-deltanet", "kda"], ""),
    ("t=gdn", ["gated-deltanet", ""], ""),
    ("t=gdn,mamba2", ["gated-deltanet", "mamba2"], ""),
    ("t=gdn&t=nosuchthing", ["gated-deltanet", ""], "nosuchthing"),
    ("t=gdn&t=kda&t=mamba2&t=mla&t=gqa", ["gated-deltanet", "kda", "mamba2", "mla"], "2 to 4"),
])
def test_compare_pickers_keep_the_techniques_given(server: Served, open_page, query: str, picks: list[str],  # type: ignore[no-untyped-def]
                                                   problem: str) -> None:
    page, _events = open_page(server, width=1400, height=HEIGHT)
    page.goto("/compare?" + query)
    chosen = [page.locator(f"#t{slot}").input_value() for slot in range(4)]
    assert chosen[:len(picks)] == picks
    if problem:
        assert problem in page.locator("[role=alert]").inner_text()
    else:
        assert page.locator("[role=alert]").count() == 0


@pytest.fixture(scope="module")
def history_server(web_store_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The workbench on a store in which four papers are read over the following ten days."""
    import datetime as dt

    from kg.reading import resolve_paper, set_status
    from kg.store.embedded import OxigraphStore
    from tests.web.conftest import workbench_process

    path = tmp_path_factory.mktemp("history") / "store"
    shutil.copytree(web_store_dir, path)
    store = OxigraphStore(path)
    now = dt.datetime.now(dt.UTC)
    for days, title in ((1, "GPipe"), (3, "PipeDream"), (6, "Megatron-LM"), (10, "GaLore")):
        set_status(store, resolve_paper(store, title), "read", at=now + dt.timedelta(days=days))
    store.close()
    with workbench_process(path) as served:
        yield served


@pytest.mark.parametrize("width", WIDTHS)
def test_the_reading_page_draws_read_and_to_read_over_time(history_server: Served, open_page,  # type: ignore[no-untyped-def]
                                                           width: int) -> None:
    page, events = open_page(history_server, width=width, height=HEIGHT)
    page.goto("/reading")
    chart = page.locator("#history svg.history")
    assert chart.count() == 1 and page.locator("#history polyline.series").count() == 2
    labels = page.locator("#history text.end").all_text_contents()
    read = int(page.inner_text("#read-total"))
    assert labels == [f"read: {read}", f"to read: {53 - read}"] and read == 12
    points = page.locator("#history polyline.series").first.get_attribute("points") or ""
    ys = [float(p.split(",")[1]) for p in points.split()]
    assert len(ys) == 5 and ys == sorted(ys, reverse=True)  # read only grows: the line only rises
    box = chart.bounding_box()
    assert box and box["width"] <= width and box["height"] > 100
    page.locator("#history").screenshot(path=str(SHOTS / f"{width}-reading-history.png"))
    assert events.problems() == []
