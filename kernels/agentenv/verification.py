"""Declared verification of the agent environment's contract.

Compared: the persistent-tree environment against a flat-dictionary one written
independently (observations, rewards and the whole file system after every step, on
random episodes); a restored snapshot against the original run and against a replay
from the seed, bit for bit. Properties: episodes forked from one state and stepped in
turn never see each other's writes (each ends exactly as if it had run alone), and the
parent is untouched; the state machine refuses what it must (acting while paused or
done, resuming what runs), a paused episode keeps its state, a snapshot of it restores
paused, and it resumes exactly like an episode that never paused; the task is graded.
"""

from __future__ import annotations

import torch

from kernels.agentenv.env import MAX_STEPS, Env, EnvError, Transition, task_numbers
from kernels.agentenv.naive import FlatEnv, replay, task_files
from kernels.checks import Verification, check
from kernels.measures import Outcome, Setting, count, worst
from kernels.stats import threads_generator

PATHS = ("/out/answer", "/out/tmp", "/scratch/a", "/scratch/b/c", "/scratch/b", "/data/0.txt", "/x", "/scratch")
VERBS = ("write", "write", "append", "append", "cat", "ls", "mkdir", "rm", "mv", "probe")


def agent(gen: torch.Generator, n: int) -> list[str]:
    """A random agent's commands: writes, moves and removals over a few shared paths,
    reads, and probes that draw from the environment's random stream."""

    def pick(options: tuple[str, ...]) -> str:
        return options[int(torch.randint(len(options), (1,), generator=gen))]

    actions = ["mkdir /scratch", "mkdir /scratch/b"][:n]
    for _ in range(n - len(actions)):
        verb, path = pick(VERBS), pick(PATHS)
        text = str(int(torch.randint(1000, (1,), generator=gen)))
        if verb in ("write", "append"):
            actions.append(f"{verb} {path} {text}")
        elif verb == "mv":
            actions.append(f"mv {path} {pick(PATHS)}")
        elif verb == "probe":
            actions.append("probe")
        else:
            actions.append(f"{verb} {path}")
    return actions


def _started(seed: int) -> Env:
    env = Env(seed)
    env.reset()
    return env


def _differences(a: list[Transition], b: list[Transition]) -> int:
    return sum(x != y for x, y in zip(a, b, strict=False)) + abs(len(a) - len(b))


@check("tree-vs-flat", 0.0, measure="abs")
def tree_matches_flat(s: Setting) -> Outcome:
    """The persistent-tree file system gives the same observations, rewards and files
    after every step as a flat dictionary of paths."""
    gen = s.generator(0)
    wrong = steps = 0
    for episode in range(6):
        env, flat = _started(s.seed + episode), FlatEnv(s.seed + episode)
        flat.reset()
        for action in agent(gen, 30):
            t1, t2 = env.step(action), flat.step(action)
            wrong += int(t1 != t2) + int(env.files() != flat.files())
            steps += 1
            if t1.done:
                break
    return count(wrong, 0, f"{steps} steps of 6 random episodes: every observation and file system equal")


@check("restore-bit-for-bit", 0.0, measure="abs")
def restore_bit_for_bit(s: Setting) -> Outcome:
    """A restored snapshot reproduces the original trajectory bit for bit (observations,
    rewards, random draws, step limit), as does a replay from the seed; the snapshot is
    unaffected by what the original did afterwards."""
    gen = s.generator(1)
    # The prefix draws from the random stream, so the snapshot's stream is not the seed's;
    # the suffix runs into the step limit.
    prefix, suffix = [*agent(gen, 10), "probe", "probe"], agent(gen, MAX_STEPS)
    env = _started(s.seed)
    for action in prefix:
        env.step(action)
    snap = env.snapshot()

    def run(e: Env | FlatEnv) -> tuple[list[Transition], dict[str, str], bytes]:
        out = []
        for action in suffix:
            out.append(e.step(action))
            if out[-1].done:
                break
        return out, e.files(), bytes(e.rng.get_state().tolist())

    original = run(env)
    restored = run(Env.restore(snap))
    again = run(Env.restore(snap))  # the original has moved on since the snapshot
    flat, _ = replay(s.seed, prefix)
    replayed = run(flat)
    wrong = 0
    for other in (restored, again, replayed):
        wrong += _differences(original[0], other[0]) + int(original[1] != other[1]) + int(original[2] != other[2])
    return count(
        wrong,
        0,
        f"{len(original[0])} transitions after the snapshot (to the step limit), random draws "
        "included: original = restored = restored again = replayed from the seed, bit for bit",
    )


@check("fork-isolation", 0.0, measure="abs")
def forks_are_isolated(s: Setting) -> Outcome:
    """Episodes forked from one state and stepped in turn never see each other's writes:
    each ends exactly as if it had run alone, and the parent is untouched."""
    gen = s.generator(2)
    prefix = agent(gen, 8)
    parent = _started(s.seed)
    for action in prefix:
        parent.step(action)
    before = parent.files()
    forks = [parent.fork() for _ in range(4)]
    plans = [agent(gen, 20) for _ in forks]
    logs: list[list[Transition]] = [[] for _ in forks]
    for i in range(20):  # in turn, so a shared directory would leak between them
        for env, plan, log in zip(forks, plans, logs, strict=True):
            if env.phase == "running":
                log.append(env.step(plan[i]))
    wrong = int(parent.files() != before)
    for env, plan, log in zip(forks, plans, logs, strict=True):
        alone, _ = replay(s.seed, prefix)
        solo = [alone.step(a) for a in plan[: len(log)]]
        wrong += _differences(log, solo) + int(env.files() != alone.files())
    distinct = len({tuple(sorted(e.files().items())) for e in forks})
    return count(
        wrong,
        0,
        f"4 forks stepped in turn ({distinct} distinct file systems) each end as if run alone; "
        "the parent's files are unchanged",
    )


def _refuses(action: object) -> int:
    try:
        action()  # type: ignore[operator]
    except EnvError:
        return 0
    return 1


@check("pause-resume", 0.0, measure="abs")
def state_machine(s: Setting) -> Outcome:
    """The state machine refuses to act while paused or done; pausing keeps the state, a
    paused snapshot restores paused, and a resumed episode continues like one that never
    paused; the task is graded."""
    gen = s.generator(3)
    plan = agent(gen, 20)
    env, twin = _started(s.seed), _started(s.seed)
    wrong = _refuses(env.resume) + _refuses(Env(s.seed).pause)
    for action in plan[:10]:
        env.step(action)
        twin.step(action)
    env.pause()
    state = (env.steps, env.files(), bytes(env.rng.get_state().tolist()))
    wrong += _refuses(lambda: env.step("probe")) + _refuses(env.pause) + _refuses(env.reset)
    wrong += int((env.steps, env.files(), bytes(env.rng.get_state().tolist())) != state)
    paused_copy = Env.restore(env.snapshot())
    wrong += int(paused_copy.phase != "paused") + _refuses(lambda: paused_copy.step("probe"))
    env.resume()
    paused_copy.resume()
    rest = plan[10:]
    twin_log = [twin.step(a) for a in rest]
    wrong += _differences([env.step(a) for a in rest], twin_log)
    wrong += _differences([paused_copy.step(a) for a in rest], twin_log)
    # the task: solved, answered wrongly, and run into the step limit
    total = sum(sum(n) for n in task_files(s.seed))
    solved = _started(s.seed)
    solved.step(f"write /out/answer {total}")
    last = solved.step("submit")
    wrong += int(last.reward != 1.0 or not last.done) + _refuses(lambda: solved.step("ls"))
    wrong += _refuses(solved.pause)
    wrong_answer = _started(s.seed)
    wrong_answer.step(f"write /out/answer {total + 1}")
    wrong += int(wrong_answer.step("submit").reward != 0.0)
    limited = _started(s.seed)
    ends = [limited.step("probe").done for _ in range(MAX_STEPS)]
    wrong += int(ends != [False] * (MAX_STEPS - 1) + [True]) + int(limited.phase != "done")
    return count(
        wrong,
        0,
        "refused: resume while running, pause before start, act/pause/reset while paused, act "
        "after the end; paused state unchanged and restored paused; resumed like a twin; "
        f"graded: right 1, wrong 0, done at {MAX_STEPS} steps",
    )


@check("task-and-seed", 0.0, measure="abs")
def task_and_seed(s: Setting) -> Outcome:
    """The task holds three files of 2 to 5 numbers from 0 to 99 (50 seeds), and the
    environment's randomness comes from its seed: the same seed gives the same task and
    probes, another seed others, and torch's global random stream is left alone."""
    wrong = 0
    for seed in range(s.seed, s.seed + 50):
        files = task_numbers(seed)
        wrong += int(len(files) != 3) + sum(not 2 <= len(f) <= 5 or not all(0 <= n < 100 for n in f) for f in files)

    def episode(gen: torch.Generator) -> list[int]:
        env = _started(int(torch.randint(2**31, (1,), generator=gen)))
        probes = [int(env.step("probe").observation.split()[1]) for _ in range(5)]
        return [n for f in task_numbers(env.seed) for n in f] + probes

    seeded = threads_generator(lambda gen: torch.tensor(episode(gen), dtype=torch.float64))
    return worst([count(wrong, 0, f"{wrong} malformed task files over 50 seeds"), seeded], seeded.detail)


VERIFICATION = Verification(
    "agentenv",
    __doc__ or "",
    (tree_matches_flat, restore_bit_for_bit, forks_are_isolated, state_machine, task_and_seed),
    shapes=("6 random episodes of 30 steps", f"snapshots at step 12 and runs to the {MAX_STEPS}-step limit"),
)
