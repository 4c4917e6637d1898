"""Scratch folders (kg.scratch): removed after use, and by the next one of their kind when
their process was killed; never while their process lives."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from kg import scratch

_HOLD = """
import sys, time
from pathlib import Path
from kg import scratch
with scratch.folder("kg-test-", Path(sys.argv[1])) as folder:
    (folder / "work.txt").write_text("half done")
    print(folder, flush=True)
    time.sleep(60)
"""


def _holder(parent: Path) -> tuple[subprocess.Popen[str], Path]:
    """A process inside a scratch folder of ``parent``, and the folder."""
    process = subprocess.Popen([sys.executable, "-c", _HOLD, str(parent)], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    return process, Path(process.stdout.readline().strip())


def _kill(process: subprocess.Popen[str]) -> None:
    os.kill(process.pid, signal.SIGKILL)
    process.communicate()


def test_a_scratch_folder_is_removed_after_its_block(tmp_path: Path) -> None:
    with scratch.folder("kg-test-", tmp_path) as folder:
        (folder / "lots.bin").write_bytes(b"x" * 100)
        assert folder.parent == tmp_path and folder.name.startswith("kg-test-")
    assert not folder.exists()


def test_the_folder_of_a_killed_process_is_removed_by_the_next_one_of_its_kind(tmp_path: Path) -> None:
    process, left = _holder(tmp_path)
    _kill(process)
    assert (left / "work.txt").exists()  # a kill leaves the folder behind
    other = tmp_path / "other-kind"
    other.mkdir()
    with scratch.folder("kg-test-", tmp_path) as folder:
        assert not left.exists()
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted([folder.name, "other-kind"])


def test_the_folder_of_a_live_process_is_kept(tmp_path: Path) -> None:
    process, held = _holder(tmp_path)
    try:
        assert scratch.sweep("kg-test-", tmp_path) == 0
        with scratch.folder("kg-test-", tmp_path):
            assert (held / "work.txt").read_text() == "half done"
    finally:
        _kill(process)
    assert scratch.sweep("kg-test-", tmp_path) == 1
    assert not held.exists()


def test_a_folder_without_a_lock_is_kept_until_it_is_a_day_old(tmp_path: Path) -> None:
    young, old = tmp_path / "kg-test-young", tmp_path / "kg-test-old"
    young.mkdir()
    old.mkdir()
    day_ago = time.time() - scratch.UNOWNED_AGE - 60
    os.utime(old, (day_ago, day_ago))
    assert scratch.sweep("kg-test-", tmp_path) == 1
    assert young.exists() and not old.exists()


def test_a_link_named_like_a_scratch_folder_is_never_followed(tmp_path: Path) -> None:
    target = tmp_path / "precious"
    target.mkdir()
    (target / "data.txt").write_text("keep")
    day_ago = time.time() - scratch.UNOWNED_AGE - 60
    os.utime(target, (day_ago, day_ago))
    (tmp_path / "kg-test-link").symlink_to(target)
    assert scratch.sweep("kg-test-", tmp_path) == 0
    assert (target / "data.txt").read_text() == "keep"


def test_a_folder_for_the_process_is_removed_when_it_exits_with_its_lock_closed(tmp_path: Path) -> None:
    code = ("from kg import scratch\n"
            "path = scratch.for_process('kg-test-')\n"
            "(path / 'work.txt').write_text('x')\n"
            "print(path)\n")
    done = subprocess.run([sys.executable, "-X", "dev", "-c", code], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "TMPDIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()).parent == tmp_path and not Path(done.stdout.strip()).exists()
    assert "ResourceWarning" not in done.stderr and list(tmp_path.iterdir()) == []
