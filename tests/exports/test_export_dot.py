"""DOT, and the SVG and PNG that Graphviz's own dot draws from it without a warning."""

from __future__ import annotations

import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from exports.dot import grid_positions, render_dot, run_dot
from exports.lineage import LineageOptions, build_lineage

pytestmark = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")
SVG = "{http://www.w3.org/2000/svg}"


def _dot(source: str, fmt: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["dot", f"-T{fmt}"], input=source.encode(), capture_output=True, check=False)


def test_full_lineage_renders_to_svg_and_png_without_warnings(built_store, tmp_path: Path) -> None:
    source = render_dot(build_lineage(built_store))
    for fmt in ("svg", "png"):
        proc = _dot(source, fmt)
        assert proc.returncode == 0
        assert proc.stderr == b"", proc.stderr.decode()
        (tmp_path / f"lineage.{fmt}").write_bytes(proc.stdout)
    assert (tmp_path / "lineage.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_svg_is_clustered_by_category_and_edges_carry_their_relation(built_store) -> None:
    lineage = build_lineage(built_store)
    svg = ET.fromstring(run_dot(render_dot(lineage), "svg").output)
    groups = svg.iter(f"{SVG}g")
    classes = [g.get("class") for g in svg.iter(f"{SVG}g")]
    assert classes.count("node") == 45 and classes.count("cluster") == 9
    texts = [t.text for t in svg.iter(f"{SVG}text")]
    assert {"Attention", "Mixture of Experts", "Distributed systems"} <= set(texts)
    assert {"refines", "combines", "specializes", "inverts", "portsTo"} <= set(texts)
    assert "Kimi Delta Attention" in texts
    assert groups


def test_lineage_only_parents_and_inferred_edges_are_dashed(built_store) -> None:
    source = render_dot(build_lineage(built_store))
    deltanet = next(line for line in source.splitlines() if "<B>DeltaNet</B>" in line)
    assert "dashed" in deltanet
    inferred = [line for line in source.splitlines() if "->" in line and 'style="dashed"' in line]
    assert inferred  # the catalog marks some lineage as inferred


def test_papers_and_repositories_render_too(built_store) -> None:
    lineage = build_lineage(built_store, LineageOptions(with_papers=True, with_repositories=True))
    proc = _dot(render_dot(lineage), "svg")
    assert proc.returncode == 0 and proc.stderr == b""
    assert b"introduces" in proc.stdout and b"nvlabs/gateddeltanet" in proc.stdout.lower()


def test_grid_layout_places_every_node_without_overlaps(built_store) -> None:
    lineage = build_lineage(built_store)
    boxes = grid_positions(lineage)
    assert boxes is not None and set(boxes) == set(lineage.graph.nodes)
    items = list(boxes.values())
    for i, (x1, y1, w1, h1) in enumerate(items):
        for x2, y2, w2, h2 in items[i + 1:]:
            assert abs(x1 - x2) * 2 >= (w1 + w2) - 1 or abs(y1 - y2) * 2 >= (h1 + h2) - 1
    width = max(x + w / 2 for x, _, w, _ in items) - min(x - w / 2 for x, _, w, _ in items)
    height = max(y + h / 2 for _, y, _, h in items) - min(y - h / 2 for _, y, _, h in items)
    assert 0.8 < width / height < 3.5  # fits a screen, unlike one tall column
