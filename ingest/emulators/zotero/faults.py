"""Faults the Zotero emulator injects on demand (:attr:`ZoteroEmulator.faults`): 429 storms
with ``Retry-After``, ``Backoff`` headers, any status, a racing writer, dropped connections.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ingest.emulators.loopback import FaultQueue

__all__ = ["Faults", "seconds"]


@dataclass
class _Fault:
    kind: str
    matches: Callable[[str, str], bool]
    times: int
    skip: int = 0
    status: int = 0
    body: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    after_apply: bool = True
    action: Callable[[Any], None] | None = None
    seconds: float = 0.0


def _matcher(on: str, path: str | None) -> Callable[[str, str], bool]:
    pattern = re.compile(path) if path else None

    def matches(method: str, request_path: str) -> bool:
        if on == "read" and method != "GET":
            return False
        if on == "write" and method not in ("POST", "PUT", "PATCH", "DELETE"):
            return False
        return pattern is None or bool(pattern.search(request_path))

    return matches


class Faults(FaultQueue[_Fault]):
    """Faults to inject into the next matching requests.

    ``on`` is ``"any"``, ``"read"`` (GET) or ``"write"`` (POST, PUT, PATCH, DELETE);
    ``path`` is a regular expression the request path must contain; ``skip`` lets that
    many matching requests through first.
    """

    def rate_limit(self, times: int = 3, *, retry_after: float = 1, on: str = "any", path: str | None = None,
                   skip: int = 0, message: str = "Rate limit exceeded") -> None:
        """A 429 storm: the next ``times`` matching requests get 429 with ``Retry-After``."""
        self._queue(_Fault("status", _matcher(on, path), times, skip, 429, message,
                         {"Retry-After": seconds(retry_after)}))

    def backoff(self, seconds: float, *, times: int = 1, on: str = "any", path: str | None = None,
                skip: int = 0) -> None:
        """Add ``Backoff: seconds`` to the next ``times`` matching answers."""
        self._queue(_Fault("backoff", _matcher(on, path), times, skip, seconds=seconds))

    def answer(self, status: int, body: str = "", *, times: int = 1, on: str = "any", path: str | None = None,
               skip: int = 0, headers: Mapping[str, str] | None = None) -> None:
        """Answer the next ``times`` matching requests with ``status`` and a text body."""
        self._queue(_Fault("status", _matcher(on, path), times, skip, status, body, dict(headers or {})))

    def drop(self, *, after_apply: bool = True, times: int = 1, on: str = "write", path: str | None = None,
             skip: int = 0) -> None:
        """Close the connection without an answer: after applying the request (the write
        happened but the client never hears of it) or before."""
        self._queue(_Fault("drop", _matcher(on, path), times, skip, after_apply=after_apply))

    def race(self, action: Callable[[Any], None], *, times: int = 1, on: str = "write",
             path: str | None = None, skip: int = 0) -> None:
        """Run ``action`` (another client's change; it is given the emulator) just before the
        next matching request."""
        self._queue(_Fault("race", _matcher(on, path), times, skip, action=action))

    def take(self, method: str, path: str) -> list[_Fault]:
        """The faults that apply to this request (each uses up one of its ``times``)."""
        return self._take(lambda f: f.matches(method, path))


def seconds(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"
