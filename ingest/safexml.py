"""Safe XML parsing for answers from the network: no DTDs, no entity expansion, no
external entities, no network access, and a clear error for anything malformed.

arXiv's Atom feeds and OAI-PMH pages never carry a document type declaration, so any
answer that declares one is refused, and it is the XML parser itself that says whether
one is there (a text scan is fooled by UTF-16, or by a processing instruction holding
``>``): that rules out entity expansion ("billion laughs") and external entities
(``file:///etc/passwd``).

- :func:`parse_lxml` parses strictly with lxml (fast, for Atom feeds), with entities
  left unexpanded, no DTD loaded and no network, then refuses a document whose parse
  found a DTD;
- :func:`parse_defused` uses defusedxml's ElementTree (OAI-PMH pages), whose expat
  parser stops at the first DTD, entity or external reference.
"""

from __future__ import annotations

from typing import Any
from xml.etree.ElementTree import Element, ParseError

import defusedxml
import defusedxml.ElementTree as defused_et
from lxml import etree

from kg.errors import IngestError

__all__ = ["parse_defused", "parse_lxml"]

_LXML_PARSER_OPTIONS: dict[str, Any] = {
    "resolve_entities": False, "no_network": True, "load_dtd": False, "dtd_validation": False,
    "huge_tree": False, "recover": False, "remove_blank_text": False,
}


def _unsafe(source: str, url: str, detail: str) -> IngestError:
    return IngestError(
        f"{source}: the XML from {url} declares a DTD or entities ({detail}); refusing to parse it",
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
    try:
        root = etree.fromstring(body, etree.XMLParser(**_LXML_PARSER_OPTIONS))
    except etree.XMLSyntaxError as exc:
        raise _malformed(source, url, str(exc)) from None
    info = root.getroottree().docinfo
    if info.internalDTD is not None or info.externalDTD is not None or info.doctype:
        raise _unsafe(source, url, info.doctype or "a document type declaration")
    return root


def parse_defused(body: bytes, *, source: str, url: str) -> Element:
    """defusedxml ElementTree parse of ``body`` (DTDs, entities and external references
    forbidden); the root element."""
    try:
        root: Element = defused_et.fromstring(body, forbid_dtd=True, forbid_entities=True, forbid_external=True)
        return root
    except defusedxml.DefusedXmlException as exc:
        raise _unsafe(source, url, str(exc)) from None
    except ParseError as exc:
        raise _malformed(source, url, str(exc)) from None
