"""RDF/XML without entity bombs.

pyoxigraph's RDF/XML parser expands the entities a document's DTD declares, nested ones
included: 951 bytes of ``<!ENTITY>`` declarations that refer to each other become a
3-billion-character literal ("billion laughs"). So every RDF/XML document TechKG reads
is first read by expat (the XML parser of Python's standard library), streamed, with
handlers that refuse

- entities whose text refers to other entities (the nesting that makes a bomb),
- parameter entities, external entities and external DTDs (nothing is fetched), and
- more expanded text than :data:`MAX_EXPANSION` times the document's size;

expat also applies its own amplification limit. Flat internal entities, which
ontology editors such as Protégé write to abbreviate namespaces
(``<!ENTITY owl "http://www.w3.org/2002/07/owl#">``), stay allowed. Only a document
that passes reaches pyoxigraph: :func:`check` before a bulk load, :func:`parse` as a
drop-in for :func:`pyoxigraph.parse`.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any
from xml.parsers import expat

import pyoxigraph as ox

from kg.errors import RDFImportError

__all__ = ["MAX_ENTITIES", "MAX_EXPANSION", "RDFXMLRefused", "check", "check_stream", "parse"]

#: Entity declarations a document may hold.
MAX_ENTITIES = 256
#: Characters of text one entity may stand for.
MAX_ENTITY_CHARS = 4096
#: Expanded text (character data and attribute values) per byte of the document,
#: beyond a first MiB: far above what namespace abbreviations need.
MAX_EXPANSION = 10
_CHUNK = 1 << 16


class RDFXMLRefused(RDFImportError):
    """An RDF/XML document refused before parsing, because of what its DTD declares."""


class _Checker:
    def __init__(self, source: str) -> None:
        self.source = source
        self.read = 0
        self.expanded = 0
        self.entities = 0
        self.parser = expat.ParserCreate(namespace_separator=" ")
        self.parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
        self.parser.StartDoctypeDeclHandler = self._doctype
        self.parser.EntityDeclHandler = self._entity
        self.parser.ExternalEntityRefHandler = self._external
        self.parser.CharacterDataHandler = self._text
        self.parser.StartElementHandler = self._element
        self.parser.buffer_text = True

    def refuse(self, why: str) -> RDFXMLRefused:
        return RDFXMLRefused(
            f"refusing the RDF/XML: {why}", path=self.source,
            hint="Nothing was loaded. Entities that expand into other entities are how a small file becomes "
            "gigabytes (an entity expansion attack); convert the file to N-Triples or Turtle with a tool you "
            "trust, or remove its DOCTYPE.")

    def _doctype(self, name: str, system_id: str | None, public_id: str | None, internal: int) -> None:
        if system_id or public_id:
            raise self.refuse("it refers to an external DTD, which TechKG never fetches")

    def _entity(self, name: str, is_parameter: int, value: str | None, base: str | None, system_id: str | None,
                public_id: str | None, notation: str | None) -> None:
        self.entities += 1
        if is_parameter:
            raise self.refuse(f"it declares the parameter entity %{name};")
        if value is None:
            raise self.refuse(f"it declares the external entity &{name}; (a file or URL to read)")
        if "&" in value or "%" in value:
            raise self.refuse(f"the entity &{name}; refers to other entities")
        if len(value) > MAX_ENTITY_CHARS:
            raise self.refuse(f"the entity &{name}; stands for {len(value):,} characters "
                              f"(at most {MAX_ENTITY_CHARS:,})")
        if self.entities > MAX_ENTITIES:
            raise self.refuse(f"it declares more than {MAX_ENTITIES} entities")

    def _external(self, context: str, base: str | None, system_id: str | None, public_id: str | None) -> int:
        raise self.refuse("it refers to an external entity")

    def _grow(self, size: int) -> None:
        self.expanded += size
        if self.expanded > MAX_EXPANSION * self.read + (1 << 20):
            raise self.refuse(f"its entities expand to more than {MAX_EXPANSION} times its size")

    def _text(self, data: str) -> None:
        self._grow(len(data))

    def _element(self, name: str, attributes: dict[str, str]) -> None:
        self._grow(sum(len(v) for v in attributes.values()))

    def feed(self, data: bytes, final: bool = False) -> None:
        self.read += len(data)
        try:
            self.parser.Parse(data, final)
        except LookupError as exc:  # <?xml ... encoding="..."?> names an encoding Python does not know
            named = str(exc).rpartition(":")[2].strip()
            raise RDFXMLRefused(
                f"the XML declaration names the encoding {named!r}, which is not a known encoding",
                path=self.source, hint="Nothing was loaded. Re-save the file as UTF-8 (encoding=\"UTF-8\"), "
                "or correct the encoding's name in its first line.") from None
        except expat.ExpatError as exc:
            if "amplification" in str(exc) or "entit" in str(exc):
                raise self.refuse(str(exc)) from None
            # Not well-formed XML: pyoxigraph reports it with its own words.
            raise _Malformed() from None


class _Malformed(Exception):
    pass


def check_stream(stream: IO[bytes], *, source: str = "") -> None:
    """Read ``stream`` (RDF/XML) to its end; raise :class:`RDFXMLRefused` if its DTD
    declares what could expand without bound. Malformed XML passes: the RDF parser
    that reads the document next reports it."""
    checker = _Checker(source)
    try:
        while chunk := stream.read(_CHUNK):
            checker.feed(chunk)
        checker.feed(b"", final=True)
    except _Malformed:
        return


def check(path: Path, *, gzipped: bool = False) -> None:
    """:func:`check_stream` on the file at ``path`` (gzip-compressed with ``gzipped``)."""
    import gzip

    stream: IO[bytes] = gzip.open(path, "rb") if gzipped else path.open("rb")  # type: ignore[assignment]
    with stream:
        check_stream(stream, source=str(path))


def parse(data: bytes | IO[bytes], format: ox.RdfFormat, *, source: str = "", **options: Any) -> Iterator[ox.Quad]:
    """:func:`pyoxigraph.parse` that reads RDF/XML only once :func:`check_stream` passed
    it (the document is held in memory for the two reads); other formats pass through."""
    if format != ox.RdfFormat.RDF_XML:
        return ox.parse(data, format=format, **options)
    body = data if isinstance(data, bytes) else data.read()
    check_stream(io.BytesIO(body), source=source)
    return ox.parse(body, format=format, **options)
