"""A read-only binary stream that hands every chunk it reads to a hook on the way through.

The import and restore paths wrap the files they read to watch the bytes go by (hash them,
count them, scan them for an oversized literal) without copying them; each wrapper is a
:class:`PassThroughReader` that overrides :meth:`PassThroughReader._took`."""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Any, Self

__all__ = ["PassThroughReader"]


class PassThroughReader:
    """A binary stream over ``inner`` whose bytes pass through :meth:`_took` as they are read;
    usable wherever a parser or ``gzip`` wants a readable file."""

    def __init__(self, inner: IO[bytes]) -> None:
        self.inner = inner

    def _took(self, data: bytes) -> bytes:
        """What a subclass does with each chunk read; returns the chunk unchanged."""
        return data

    def read(self, size: int = -1) -> bytes:
        return self._took(self.inner.read(size))

    def readline(self, size: int = -1) -> bytes:
        return self._took(self.inner.readline(size))

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def __iter__(self) -> Iterator[bytes]:
        while line := self.readline():
            yield line

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        self.inner.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
