"""Fixtures for the linker tests: the catalog's techniques and a linker over them."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from bench.labelled import catalog_techniques
from kg.linking.linker import Linker
from kg.linking.model import Link, PaperText, TextField
from kg.linking.names import TechniqueLabels


@pytest.fixture(scope="session")
def techniques() -> list[TechniqueLabels]:
    return catalog_techniques()


@pytest.fixture(scope="session")
def linker(techniques: list[TechniqueLabels]) -> Linker:
    return Linker(techniques)


def paper(title: str, abstract: str = "", *, categories: Sequence[str] = (), why: str = "",
          contexts: Sequence[str] = ()) -> PaperText:
    fields = [TextField("title", title, "g:test")]
    if abstract:
        fields.append(TextField("abstract", abstract, "g:test"))
    if why:
        fields.append(TextField("reading-list-why", why, "g:test"))
    fields += [TextField("citation-context", c, "g:test") for c in contexts]
    return PaperText("https://example.org/paper", fields, frozenset(categories))


def links_of(linker: Linker, text: PaperText, threshold: float = 0.0) -> dict[str, Link]:
    """Technique id → link, for the links scoring at least ``threshold``."""
    return {link.technique.rsplit("/", 1)[1]: link for link in linker.link(text) if link.score >= threshold}
