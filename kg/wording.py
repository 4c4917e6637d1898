"""The words TechKG uses for the same things everywhere: the CLI, the web app, analytics.

- A technique's reference-kernel state is one of :class:`KernelState`: ``verified`` and
  ``failing`` (its latest verification run passed or failed), ``not run`` (no run is
  recorded: it has a kernel that was never verified, or the kernels were never recorded in
  this store), ``none`` (a reasoned "no kernel": its record explains why code makes no
  sense).
- How much of a technique's reading is done: :func:`reading_summary`, counted over its
  papers that are on the reading list.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["KERNEL_STATE_MEANINGS", "KernelState", "counted", "kernel_state", "reading_summary"]


def counted(n: int, noun: str, plural: str | None = None, *, grouped: bool = False) -> str:
    """``1 row``, ``2 rows``, ``1 entry`` / ``3 entries`` (give ``plural`` where an "s" is
    wrong); ``grouped`` writes thousands with commas. Every count in TechKG's output is
    written through this, so none says "1 rows"."""
    number = f"{n:,}" if grouped else str(n)
    return f"{number} {noun if n == 1 else plural or noun + 's'}"


class KernelState(StrEnum):
    verified = "verified"
    failing = "failing"
    not_run = "not run"
    none = "none"


KERNEL_STATE_MEANINGS: dict[KernelState, str] = {
    KernelState.verified: "The latest verification run of its reference kernel passed.",
    KernelState.failing: "The latest verification run of its reference kernel failed.",
    KernelState.not_run: "No verification run is recorded: run kg kernels verify.",
    KernelState.none: "No kernel: its record explains why a kernel makes no sense.",
}


def kernel_state(*, form: str | None, latest_passed: bool | None) -> KernelState:
    """The state of a technique whose kernel record has ``form`` (None: no record) and
    whose latest run passed (True), failed (False) or does not exist (None)."""
    if form == "none":
        return KernelState.none
    if latest_passed is None:
        return KernelState.not_run
    return KernelState.verified if latest_passed else KernelState.failing


def reading_summary(read: int, listed: int) -> str:
    """``2 of 3 papers read``, over a technique's papers that are on the reading list."""
    if listed == 0:
        return "no paper on the reading list"
    return f"{read} of {counted(listed, 'paper')} read"
