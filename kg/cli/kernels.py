"""``kg kernels``: each technique's reference kernel, and running the verifications.

``kg kernels list`` reads the registry and the graph and needs no torch. ``kg kernels
verify`` imports the kernels (and torch) only when it runs them, records every run in
the named graph ``kernels`` and exits with status 1 when a check fails.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

import typer

from kg.cli import state
from kg.cli.output import Format

if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.progress import Progress

    from kernels.registry import Entry
    from kernels.verify import Run
    from kg.store.base import GraphStore

__all__ = ["app"]

app = typer.Typer(
    help="Reference kernels: each technique's kernel status, and running their verifications.",
    no_args_is_help=True,
)


class Device(StrEnum):
    cpu = "cpu"
    cuda = "cuda"


class Dtype(StrEnum):
    float32 = "float32"
    float16 = "float16"
    bfloat16 = "bfloat16"


FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Output format.")]
TechniquesArg = Annotated[
    list[str] | None,
    typer.Argument(help="Techniques by id, name or alias (default: every technique with code).", show_default=False),
]


def _latest_runs(store: GraphStore) -> dict[str, dict[str, Any]]:
    """technique IRI → its newest run (ended, passed, device, checks, passed checks)."""
    from kg.answer import run
    from kg.results import Solutions

    result = run(store, "kernel-runs")
    assert isinstance(result, Solutions)
    latest: dict[str, dict[str, Any]] = {}
    for row in result.records():
        latest.setdefault(row["technique"], row)  # newest first
    return latest


@app.command("list")
def list_(fmt: FormatOpt = Format.table) -> None:
    """Each technique's kernel form, module and status: verified, failing, not run or none."""
    from kernels.registry import entries
    from kg.cli.output import emit
    from kg.iris import technique_iri
    from kg.resolve import technique_names
    from kg.views import kernel_status

    state().json_errors = fmt is Format.json
    store = state().reader()
    status = kernel_status(store)
    names = technique_names(store)
    latest = _latest_runs(store)
    rows = []
    registered = set()
    for e in entries():
        iri = technique_iri(e.technique).value
        registered.add(iri)
        run = latest.get(iri, {})
        rows.append(
            {
                "technique": e.technique,
                "name": names.get(iri, (e.technique, ""))[0],
                "form": e.form,
                "module": e.module or "",
                "status": "none" if e.form == "none" else status.get(iri, "not run"),  # kg.wording.KernelState
                "last_run": str(run.get("ended") or "")[:19],
                "device": run.get("device") or "",
                "checks": f"{run['passedChecks']}/{run['checks']}" if run else "",
                "rationale": e.rationale or "",
            }
        )
    for iri, (name, tid) in sorted(names.items(), key=lambda kv: kv[1][1]):
        if iri not in registered:
            rows.append(
                {
                    "technique": tid,
                    "name": name,
                    "form": "",
                    "module": "",
                    "status": "not run",
                    "last_run": "",
                    "device": "",
                    "checks": "",
                    "rationale": "",
                }
            )
    columns = ["technique", "name", "form", "module", "status", "last_run", "device", "checks"]
    if fmt is Format.table:  # the module is kernels.<technique>: left to JSON and CSV
        columns.remove("module")
    else:
        columns.append("rationale")
    emit(
        rows,
        columns,
        fmt=fmt.value,
        title=f"Reference kernels: {sum(r['module'] != '' for r in rows)} with code, "
        f"{sum(r['form'] == 'none' for r in rows)} reasoned none",
    )


def _select(reader: Callable[[], GraphStore], names: list[str], record: bool) -> list[Entry]:
    """Registry entries for the names given (forgiving: aliases work once the graph is built).
    The store is opened only to resolve a name that is not a registry id, or to record, so
    a run of registry ids without recording needs no store at all."""
    from kernels.registry import entries, entry

    if not names:
        return entries()
    ids = {e.technique for e in entries()}
    if not record and all(name in ids for name in names):
        return list(dict.fromkeys(entry(name) for name in names))
    from kg.resolve import resolve_technique, technique_names

    store = reader()
    known = technique_names(store)
    chosen = []
    for name in names:
        if name in ids and (not record or known):
            tid = name
        else:
            iri = resolve_technique(store, name)
            tid = known.get(iri.value, ("", iri.value.rsplit("/", 1)[-1]))[1]
        chosen.append(entry(tid))
    return list(dict.fromkeys(chosen))


def _progress(label: str, fmt: Format) -> Progress:
    """A progress bar on stderr for a table, none for JSON or CSV."""
    from kg.cli.output import progress_bar

    return progress_bar(f"[bold]{label}[/] {{task.description}}", show=fmt is Format.table)


def _fmt_error(value: float) -> str:
    if value != value:
        return "nan"
    return "0" if value == 0 else f"{value:.2e}"


def _verify_table(
    runs: list[Run], reasoned: list[Entry], device: str, elapsed: float, record: bool, verbose: bool
) -> None:
    """One row per check, grouped under a row naming the technique, narrow enough for 80
    columns; what failed (and with -v every claim) below the table."""
    from kg.cli.output import console, emit

    rows: list[dict[str, str]] = []
    for r in runs:
        rows.append({"check": f"{r.technique}{'' if r.passed else '  ✗'}", "error": "", "tolerance": "", "result": ""})
        for c in r.checks:
            rows.append(
                {
                    "check": f"  {c.name}" + ("" if c.dtype == "float32" else f" ({_SHORT.get(c.dtype, c.dtype)})"),
                    "error": _fmt_error(c.error),
                    "tolerance": f"{'0' if c.tolerance == 0 else f'{c.tolerance:.0e}'} {c.measure}",
                    "result": {"passed": "pass", "failed": "FAIL", "broken": "BROKEN"}[c.status],
                    "time": f"{c.seconds:.2f}",
                }
            )
    dtypes = sorted({c.dtype for r in runs for c in r.checks})
    emit(
        rows,
        ["check", "error", "tolerance", "result", "time"],
        title=f"Verification on {device} ({', '.join(dtypes) or 'float32'})",
        headers={"error": "max error", "time": "time (s)"},
    )
    out = console()
    failed = [r for r in runs if not r.passed]
    for r in runs:
        for c in r.checks:
            if verbose or not c.passed:
                mark = "[red]✗[/] " if not c.passed else ""
                out.print(f"{mark}[bold]{r.technique} / {c.name}[/]: {c.claim}")
                if c.detail:
                    out.print(f"  [dim]{c.detail}[/]")
    for e in reasoned:
        out.print(f"[dim]{e.technique}: no kernel. {e.rationale}[/]")
    broken = sum(len(r.broken) for r in runs)
    verdict = "[green]all passed[/]" if not failed else f"[red]{len(failed)} failed[/]"
    if broken:
        verdict += f", [red]{broken} checks broken (raised instead of measuring)[/]"
    where = "recorded in the graph (kernels)" if record else "not recorded"
    checks = sum(len(r.checks) for r in runs)
    out.print(f"{len(runs)} kernels, {checks} checks on {device} in {elapsed:.1f} s: {verdict}; {where}")


_SHORT = {"bfloat16": "bf16", "float16": "fp16", "float64": "fp64"}


def _cuda_missing(device: Device, fmt: Format, what: str) -> bool:
    """True (after saying so) when CUDA was asked for and this machine has none: the run
    is skipped, not failed, so a script can ask for the GPU run everywhere."""
    if device is not Device.cuda:
        return False
    from kernels.verify import cuda_available

    if cuda_available():
        return False
    from kg.cli.output import console, emit_json

    reason = "CUDA was requested but torch sees no GPU on this machine; nothing was run"
    if fmt is Format.json:
        emit_json({"device": "cuda", "skipped": reason, "what": what})
    else:
        console().print(f"[yellow]skipped[/]: {reason} (kg kernels {what} --device cpu runs the same checks)")
    return True


def _families(runs: list[Run]) -> dict[str, list[str]]:
    """Each adversarial input family, with the techniques that have a check covering it."""
    from kernels.families import FAMILIES

    return {f: [r.technique for r in runs if f in r.families] for f in FAMILIES}


@app.command("mutants")
def mutants(
    techniques: TechniquesArg = None,
    fmt: FormatOpt = Format.table,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="One row per mutant instead of per technique.")
    ] = False,
    device: Annotated[Device, typer.Option(help="Run the checks on the CPU or on a CUDA GPU.")] = Device.cpu,
) -> None:
    """Plant each declared mutant (a realistic bug) and report how many the checks kill.

    A mutant is killed when a declared check fails on its numbers; one whose code only
    raises is "crashed", one that passes every check "survived". Exits with status 1
    unless every mutant is killed."""
    import time

    from kg.cli.output import console, emit, emit_json

    state().json_errors = fmt is Format.json
    if _cuda_missing(device, fmt, "mutants"):
        return
    selected = [e for e in _select(state().reader, list(techniques or []), record=False) if e.has_code]
    state().close_reader()  # the mutants run for minutes and read nothing more

    from kernels.mutation import MutantRun, declared_mutants, run_mutant

    planned = [(e, m) for e in selected for m in declared_mutants(e)]
    started = time.perf_counter()
    results: list[MutantRun] = []
    with _progress("mutants", fmt) as progress:
        task = progress.add_task("", total=len(planned))

        def done(run: MutantRun) -> None:
            results.append(run)
            progress.update(task, description=f"{run.technique} / {run.mutant}", advance=1)

        if device is Device.cuda:  # a device-side assert would end every later mutant: one process per stretch
            from kernels.isolated import run_isolated

            run_isolated(planned, device.value, done)
        else:
            for e, m in planned:
                done(run_mutant(e, m, device=device.value))
    elapsed = time.perf_counter() - started
    killed = sum(r.killed for r in results)
    rate = killed / len(results) if results else 1.0
    per_technique = []
    for e in selected:
        mine = [r for r in results if r.technique == e.technique]
        n = sum(r.killed for r in mine)
        per_technique.append(
            {
                "technique": e.technique,
                "mutants": len(mine),
                "killed": n,
                "rate": f"{n / len(mine):.0%}" if mine else "",
                "survivors": ", ".join(r.mutant for r in mine if not r.killed),
            }
        )
    from kernels.mutation import KINDS

    per_kind = [
        {
            "kind": kind,
            "mutants": sum(r.kind == kind for r in results),
            "killed": sum(r.killed for r in results if r.kind == kind),
        }
        for kind in KINDS
    ]
    per_mutant = [
        {
            "technique": r.technique,
            "mutant": r.mutant,
            "kind": r.kind,
            "check": r.check,
            "verdict": r.verdict,
            "killed_by": r.killed_by,
            "error": _fmt_error(r.error),
            "tolerance": f"{r.tolerance:.0e}",
            "seconds": f"{r.seconds:.2f}",
            "bug": r.bug,
            "detail": r.detail,
        }
        for r in results
    ]
    if fmt is Format.json:
        emit_json(
            {
                "mutants": len(results),
                "killed": killed,
                "rate": round(rate, 4),
                "seconds": round(elapsed, 3),
                "techniques": per_technique,
                "kinds": per_kind,
                "runs": per_mutant,
            }
        )
    elif fmt is Format.csv:
        rows = per_mutant if verbose else per_technique
        emit(rows, list(rows[0]) if rows else ["technique"], fmt="csv")
    else:
        if verbose:
            emit(
                per_mutant,
                ["technique", "mutant", "verdict", "error", "tolerance", "bug"],
                title="Mutants",
            )
        else:
            emit(
                per_technique,
                ["technique", "mutants", "killed", "rate", "survivors"],
                title="Mutants killed by the declared checks",
            )
        out = console()
        kinds = ", ".join(f"{k['kind']} {k['killed']}/{k['mutants']}" for k in per_kind if k["mutants"])
        out.print(f"by kind: {kinds}")
        for r in results:
            if not r.killed:
                out.print(f"[red]✗ {r.technique} / {r.mutant}[/] {r.verdict}: {r.bug}")
        out.print(f"{killed} of {len(results)} mutants killed ({rate:.0%}) in {elapsed:.1f} s")
    if killed < len(results):
        raise typer.Exit(1)


@app.command("verify")
def verify(
    techniques: TechniquesArg = None,
    device: Annotated[Device, typer.Option(help="Run the checks on the CPU or on a CUDA GPU.")] = Device.cpu,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON (same as --format json).")] = False,
    fmt: FormatOpt = Format.table,
    record: Annotated[bool, typer.Option(help="Record the runs in the graph (named graph kernels).")] = True,
    dtype: Annotated[
        Dtype | None,
        typer.Option(
            help="Only this dtype: the checks that declare a tolerance for float16 or bfloat16 run "
            "there (FLA's and Liger's tolerances, judged by relative RMS error), the others in "
            "float32. Default: float32 and every half precision a check claims.",
            show_default=False,
        ),
    ] = None,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Also print each check's claim and what it measured.")
    ] = False,
) -> None:
    """Run the declared checks: per check the error it judges, tolerance, result and time.

    The table shows one row per check under its technique; failed checks say what they
    measured below it, and -v adds every check's claim. JSON and CSV carry everything."""
    import time

    from kg.cli.output import emit, emit_json

    if as_json:
        fmt = Format.json
    state().json_errors = fmt is Format.json
    if _cuda_missing(device, fmt, "verify"):
        return
    # No lock while the checks run (minutes): read the selection, let go, lock only to record.
    selected = _select(state().reader, list(techniques or []), record)
    state().close_reader()

    from kernels.verify import resolve_device, verify_many

    resolve_device(device.value)
    with_code = [e for e in selected if e.has_code]
    started = time.perf_counter()
    runs: list[Run] = []
    if with_code:
        with _progress("verifying", fmt) as progress:
            task = progress.add_task("", total=len(with_code))
            runs = verify_many(
                with_code,
                device=device.value,
                dtype=dtype.value if dtype else None,
                on_start=lambda e: progress.update(task, description=e.technique),
                on_done=lambda r: progress.advance(task),
            )
    elapsed = time.perf_counter() - started
    if record:
        from kernels.record import record as write

        write(state().store(), runs)
    reasoned = [e for e in selected if not e.has_code]
    failed = [r for r in runs if not r.passed]
    if fmt is Format.json:
        emit_json(
            {
                "device": device.value,
                "dtype": dtype.value if dtype else "all",
                "recorded": record,
                "seconds": round(elapsed, 3),
                "passed": len(runs) - len(failed),
                "failed": len(failed),
                "broken": sum(len(r.broken) for r in runs),
                "families": _families(runs),
                "runs": [r.to_dict() for r in runs],
                "none": [{"technique": e.technique, "rationale": e.rationale} for e in reasoned],
            }
        )
    elif fmt is Format.csv:
        rows = [
            {
                "technique": r.technique,
                "check": c.name,
                "dtype": c.dtype,
                "max_abs": _fmt_error(c.max_abs),
                "max_rel": _fmt_error(c.max_rel),
                "measure": c.measure,
                "tolerance": f"{c.tolerance:.0e}",
                "result": {"passed": "pass", "failed": "FAIL", "broken": "BROKEN"}[c.status],
                "covers": " ".join(c.covers),
                "seconds": f"{c.seconds:.3f}",
                "claim": c.claim,
                "detail": c.detail,
            }
            for r in runs
            for c in r.checks
        ]
        emit(rows, list(rows[0]) if rows else ["technique"], fmt="csv")
    else:
        _verify_table(runs, reasoned, device.value, elapsed, record, verbose)
    if failed:
        raise typer.Exit(1)
