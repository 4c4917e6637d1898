"""What an HTTP client did during a run: requests, retries, answers from the cache, waits.

The client (:mod:`ingest.http`) and the cache (:mod:`ingest.cache`) count into one
:class:`HttpStats` each run; sources print it in their summaries.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["HttpStats"]


@dataclass
class HttpStats:
    """What a client did during a run."""

    requests: int = 0
    retries: int = 0
    not_modified: int = 0
    from_cache: int = 0
    bodies: int = 0
    bytes: int = 0
    waited: float = 0.0
    waits: list[float] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"requests": self.requests, "retries": self.retries, "not_modified": self.not_modified,
                "from_cache": self.from_cache, "bodies": self.bodies, "bytes": self.bytes,
                "waited_seconds": round(self.waited, 3)}

    def since(self, before: Mapping[str, Any]) -> dict[str, Any]:
        """The counters accumulated since ``before`` (an earlier :meth:`as_dict`)."""
        now = self.as_dict()
        return {k: round(v - before.get(k, 0), 3) if isinstance(v, float) else v - before.get(k, 0)
                for k, v in now.items()}
