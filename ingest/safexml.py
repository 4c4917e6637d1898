"""Safe XML parsing for answers from the network: no DTDs, no entity expansion, no
external entities, no network access, and a clear error for anything malformed.

arXiv's Atom feeds and OAI-PMH pages never carry a document type declaration, so any
answer that declares one is refused before a parser sees it: that rules out entity
expansion ("billion laughs") and external entities (``file:///etc/passwd``) whatever
the parser. :func:`parse_lxml` then parses strictly with lxml (fast, for Atom feeds);
:func:`parse_defused` uses defusedxml's ElementTree (OAI-PMH pages).
"""

from __future__ import annotations

import re
from typing import Any
from xml.etree.ElementTree import Element, ParseError

import defusedxml
import defusedxml.ElementTree as defused_et
from lxml import etree

from kg.errors import IngestError

__all__ = ["parse_defused", "parse_lxml", "refuse_dtd"]

_PROLOG = re.compile(rb"\A(?:\xef\xbb\xbf)?\s*(?:<\?[^>]*\?>\s*|<!--.*?-->\s*)*", re.S)
_LXML_PARSER_OPTIONS: dict[str, Any] = {
    "resolve_entities": False, "no_network": True, "load_dtd": False, "dtd_validation": False,
    "huge_tree": False, "recover": False, "remove_blank_text": False,
}


def refuse_dtd(body: bytes, *, source: str, url: str) -> None:
    """Raise :class:`IngestError` when ``body`` declares a DTD (or any entity)."""
    prolog_end = _PROLOG.match(body)
    rest = body[prolog_end.end() if prolog_end else 0:][:64].lstrip()
    if rest[:9].upper() == b"<!DOCTYPE" or b"<!ENTITY" in body[:65536]:
        raise IngestError(
            f"{source}: the XML from {url} declares a DTD or entities; refusing to parse it",
            source=source, url=url,
            hint="arXiv never sends a document type declaration: --api-url may point at something "
                 "that is not the API, or the answer was tampered with. Nothing was written.")


def _malformed(source: str, url: str, detail: str) -> IngestError:
    return IngestError(
        f"{source}: the XML from {url} is malformed or truncated ({detail})", source=source, url=url,
        hint="Run again later; if it persists, the API (or --api-url) is not answering with XML. "
             "Nothing was written.")


def parse_lxml(body: bytes, *, source: str, url: str) -> etree._Element:
    """Strict, safe lxml parse of ``body``; the root element."""
    refuse_dtd(body, source=source, url=url)
    try:
        return etree.fromstring(body, etree.XMLParser(**_LXML_PARSER_OPTIONS))
    except etree.XMLSyntaxError as exc:
        raise _malformed(source, url, str(exc)) from None


def parse_defused(body: bytes, *, source: str, url: str) -> Element:
    """defusedxml ElementTree parse of ``body`` (DTDs, entities and external references
    forbidden); the root element."""
    refuse_dtd(body, source=source, url=url)
    try:
        root: Element = defused_et.fromstring(body, forbid_dtd=True, forbid_entities=True, forbid_external=True)
        return root
    except defusedxml.DefusedXmlException as exc:
        raise IngestError(f"{source}: refusing unsafe XML from {url}: {exc}", source=source, url=url,
                          hint="Nothing was written. Check --api-url.") from None
    except ParseError as exc:
        raise _malformed(source, url, str(exc)) from None
