"""What ``kg refresh`` runs: the incremental ingests the reader has set up, read from a TOML
file of theirs (``~/.config/techkg/refresh.toml``, or ``$KG_REFRESH_CONFIG``, or ``--config``).

A file the reader writes (``kg refresh --init`` writes a commented one to start from), not
a graph: it holds where to fetch from and how, which is configuration rather than
knowledge, and it stays readable and editable by hand and in version control. Each table
is one source, run in this order; a source left out is not run:

    [arxiv]                      # the OAI-PMH harvest of chosen sets, from the last datestamp
    sets = ["cs:cs:LG", "cs:cs:CL", "cs:cs:DC"]
    metadata_prefix = "arXivRaw" # or "oai_dc"
    first_from = "2026-01-01"    # where a set harvested for the first time starts (default: 7 days ago)
    delay = 3.0                  # seconds between requests (arXiv's terms ask for 3)

    [citations]                  # who cites the papers of the techniques you follow, what they cite
    max_per_paper = 200
    recommendations = true

    [github]                     # every repository the graph links

    [zotero]
    library = "user:123456"      # or "group:..."
    mode = "sync"                # both ways; "pull" reads the library only

Every table also takes ``api_url`` (a mirror or a local server) and ``timeout`` (seconds per
request). Keys and tokens never go in the file: they come from the environment or the
keyring, as for the ``kg ingest`` and ``kg sync`` commands.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kg.errors import KGError

__all__ = ["SOURCES", "RefreshConfig", "SourceConfig", "config_path", "load_config", "template"]

#: The sources, in the order kg refresh runs them.
SOURCES = ("arxiv", "citations", "github", "zotero")
_KEYS: dict[str, dict[str, type | tuple[type, ...]]] = {
    "arxiv": {"sets": list, "metadata_prefix": str, "first_from": str, "delay": (int, float)},
    "citations": {"max_per_paper": int, "recommendations": bool, "references": bool, "citations": bool,
                  "delay": (int, float)},
    "github": {"contributors": bool, "max_wait": (int, float)},
    "zotero": {"library": str, "mode": str, "conflict": str, "status_format": str},
}
_COMMON: dict[str, type | tuple[type, ...]] = {"api_url": str, "timeout": (int, float)}


@dataclass(frozen=True)
class SourceConfig:
    name: str
    options: dict[str, Any] = field(default_factory=dict)

    def get(self, key: str, default: Any = None) -> Any:
        return self.options.get(key, default)


@dataclass(frozen=True)
class RefreshConfig:
    path: Path
    sources: tuple[SourceConfig, ...]

    def names(self) -> list[str]:
        return [s.name for s in self.sources]


def config_path(given: Path | None = None) -> Path:
    """The refresh configuration: ``given``, else ``$KG_REFRESH_CONFIG``, else the user's
    configuration directory (``~/.config/techkg/refresh.toml``)."""
    if given is not None:
        return given.expanduser()
    override = os.environ.get("KG_REFRESH_CONFIG")
    if override:
        return Path(override).expanduser()
    from platformdirs import user_config_path

    return user_config_path("techkg", appauthor=False) / "refresh.toml"


def _error(path: Path, message: str) -> KGError:
    return KGError(f"{path}: {message}", hint="Fix the file (kg refresh --init --force writes a fresh commented one "
                                              "to start from), or name another with --config.")


def load_config(path: Path) -> RefreshConfig:
    """The sources the file at ``path`` sets up, checked: an unknown source or option, or a
    value of the wrong type, is an error naming it."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise KGError(f"there is no refresh configuration at {path}",
                      hint="Write one with kg refresh --init (then edit it), or name one with --config.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise _error(path, f"cannot be read ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise _error(path, f"is not valid TOML ({exc})") from None
    unknown = [name for name in data if name not in SOURCES]
    if unknown:
        raise _error(path, f"[{unknown[0]}] is no source kg refresh knows (it knows {', '.join(SOURCES)})")
    sources = []
    for name in SOURCES:
        if name not in data:
            continue
        table = data[name]
        if not isinstance(table, dict):
            raise _error(path, f"{name} must be a table ([{name}])")
        allowed = {**_COMMON, **_KEYS[name]}
        for key, value in table.items():
            if key not in allowed:
                raise _error(path, f"[{name}] has no option {key!r} (it takes {', '.join(sorted(allowed))})")
            kind = allowed[key]
            if isinstance(value, bool) and kind in ((int, float), int):
                raise _error(path, f"[{name}] {key} must be a number, not {value!r}")
            if not isinstance(value, kind):
                raise _error(path, f"[{name}] {key} has the wrong type ({type(value).__name__})")
        if name == "arxiv" and not all(isinstance(s, str) and s for s in table.get("sets", [])):
            raise _error(path, "[arxiv] sets must be a list of OAI-PMH set names, like \"cs:cs:LG\"")
        if name == "zotero" and "library" not in table:
            raise _error(path, "[zotero] needs library = \"user:<userID>\" (or \"group:<groupID>\")")
        if name == "zotero" and table.get("mode", "sync") not in ("sync", "pull"):
            raise _error(path, "[zotero] mode is \"sync\" (both ways) or \"pull\" (read only)")
        sources.append(SourceConfig(name, dict(table)))
    if not sources:
        raise _error(path, f"sets up no source: add a table for at least one of {', '.join(SOURCES)}")
    return RefreshConfig(path, tuple(sources))


def template() -> str:
    """A commented configuration to start from (``kg refresh --init``)."""
    return """# kg refresh runs the sources below, in this order, under one lock: a source that fails
# leaves its graph as it was and the others still run. Remove a table to leave its source
# out. Keys and tokens never go here: S2_API_KEY, GITHUB_TOKEN, ZOTERO_API_KEY (or the keyring).

# The arXiv OAI-PMH harvest of these sets, each from where its last harvest stopped.
[arxiv]
sets = ["cs:cs:LG", "cs:cs:CL", "cs:cs:DC"]
metadata_prefix = "arXivRaw"
# first_from = "2026-01-01"   # where a set harvested the first time starts (default: 7 days ago)
# delay = 3.0                 # seconds between requests, as arXiv's terms ask

# Citations of the papers of the techniques you follow (kg follow), from Semantic Scholar.
[citations]
max_per_paper = 200
recommendations = true

# Stars, releases and activity of every repository the graph links.
[github]

# Your Zotero library, both ways (mode = "pull" only reads it).
# [zotero]
# library = "user:123456"
# mode = "sync"
"""
