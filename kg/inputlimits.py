"""How much a file TechKG reads (``kg import rdf``, ``kg restore``) may grow to, as the HTTP
client bounds a response body (``ingest/http.py``, ``KG_MAX_RESPONSE_MIB``).

- A compressed file (gzip, bzip2, xz) may decompress to at most 100 times its own size
  or 64 MiB, whichever is more: a dump compresses about ten times, a decompression bomb a
  thousand. ``KG_MAX_DECOMPRESSED_MIB`` sets a fixed limit instead.
- A single literal (a string) may be at most 64 MiB (``KG_MAX_LITERAL_MIB``): the parser
  holds each one whole in memory.

Past either limit the read stops with :class:`InputTooLarge`, which names the limit and
how to raise it, before the store is touched.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Any

from kg.errors import RDFImportError

__all__ = ["InputTooLarge", "LimitedReader", "decompressed_limit", "literal_limit"]

_MIB = 1 << 20
DEFAULT_MIB = 64
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
    return _mib("KG_MAX_LITERAL_MIB") or DEFAULT_MIB * _MIB


class LimitedReader:
    """A binary stream (a decompressing one) that raises :class:`InputTooLarge` once more
    than ``limit`` bytes have come out of it."""

    def __init__(self, inner: IO[bytes], limit: int, path: Path) -> None:
        self.inner, self.limit, self.path = inner, limit, path
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

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def __iter__(self) -> LimitedReader:
        return self

    def __next__(self) -> bytes:
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        self.inner.close()

    def __enter__(self) -> LimitedReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
