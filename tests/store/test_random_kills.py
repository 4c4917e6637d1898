"""A seeded random run of 200 writes (imports, builds, status changes, backups, restores,
undos, drops), some of them killed with SIGKILL at a named point mid-command: after each
step ``kg validate``'s checks pass, and a killed command leaves the store as it was before
(old) or as the same command run whole leaves it (new), never anything else. The seed is
printed on failure (``KG_KILL_SEED`` repeats a run; ``KG_KILL_STEPS`` changes its length).

Most steps run in this process through the library (what the commands call), so that the
run stays within a few minutes; the killed ones run as real ``kg`` processes, and the same
command runs whole on a copy of the store to give the "new" state."""

from __future__ import annotations

import os
import random
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from kg.store.embedded import OxigraphStore
from tests.store.lists import my_list
from tests.store.processes import start_kg
from tests.store.test_kills import fingerprint

PAPERS = ["GPipe", "Switch Transformers", "ZeRO", "Megatron-LM"]
STATUSES = ["read", "reading", "to-read", "skipped"]
#: Where each command may be killed (kg.pauses points it passes).
POINTS = {
    "set": ["store.before-commit", "store.after-commit"],
    "import": ["store.loaded", "store.before-commit", "store.after-commit", "store.journalled",
               "store.loaded-committed"],
    "reading-list": ["snapshot.taken", "store.before-commit", "store.after-commit"],
    "build": ["snapshot.taken", "store.staged", "store.before-commit", "store.after-commit"],
    "backup": ["quads.writing"],
    "restore": ["snapshot.taken", "store.staged", "store.before-commit", "store.after-commit"],
    "undo": ["snapshot.taken", "store.before-commit", "store.after-commit"],
    "drop": ["snapshot.taken", "store.before-commit", "store.after-commit"],
}


class Run:
    """The files the steps use, and what each step does, in this process or as ``kg``."""

    def __init__(self, tmp: Path, rng: random.Random) -> None:
        self.tmp, self.rng = tmp, rng
        self.dumps = []
        for n, size in enumerate((3, 40, 200)):
            dump = tmp / f"dump{n}.nt"
            dump.write_text("".join(f'<http://example.org/s{i}> <http://example.org/p> "{n}-{i}" .\n'
                                    for i in range(size)), encoding="utf-8")
            self.dumps.append(dump)
        self.lists = [my_list(tmp / f"list{n}.md", read=4 + 3 * n, drop=n) for n in range(3)]
        self.backups: list[Path] = []

    def pick(self) -> tuple[str, tuple[str, ...]]:
        """A step: its kind and the ``kg`` arguments that do it."""
        kind = self.rng.choice(["set", "set", "import", "import", "reading-list", "build", "backup", "restore",
                                "undo", "drop"])
        if kind == "set":
            return kind, ("reading", "set", self.rng.choice(PAPERS), self.rng.choice(STATUSES))
        if kind == "import":
            return kind, ("import", "rdf", str(self.rng.choice(self.dumps)), "--graph",
                          self.rng.choice(["import/a", "import/b"]))
        if kind == "reading-list":
            return kind, ("import", "reading-list", str(self.rng.choice(self.lists)))
        if kind == "build":
            return kind, ("build", "--no-validate") if self.rng.random() < 0.5 else \
                ("build", "--no-validate", "-r", str(self.rng.choice(self.lists)))
        if kind == "backup":
            target = self.tmp / f"backup{len(self.backups)}.nq.gz"
            self.backups.append(target)
            return kind, ("backup", "-o", str(target))
        if kind == "restore" and any(b.exists() for b in self.backups):
            return kind, ("restore", str(self.rng.choice([b for b in self.backups if b.exists()])), "--yes")
        if kind == "drop":
            return kind, ("graph", "drop", self.rng.choice(["import/a", "import/b"]), "--yes")
        return "undo", ("undo", "--yes")

    def in_process(self, store: OxigraphStore, args: tuple[str, ...]) -> None:
        """What ``kg ARGS`` does, through the library."""
        import pyoxigraph as ox

        from kg.backup import backup, restore
        from kg.build import build
        from kg.catalog import load_catalog
        from kg.cli.importing import import_graph
        from kg.errors import KGError
        from kg.reading import import_reading_list, parse_status, resolve_paper, set_status
        from kg.store.base import Activity
        from kg.undo import undo

        try:
            if args[:2] == ("reading", "set"):
                set_status(store, resolve_paper(store, args[2]), parse_status(args[3]))
            elif args[:2] == ("import", "rdf"):
                store.load_file(Path(args[2]), graph=import_graph(args[4]), fmt=ox.RdfFormat.N_TRIPLES,
                                gzipped=False, activity=Activity("kg import rdf", used=[args[2]]))
            elif args[:2] == ("import", "reading-list"):
                import_reading_list(store, Path(args[2]), load_catalog())
            elif args[0] == "build":
                build(store, validate=False, reading_list=Path(args[3]) if len(args) > 3 else None)
            elif args[0] == "backup":
                backup(store, Path(args[2]))
            elif args[0] == "restore":
                restore(store, Path(args[1]), yes=True)
            elif args[0] == "undo":
                undo(store, yes=True)
            elif args[:2] == ("graph", "drop"):
                graph = import_graph(args[2])
                if store.count(graph):
                    with store.transaction(Activity("kg graph drop")) as tx:
                        tx.drop_graph(graph)
        except KGError:
            pass  # nothing to undo, a graph already gone: the command refuses and changes nothing


def _killed(store: Path, args: tuple[str, ...], point: str) -> bool:
    """Run ``kg ARGS`` until ``point`` and SIGKILL it there; False when it ended first."""
    process = start_kg("--wait", "30", *args, store=store, pause_at=point)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = process.lines.get(timeout=120)
        if line is None:
            process.finish()
            return False
        if f"KG_PAUSED {point}" in line:
            process.kill()
            return True
    process.kill()
    raise AssertionError(f"kg {' '.join(args)} did not reach {point} in 120 s")


def _violations(path: Path) -> list[str]:
    """What ``kg validate`` finds (incrementally, as it runs: what a change can affect)."""
    from kg.validate import cache_for, validate_store

    with OxigraphStore.open_reader(path) as reader:
        return [str(v) for v in validate_store(reader, cache=cache_for(reader))]


@pytest.mark.slow
def test_a_random_run_with_kills_leaves_every_store_old_or_new_and_valid(
        built_store_path: Path, tmp_path: Path, kg_cli: Callable[..., object]) -> None:
    seed = int(os.environ.get("KG_KILL_SEED", str(random.SystemRandom().randrange(1 << 30))))
    steps = int(os.environ.get("KG_KILL_STEPS", "200"))
    rate = float(os.environ.get("KG_KILL_RATE", "0.08"))
    rng = random.Random(seed)
    run = Run(tmp_path, rng)
    store_path, whole = built_store_path, tmp_path / "whole"
    killed = outcomes_old = outcomes_new = 0
    started = time.monotonic()
    writer: OxigraphStore | None = None  # kept open between the steps run here
    for step in range(steps):
        kind, args = run.pick()
        where = f"seed {seed} (KG_KILL_SEED={seed}), step {step}: kg {' '.join(args)}"
        short = steps // 20 - killed  # kills still owed: the last steps kill until none is
        if rng.random() < rate or 0 < short and steps - step <= 4 * short:
            if writer is not None:
                writer.close()
                writer = None
            point = rng.choice(POINTS[kind])
            old = fingerprint(store_path)
            shutil.rmtree(whole, ignore_errors=True)
            shutil.copytree(store_path, whole)
            if kind == "backup":  # the uninterrupted run writes its own file
                args_whole = ("backup", "-o", str(tmp_path / "whole.nq.gz"), "--force")
            else:
                args_whole = args
            if kind == "build":  # the command records more than the library call (its kernel registry)
                kg_cli("--wait", "30", *args_whole, store=whole)  # type: ignore[operator]
            else:
                with OxigraphStore(whole, command="test: whole") as copy:
                    run.in_process(copy, args_whole)
            new = fingerprint(whole)
            ended = _killed(store_path, args, point)
            print(f"step {step}: kg {' '.join(args)} at {point}: {'killed' if ended else 'ran to its end'}")
            if ended:
                killed += 1
                OxigraphStore(store_path, command="test: recover").close()  # the next writer recovers
                now = fingerprint(store_path)
                assert now in (old, new), f"a mixed state after a kill at {point}; {where}"
                outcomes_old += now == old
                outcomes_new += now == new and old != new
                if kind == "backup":
                    target = Path(args[2])
                    assert not target.exists() or target.stat().st_size > 0, where
            else:
                assert fingerprint(store_path) == new, f"{where} (ran to its end)"
        else:
            if writer is None:
                writer = OxigraphStore(store_path, command="test step")
            run.in_process(writer, args)
        violations = _violations(store_path)
        assert violations == [], f"kg validate after {where}: {violations[:3]}"
    if writer is not None:
        writer.close()
    # bounded: about 2-3 minutes on 2 cores
    print(f"seed {seed}: {steps} steps, {killed} killed ({outcomes_old} old, {outcomes_new} new), "
          f"{time.monotonic() - started:.0f} s")
    assert killed >= steps // 20
