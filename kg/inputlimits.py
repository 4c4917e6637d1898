"""How much a file TechKG reads (``kg import rdf``, ``kg restore``) may grow to, as the HTTP
client bounds a response body (``ingest/http.py``, ``KG_MAX_RESPONSE_MIB``).

- A compressed file (gzip, bzip2, xz) may decompress to at most 100 times its own size
  or 64 MiB, whichever is more: a dump compresses about ten times, a decompression bomb a
  thousand. ``KG_MAX_DECOMPRESSED_MIB`` sets a fixed limit instead.
- A single literal (a string) may be at most 16 MiB (``KG_MAX_LITERAL_MIB`` lowers it):
  the parser holds each one whole in memory, and pyoxigraph's own parsers stop at 16 MiB
  for one token (a MemoryError, turned into the same message by :func:`parser_gave_up`).

Past either limit the read stops with :class:`InputTooLarge`, which names the limit and
how to raise it, before the store is touched.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import IO

from kg.errors import RDFImportError
from kg.passthrough import PassThroughReader

__all__ = ["InputTooLarge", "LimitedReader", "LiteralGuard", "decompressed_limit", "guarded", "literal_limit",
           "parser_gave_up", "syntax_kind"]

_MIB = 1 << 20
DEFAULT_MIB = 64
LITERAL_MIB = 16
RATIO = 100


class InputTooLarge(RDFImportError):
    """A file grew past one of the input limits while it was read."""


def _mib(name: str) -> int | None:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        raise RDFImportError(f"{name}={raw!r} is not a number of MiB", hint=f"Set {name} to a number, e.g. 512.") \
            from None
    if value <= 0:
        raise RDFImportError(f"{name}={raw!r} must be more than 0", hint=f"Set {name} to a number, e.g. 512.")
    return int(value * _MIB)


def decompressed_limit(path: Path) -> int:
    """The most bytes the compressed file ``path`` may decompress to."""
    fixed = _mib("KG_MAX_DECOMPRESSED_MIB")
    if fixed is not None:
        return fixed
    try:
        size = path.stat().st_size
    except OSError:
        size = 0
    return max(DEFAULT_MIB * _MIB, RATIO * size)


def literal_limit() -> int:
    """The most bytes one literal may hold."""
    return _mib("KG_MAX_LITERAL_MIB") or LITERAL_MIB * _MIB


class LimitedReader(PassThroughReader):
    """A binary stream (a decompressing one) that raises :class:`InputTooLarge` once more
    than ``limit`` bytes have come out of it."""

    def __init__(self, inner: IO[bytes], limit: int, path: Path) -> None:
        super().__init__(inner)
        self.limit, self.path = limit, path
        self.done = 0

    def _took(self, data: bytes) -> bytes:
        self.done += len(data)
        if self.done > self.limit:
            raise InputTooLarge(
                f"it decompresses to more than {self.limit / _MIB:,.0f} MiB (about {RATIO} times its size, or "
                f"{DEFAULT_MIB} MiB): it looks like a decompression bomb", path=str(self.path),
                hint="Nothing was changed in the store. If the file is genuine, raise the limit with "
                "KG_MAX_DECOMPRESSED_MIB=SIZE (in MiB), or decompress it yourself first.")
        return data

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:  # never read a whole bomb at once
            out = bytearray()
            while chunk := self.read(1 << 20):
                out += chunk
            return bytes(out)
        return self._took(self.inner.read(size))

    def readline(self, size: int = -1) -> bytes:
        return self._took(self.inner.readline(size if size is not None and size >= 0 else self.limit + 1))


#: What each syntax's strings look like to :class:`LiteralGuard`.
_LINES, _TURTLE, _JSON, _XML = "lines", "turtle", "json", "xml"
_OUT_TURTLE = re.compile(rb"#|<|\"\"\"|'''|\"|'")
_OUT_JSON = re.compile(rb"\"")
_IRI_END = re.compile(rb"[>\s\"'<{}]")
_LINE_END = re.compile(rb"[\r\n]")
_STRING_END = {d: re.compile(rb"\\|" + re.escape(d) + (rb"|[\r\n]" if len(d) == 1 else b""))
               for d in (b'"', b"'", b'"""', b"'''")}


def syntax_kind(fmt_name: str) -> str:
    """How :class:`LiteralGuard` reads a pyoxigraph ``RdfFormat`` name."""
    return {"N-Triples": _LINES, "N-Quads": _LINES, "JSON-LD": _JSON, "RDF/XML": _XML}.get(fmt_name, _TURTLE)


class LiteralGuard(PassThroughReader):
    """A binary stream that passes its bytes through unchanged while it reads them as the
    syntax ``kind`` does (strings, their escapes, comments, IRIs), and raises
    :class:`InputTooLarge` as soon as one literal grows past ``limit`` bytes: before a
    parser holds it. N-Triples and N-Quads are bounded by their longest line (a literal
    never spans lines there); RDF/XML by the longest text between two tags (or CDATA)."""

    def __init__(self, inner: IO[bytes], kind: str, limit: int, path: Path) -> None:
        super().__init__(inner)
        self.kind, self.limit, self.path = kind, limit, path
        self.mode = "out"
        self.delim = b""
        self.length = 0  # bytes of the current literal (or line, or text) so far
        self.escape = False
        self.carry = b""

    def _refuse(self) -> InputTooLarge:
        return InputTooLarge(
            f"it holds a literal longer than {self.limit / _MIB:,.0f} MiB", path=str(self.path),
            hint="Nothing was changed in the store. A literal that large is held whole in memory while it is "
            "read; raise the limit with KG_MAX_LITERAL_MIB=SIZE (in MiB) if the file is genuine.")

    def _grow(self, size: int) -> None:
        self.length += size
        if self.length > self.limit:
            raise self._refuse()

    def _scan(self, data: bytes) -> None:
        if self.kind == _LINES:
            parts = data.split(b"\n")
            self._grow(len(parts[0]))
            if len(parts) > 1:
                if max(map(len, parts[1:])) > self.limit:
                    raise self._refuse()
                self.length = len(parts[-1])
            return
        if self.kind == _XML:
            self._scan_xml(data)
            return
        self._scan_strings(data)

    def _scan_xml(self, data: bytes) -> None:
        pos = 0
        while pos < len(data):
            if self.mode == "cdata":
                end = data.find(b"]]>", pos)
                if end < 0:
                    self._grow(len(data) - pos)
                    return
                self._grow(end - pos)
                self.mode, self.length, pos = "out", 0, end + 3
                continue
            start = data.find(b"<", pos)
            if start < 0:
                self._grow(len(data) - pos)
                return
            self._grow(start - pos)
            self.length = 0
            if data.startswith(b"<![CDATA[", start):
                self.mode, pos = "cdata", start + 9
            else:
                pos = start + 1

    def _scan_strings(self, data: bytes) -> None:
        data, self.carry = self.carry + data, b""
        pos, size = 0, len(data)
        out = _OUT_JSON if self.kind == _JSON else _OUT_TURTLE
        while pos < size:
            if self.escape:
                self.escape = False
                self._grow(1)
                pos += 1
                continue
            if self.mode == "string":
                end = _STRING_END[self.delim].search(data, pos)
                if end is None:
                    keep = len(self.delim) - 1  # a closing """ may straddle two reads
                    cut = max(pos, size - keep) if keep and data.endswith(self.delim[:1]) else size
                    self._grow(cut - pos)
                    self.carry = data[cut:]
                    return
                self._grow(end.start() - pos)
                if end.group() == b"\\":
                    self.escape, pos = True, end.end()
                    self._grow(1)
                    continue
                self.mode, self.length, pos = "out", 0, end.end()  # closed (or, at a newline, malformed)
                continue
            if self.mode == "comment":
                end = _LINE_END.search(data, pos)
                if end is None:
                    return
                self.mode, pos = "out", end.end()
                continue
            if self.mode == "iri":
                end = _IRI_END.search(data, pos)
                if end is None:
                    return
                self.mode, pos = "out", end.end() if end.group() == b">" else end.start()
                continue
            found = out.search(data, pos)
            if found is None:
                if self.kind != _JSON and data.endswith((b'"', b"'")):  # an opening """ may straddle reads
                    self.carry = data[-2:] if data[-2:-1] == data[-1:] else data[-1:]
                return
            token = found.group()
            if token == b"#":
                self.mode = "comment"
            elif token == b"<":
                self.mode = "iri"
            else:
                if len(token) == 1 and found.end() >= size - 1 and self.kind != _JSON:
                    self.carry = data[found.start():]  # "" or " at the end: maybe the start of """
                    return
                self.mode, self.delim, self.length = "string", token, 0
            pos = found.end()

    def _took(self, data: bytes) -> bytes:
        self._scan(data)
        return data


def guarded(stream: IO[bytes], path: Path, fmt_name: str, *, compressed: bool) -> IO[bytes]:
    """``stream`` (the file's bytes, decompressed) within both limits."""
    if compressed:
        stream = LimitedReader(stream, decompressed_limit(path), path)  # type: ignore[assignment]
    return LiteralGuard(stream, syntax_kind(fmt_name), literal_limit(), path)  # type: ignore[return-value]


def parser_gave_up(path: Path, exc: MemoryError) -> InputTooLarge:
    """The message for pyoxigraph's own limit: its parsers hold one token (a literal, an IRI)
    in a buffer of at most 16 MiB, and raise MemoryError past it (or when memory runs out)."""
    return InputTooLarge(
        f"it holds a token (a literal or an IRI) too large for the RDF parser ({exc})", path=str(path),
        hint="Nothing was changed in the store. pyoxigraph reads at most 16 MiB in one literal or IRI; split "
        "the value, or leave it out of the file.")
