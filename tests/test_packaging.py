"""What the project ships: runtime dependencies that runtime code uses, the test-only ones
in dev, and KaTeX vendored (with its licence) at the version package.json pins."""

from __future__ import annotations

import fnmatch
import json
import re
import tomllib

from tests.conftest import ROOT

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
KATEX = ROOT / "kg" / "server" / "static" / "katex"


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!~ \[;]", r, maxsplit=1)[0].lower() for r in requirements}


def test_test_only_packages_are_dev_dependencies() -> None:
    runtime = _names(PROJECT["project"]["dependencies"])
    dev = _names(PROJECT["project"]["optional-dependencies"]["dev"])
    assert {"sparqlwrapper", "bibtexparser"} <= dev and not {"sparqlwrapper", "bibtexparser"} & runtime
    sources = "\n".join(p.read_text(encoding="utf-8") for folder in ("kg", "ingest", "exports", "queries", "kernels")
                        for p in (ROOT / folder).rglob("*.py"))
    assert "SPARQLWrapper" not in sources and "bibtexparser" not in sources
    assert "oxrdflib" in runtime and "from oxrdflib import" in sources  # kg.open_graph


def test_katex_is_vendored_at_the_pinned_version_with_its_licence() -> None:
    pinned = json.loads((ROOT / "package.json").read_text())["devDependencies"]["katex"]
    assert (KATEX / "VERSION").read_text().strip() == pinned
    assert "MIT License" in (KATEX / "LICENSE").read_text() and "Khan Academy" in (KATEX / "LICENSE").read_text()
    css = (KATEX / "katex.min.css").read_text()
    fonts = set(re.findall(r"url\(fonts/([^)]+)\)", css))
    assert fonts and all(f.endswith(".woff2") for f in fonts)
    assert fonts <= {p.name for p in (KATEX / "fonts").iterdir()}
    assert (KATEX / "katex.min.js").stat().st_size > 100_000


def test_the_vendored_assets_are_package_data() -> None:
    patterns = PROJECT["tool"]["setuptools"]["package-data"]["kg"]
    for path in KATEX.rglob("*"):
        if path.is_file():
            relative = path.relative_to(ROOT / "kg").as_posix()
            assert any(fnmatch.fnmatch(relative, p) and relative.count("/") == p.count("/") for p in patterns), relative
