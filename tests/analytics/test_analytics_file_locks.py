"""Who waits for whom on the analytics file: a write (``kg serve``'s keeper patching the
tables) waits a while for readers to close it, in another process or in this one, and is
refused with the holder named once the wait is over."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from kg.analytics import files
from kg.errors import AnalyticsError

_HOLD = """
import sys, time, duckdb
con = duckdb.connect(sys.argv[1], read_only=True)
print("holding", flush=True)
time.sleep(float(sys.argv[2]))
con.close()
"""


@pytest.fixture
def analytics_file(tmp_path: Path) -> Path:
    path = tmp_path / "s.analytics.duckdb"
    con = files.connect(path, read_only=False)
    con.execute("CREATE TABLE t AS SELECT 1 AS a")
    con.close()
    return path


@contextmanager
def _held_by_another_process(path: Path, seconds: float) -> Iterator[None]:
    with subprocess.Popen([sys.executable, "-c", _HOLD, str(path), str(seconds)], stdout=subprocess.PIPE,
                          text=True) as reader:
        assert reader.stdout is not None and reader.stdout.readline().strip() == "holding"
        try:
            yield
        finally:
            reader.kill()


def test_a_write_waits_for_a_reader_in_another_process_to_close_the_file(analytics_file: Path) -> None:
    with _held_by_another_process(analytics_file, 0.8):
        started = time.monotonic()
        con = files.connect(analytics_file, read_only=False)
        waited = time.monotonic() - started
        con.execute("INSERT INTO t VALUES (2)")
        con.close()
    assert waited > 0.3  # it was held, and the write went on once it was not


def test_a_write_waits_for_a_reader_in_this_process_to_close_the_file(analytics_file: Path) -> None:
    reader = files.connect(analytics_file, read_only=True)
    closer = threading.Timer(0.5, reader.close)
    closer.start()
    try:
        con = files.connect(analytics_file, read_only=False)
        assert con.execute("SELECT count(*) FROM t").fetchone() == (1,)
        con.close()
    finally:
        closer.join()


def test_a_write_still_refused_after_the_wait_names_the_file_in_use(analytics_file: Path, monkeypatch) -> None:
    monkeypatch.setattr(files, "LOCK_WAIT", 0.3)
    with _held_by_another_process(analytics_file, 5), pytest.raises(AnalyticsError) as refused:
        files.connect(analytics_file, read_only=False)
    assert files.IN_USE in refused.value.message and str(analytics_file) in refused.value.message
