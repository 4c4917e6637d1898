"""Declared verification of the sandbox contract.

Compared: a sandbox restored from a snapshot against one rebuilt by replaying every
action from the seed: the same observations afterwards, random draws included.
Properties: a fork is isolated from its parent; a paused sandbox refuses to act and,
once resumed, continues as if it had never paused.
"""

from __future__ import annotations

from kernels.agentenv.naive import replay
from kernels.agentenv.sandbox import Paused, Sandbox
from kernels.checks import Check, Outcome, Setting, Verification, count, worst

SEED = 42
BEFORE = ["write a.txt hello", "roll", "append a.txt , world", "roll", "write b.txt 17", "ls"]
AFTER = ["read a.txt", "roll", "append b.txt 4", "roll", "read b.txt", "ls", "roll"]


def _differences(a: list[str], b: list[str]) -> int:
    return sum(x != y for x, y in zip(a, b, strict=True)) + abs(len(a) - len(b))


def restore_matches_replay(s: Setting) -> Outcome:
    box = Sandbox(SEED)
    for action in BEFORE:
        box.step(action)
    restored = Sandbox.restore(box.snapshot())
    replayed, _ = replay(SEED, BEFORE)
    from_snapshot = [restored.step(a) for a in AFTER]
    from_replay = [replayed.step(a) for a in AFTER]
    return count(
        _differences(from_snapshot, from_replay),
        0,
        f"{len(AFTER)} observations after restore equal those after replaying {len(BEFORE)} actions",
    )


def fork_is_isolated(s: Setting) -> Outcome:
    parent, twin = Sandbox(SEED), Sandbox(SEED)
    for action in BEFORE:
        parent.step(action)
        twin.step(action)
    child = parent.fork()
    for action in ("write a.txt overwritten", "roll", "roll", "write c.txt new"):
        child.step(action)
    parent_view = [parent.step(a) for a in AFTER]
    twin_view = [twin.step(a) for a in AFTER]
    return count(
        _differences(parent_view, twin_view) + int("c.txt" in parent.files),
        0,
        "the parent continues exactly like an untouched twin after its fork acted",
    )


def pause_and_resume(s: Setting) -> Outcome:
    box, twin = Sandbox(SEED), Sandbox(SEED)
    for action in BEFORE:
        box.step(action)
        twin.step(action)
    box.pause()
    refused = 0
    try:
        box.step("roll")
    except Paused:
        refused = 1
    box.resume()
    differences = _differences([box.step(a) for a in AFTER], [twin.step(a) for a in AFTER])
    return worst(
        [count(refused, 1, "a paused sandbox refused an action"), count(differences, 0)],
        "refused while paused; identical to a twin after resume",
    )


VERIFICATION = Verification(
    technique="agentenv",
    compares="restoring a snapshot (files, step count, random-generator state) against "
    "replaying every "
    "action from the seed",
    shapes=(f"{len(BEFORE)} actions before the snapshot, {len(AFTER)} after",),
    checks=(
        Check(
            "restore-vs-replay",
            "A restored snapshot continues exactly as a replay from the seed, random draws included.",
            restore_matches_replay,
            tolerance=0.0,
            measure="abs",
        ),
        Check(
            "fork-isolation",
            "Actions in a fork never reach its parent.",
            fork_is_isolated,
            tolerance=0.0,
            measure="abs",
        ),
        Check(
            "pause-resume",
            "A paused sandbox refuses to act and resumes deterministically.",
            pause_and_resume,
            tolerance=0.0,
            measure="abs",
        ),
    ),
)
