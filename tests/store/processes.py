"""Real ``kg`` processes for the store tests: started, paused at a named point
(``kg.pauses``), killed with SIGKILL, or run to the end."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

KG = Path(sys.executable).with_name("kg")


@dataclass
class KgProcess:
    proc: subprocess.Popen[str]
    lines: queue.Queue[str | None] = field(default_factory=queue.Queue)
    stderr: list[str] = field(default_factory=list)
    pump: threading.Thread | None = None

    def _close(self) -> None:
        if self.pump is not None:
            self.pump.join(timeout=30)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()

    def wait_for(self, text: str, timeout: float = 120) -> None:
        """Read stderr until a line contains ``text``; fail if the process ends first."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                break
            if line is None:
                raise AssertionError(f"kg ended ({self.proc.wait()}) before {text!r}:\n" + "".join(self.stderr))
            if text in line:
                return
        raise AssertionError(f"no {text!r} within {timeout} s:\n" + "".join(self.stderr))

    def kill(self) -> None:
        """SIGKILL: no cleanup of any kind runs in the process."""
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=60)
        self._close()

    def finish(self, timeout: float = 300) -> tuple[int, str, str]:
        assert self.proc.stdout is not None
        out = self.proc.stdout.read()
        self.proc.wait(timeout=timeout)
        self._close()
        return self.proc.returncode, out, "".join(self.stderr)


def start_kg(*args: str, store: Path | str, pause_at: str | None = None,
             env: dict[str, str] | None = None) -> KgProcess:
    full_env = {**os.environ, "COLUMNS": "200", "KG_STORE": str(store), **(env or {})}
    if pause_at:
        full_env["KG_PAUSE_AT"] = pause_at
    proc = subprocess.Popen([str(KG), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=full_env)
    started = KgProcess(proc)

    def pump() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            started.stderr.append(line)
            started.lines.put(line)
        started.lines.put(None)

    started.pump = threading.Thread(target=pump, daemon=True)
    started.pump.start()
    return started


def kill_at(point: str, *args: str, store: Path | str, env: dict[str, str] | None = None) -> str:
    """Run ``kg ARGS`` until it reaches ``point``, SIGKILL it there; return its stderr."""
    process = start_kg(*args, store=store, pause_at=point, env=env)
    try:
        process.wait_for(f"KG_PAUSED {point}")
    finally:
        process.kill()
    return "".join(process.stderr)
