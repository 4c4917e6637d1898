"""Stable IRIs, so that importing the same thing twice never mints a second node.

- arXiv papers: ``https://arxiv.org/abs/<id>`` without the version (old-style ids too).
- DOIs: ``https://doi.org/<doi>``, lower-cased (DOIs are case-insensitive).
- GitHub repositories: ``https://github.com/<owner>/<name>``, lower-cased.
- Techniques, people, organisations, categories: slugs under ``https://w3id.org/techkg/id/``.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass

from pyoxigraph import NamedNode

from kg.vocab import BASE, ID

__all__ = [
    "ArxivId",
    "arxiv_iri",
    "category_iri",
    "doi_iri",
    "looks_like_arxiv_id",
    "normalize_doi",
    "org_iri",
    "paper_iri",
    "paper_label",
    "paper_link",
    "parse_arxiv_id",
    "parse_github_repo",
    "person_iri",
    "repo_iri",
    "skolem",
    "slugify",
    "status_iri",
    "technique_iri",
]

_NEW_STYLE = re.compile(r"^(?P<id>\d{4}\.\d{4,5})(?:v(?P<v>\d+))?$")
_OLD_STYLE = re.compile(r"^(?P<id>[a-z][a-z\-]*(?:\.[A-Z]{2})?/\d{7})(?:v(?P<v>\d+))?$")
_ARXIV_PREFIXES = (
    "https://arxiv.org/abs/",
    "http://arxiv.org/abs/",
    "https://arxiv.org/pdf/",
    "http://arxiv.org/pdf/",
    "https://export.arxiv.org/abs/",
    "http://export.arxiv.org/abs/",
    "arxiv:",
)


@dataclass(frozen=True)
class ArxivId:
    """An arXiv identifier split into the versionless id and the version seen, if any."""

    id: str
    version: int | None = None

    @property
    def iri(self) -> NamedNode:
        return NamedNode(f"https://arxiv.org/abs/{self.id}")

    def __str__(self) -> str:
        return f"{self.id}v{self.version}" if self.version else self.id


def parse_arxiv_id(value: str) -> ArxivId:
    """Parse ``2104.12255v1``, ``astro-ph/0601001``, ``arXiv:…`` or an abs/pdf URL.

    Raises ValueError naming the value when it is not an arXiv identifier.
    """
    raw = value.strip()
    lowered = raw.lower()
    for prefix in _ARXIV_PREFIXES:
        if lowered.startswith(prefix):
            raw = raw[len(prefix) :]
            break
    raw = raw.removesuffix(".pdf").strip("/")
    for pattern in (_NEW_STYLE, _OLD_STYLE):
        m = pattern.match(raw)
        if m:
            version = m.group("v")
            return ArxivId(m.group("id"), int(version) if version else None)
    raise ValueError(
        f"{value!r} is not an arXiv identifier; expected a new-style id such as 2104.12255 "
        "(optionally with a version, 2104.12255v1) or an old-style id such as astro-ph/0601001"
    )


def arxiv_iri(value: str) -> NamedNode:
    return parse_arxiv_id(value).iri


#: What someone means as an arXiv id even when it is mistyped: "2501.0000x", "arXiv:2501.1",
#: "2501.00001v", "cs/01234". Such a value is refused, never taken for a title.
_ARXIV_LIKE = re.compile(r"^(?:arxiv:\s*)?(?:\d{4}\.[0-9a-z]+(?:v\w*)?|[a-z][a-z\-]*(?:\.[a-z]{2})?/\d+\w*)$",
                         re.IGNORECASE)


def looks_like_arxiv_id(value: str) -> bool:
    """Whether ``value`` is written as an arXiv id (well-formed or not)."""
    return bool(_ARXIV_LIKE.match(value.strip()))


def paper_label(iri: str, title: str | None = None) -> str:
    """How a paper is named to a person: its title, else its arXiv id (``arXiv:2501.00001``)
    or DOI (``doi:10.1145/...``), else its catalog key; never a bare IRI when an id says more."""
    if title:
        return title
    for prefix in ("https://arxiv.org/abs/", "http://arxiv.org/abs/"):
        if iri.startswith(prefix):
            return "arXiv:" + iri[len(prefix):]
    for prefix in ("https://doi.org/", "http://doi.org/"):
        if iri.startswith(prefix):
            return "doi:" + iri[len(prefix):]
    if iri.startswith(ID.base + "paper/"):
        return iri[len(ID.base + "paper/"):]
    return iri


def normalize_doi(value: str) -> str:
    doi = value.strip()
    for prefix in ("https://doi.org/", "http://doi.org/", "https://dx.doi.org/", "doi:"):
        if doi.lower().startswith(prefix):
            doi = doi[len(prefix) :]
            break
    if not doi.startswith("10.") or "/" not in doi:
        raise ValueError(f"{value!r} is not a DOI; expected something like 10.1145/3503221.3508418")
    return doi.lower()


def doi_iri(value: str) -> NamedNode:
    return NamedNode("https://doi.org/" + normalize_doi(value))


_GITHUB_URL = re.compile(r"^(?:https?://)?(?:www\.)?github\.com/", re.IGNORECASE)
_OWNER_NAME = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


def parse_github_repo(value: str) -> tuple[str, str]:
    """``owner/name`` or a github.com URL → (owner, name), case preserved."""
    raw = _GITHUB_URL.sub("", value.strip()).removesuffix("/").removesuffix(".git")
    raw = "/".join(raw.split("/")[:2])
    if not _OWNER_NAME.match(raw):
        raise ValueError(f"{value!r} is not a GitHub repository; expected owner/name")
    owner, name = raw.split("/")
    return owner, name


def repo_iri(value: str) -> NamedNode:
    """A repository IRI: lower-cased github.com URL, or the URL itself elsewhere."""
    if _GITHUB_URL.match(value.strip()) or _OWNER_NAME.match(value.strip()):
        owner, name = parse_github_repo(value)
        return NamedNode(f"https://github.com/{owner.lower()}/{name.lower()}")
    if value.startswith(("https://", "http://")):
        return NamedNode(value.rstrip("/"))
    raise ValueError(f"{value!r} is neither owner/name nor a repository URL")


def slugify(value: str) -> str:
    """ASCII slug; names with no ASCII letters get a short stable hash instead."""
    ascii_text = unicodedata.normalize("NFKD", value).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    if not slug:
        slug = "x-" + hashlib.sha1(value.encode()).hexdigest()[:10]
    return slug


def technique_iri(slug: str) -> NamedNode:
    return ID["technique/" + slug]


def category_iri(slug: str) -> NamedNode:
    return ID["category/" + slug]


def person_iri(name: str) -> NamedNode:
    return ID["person/" + slugify(name)]


def org_iri(name: str) -> NamedNode:
    return ID["org/" + slugify(name)]


def status_iri(status: str) -> NamedNode:
    """Reading statuses: ``to-read``, ``reading``, ``read``, ``skipped`` or any custom one."""
    return ID["status/" + slugify(status)]


def paper_iri(*, arxiv: str | None = None, doi: str | None = None, key: str | None = None) -> NamedNode:
    """The IRI of a paper: arXiv first, then DOI, then our own slug."""
    if arxiv:
        return arxiv_iri(arxiv)
    if doi:
        return doi_iri(doi)
    if key:
        return ID["paper/" + slugify(key)]
    raise ValueError("a paper needs an arXiv id, a DOI or a key")


def paper_link(arxiv: str | None, doi: str | None, otherwise: str) -> str:
    """Where a reader opens a paper: its arXiv page, its DOI, else ``otherwise`` (a page, the IRI)."""
    if arxiv:
        return f"https://arxiv.org/abs/{arxiv}"
    if doi:
        return f"https://doi.org/{doi}"
    return otherwise


def skolem(*parts: str) -> NamedNode:
    """A deterministic skolem IRI (RDF 1.1 §3.5) standing in for a blank node."""
    digest = hashlib.sha1("\x1f".join(parts).encode()).hexdigest()[:20]
    return NamedNode(f"{BASE}.well-known/genid/{digest}")
