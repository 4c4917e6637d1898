"""Named pause points on the write paths, for crash tests.

The kill tests start a real ``kg`` process with ``KG_PAUSE_AT=NAME`` in its environment;
when the process reaches the point ``NAME`` it prints ``KG_PAUSED NAME`` on stderr and
sleeps, and the test kills it there with SIGKILL, at exactly the moment it wants (after
the snapshot, before the commit, between the commit and publishing the view, ...). With
the variable unset, a pause point costs one dictionary lookup.
"""

from __future__ import annotations

import os
import sys
import time

__all__ = ["pause_point"]


def pause_point(name: str) -> None:
    """Pause here when ``$KG_PAUSE_AT`` names this point (comma-separated names)."""
    wanted = os.environ.get("KG_PAUSE_AT")
    if not wanted or name not in wanted.split(","):
        return
    sys.stderr.write(f"KG_PAUSED {name}\n")
    sys.stderr.flush()
    time.sleep(float(os.environ.get("KG_PAUSE_SECONDS", "600")))
