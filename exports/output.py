"""Writing an export to its path: checked before any work starts, written atomically.

``check_target`` runs before an export is produced, so a bad path fails fast;
``write_output`` writes to a temporary file beside the target and moves it into place,
so a failed export never leaves half a file. Without ``force`` an existing file is
never overwritten, not even one that appeared while the export was running.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

from kg.errors import ExportError

__all__ = ["STDOUT", "check_target", "write_output"]

#: The path that means "write to standard output".
STDOUT = "-"


def check_target(path: Path | str, *, force: bool = False, suffixes: Iterable[str] = (),
                 fmt: str = "", binary: bool = False) -> Path | None:
    """Check that ``path`` can be written; return it resolved, or None for stdout (``-``).

    ``suffixes`` are the usual file endings of the format; a path ending in the suffix
    of another well-known format is refused, as it is almost always a mistake.
    """
    if str(path) == STDOUT:
        if binary:
            raise ExportError(f"{fmt or 'this format'} is binary and cannot be written to the terminal",
                              hint="Give a file name with -o, e.g. -o lineage.png.")
        return None
    target = Path(path).expanduser()
    if target.is_dir():
        raise ExportError(f"{target} is a directory", hint="Give a file name inside it, e.g. -o "
                          f"{target / ('lineage' + next(iter(suffixes), '.out'))}.")
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.exists():
        raise ExportError(f"the directory {parent} does not exist",
                          hint=f"Create it first (mkdir -p {parent}) or write somewhere else.")
    if not parent.is_dir():
        raise ExportError(f"{parent} is not a directory", hint="Give a path whose parent is a directory.")
    if not os.access(parent, os.W_OK):
        raise ExportError(f"the directory {parent} is not writable",
                          hint="Write to a directory you own, or fix its permissions.")
    wanted = tuple(s.lower() for s in suffixes)
    suffix = target.suffix.lower()
    if wanted and suffix and suffix not in wanted and suffix in _KNOWN_SUFFIXES:
        raise ExportError(f"{target.name} ends in {suffix}, but the format is {fmt}",
                          hint=f"Name the file with {' or '.join(wanted)}, or pick the format "
                          f"that matches {suffix}.")
    if target.exists() and not force:
        raise ExportError(f"{target} already exists", hint="Pass --force to overwrite it, or choose another -o path.")
    return target.resolve()


_KNOWN_SUFFIXES = {".graphml", ".gexf", ".dot", ".gv", ".svg", ".png", ".mmd", ".mermaid", ".cyjs",
                   ".html", ".htm", ".jsonld", ".ttl", ".nt", ".nq", ".trig", ".bib", ".pdf", ".jpg",
                   ".jpeg", ".csv", ".xml", ".rdf"}


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_output(path: Path | None, data: bytes, *, force: bool = False) -> int:
    """Write ``data`` to ``path`` (stdout when None) atomically; return the bytes written."""
    if path is None:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return len(data)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o666 & ~_umask())
        if force:
            os.replace(tmp, path)
        else:
            try:
                os.link(tmp, path)  # fails if the file appeared meanwhile: never clobber
            except FileExistsError:
                raise ExportError(f"{path} already exists",
                                  hint="Another program created it while the export ran; pass --force "
                                  "to overwrite it.") from None
            os.unlink(tmp)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return len(data)
