"""Scratch folders: a command's work files, removed when it ends, and by the next command
when it was killed.

``tempfile.TemporaryDirectory`` removes its folder on every exit Python sees, but not when
the process is killed (SIGKILL, the out-of-memory killer, a lost machine): at 700k papers
``kg link`` leaves hundreds of megabytes of texts and links behind, every time. So each
folder made here holds a lock (``flock`` on its ``.owner`` file) for as long as its
process lives, and making a folder first removes every folder of the same kind (its name
prefix, in the same parent) whose lock is free: its process is gone. A lock works across
PID namespaces and survives PID reuse, where a recorded PID would not.

A folder of that kind without a lock file is one being made this instant, or one that an
older version left; it is removed only once it is a day old (:data:`UNOWNED_AGE`). Folders
of other users, and links, are never touched.
"""

from __future__ import annotations

import atexit
import fcntl
import glob
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

__all__ = ["OWNER", "UNOWNED_AGE", "folder", "for_process", "sweep"]

#: The lock file inside each scratch folder, locked by the process that uses the folder.
OWNER = ".owner"
#: How old (seconds) a folder without a lock file must be to be taken for a leftover.
UNOWNED_AGE = 86_400.0


def sweep(prefix: str, parent: Path | None = None) -> int:
    """Remove the folders named ``prefix…`` in ``parent`` (the temporary folder if None)
    whose process is gone; how many were removed."""
    root = Path(parent) if parent is not None else Path(tempfile.gettempdir())
    removed = 0
    now = time.time()
    for name in glob.glob(glob.escape(prefix) + "*", root_dir=root):
        entry = root / name
        try:
            info = entry.lstat()
            if not entry.is_dir() or entry.is_symlink() or info.st_uid != os.getuid():
                continue
            try:
                fh = open(entry / OWNER, "rb")  # noqa: SIM115 - held while the folder goes
            except FileNotFoundError:
                if now - info.st_mtime > UNOWNED_AGE:
                    shutil.rmtree(entry, ignore_errors=True)
                    removed += 1
                continue
            with fh:
                try:
                    fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:  # its process is alive
                    continue
                shutil.rmtree(entry, ignore_errors=True)
                removed += 1
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return removed


def _make(prefix: str, parent: Path | None) -> tuple[Path, IO[bytes]]:
    """A new folder ``prefix…`` in ``parent``, its lock held (by the file returned), after
    the dead ones of its kind are swept. The lock file gets its name only once locked, so
    that a sweep never finds it unlocked while this process lives."""
    sweep(prefix, parent)
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    pending = path / f"{OWNER}.new"
    fh = open(pending, "wb")  # noqa: SIM115 - kept open: it holds the lock
    fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
    os.rename(pending, path / OWNER)
    return path, fh


@contextmanager
def folder(prefix: str, parent: Path | None = None) -> Iterator[Path]:
    """A scratch folder for the ``with`` block (in ``parent``, else the temporary folder),
    removed after it; removed by a later one of its kind if this process is killed."""
    path, fh = _make(prefix, parent)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        fh.close()


def for_process(prefix: str) -> Path:
    """A scratch folder in the temporary folder, kept until this process exits (removed
    then; by a later one of its kind if it is killed)."""
    path, fh = _make(prefix, None)
    atexit.register(_release, path, fh)  # (which holds the lock file open until then)
    return path


def _release(path: Path, fh: IO[bytes]) -> None:
    shutil.rmtree(path, ignore_errors=True)
    fh.close()
