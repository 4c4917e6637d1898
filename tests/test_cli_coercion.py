"""kg.cli.coercion: the pydantic-free reading of plain option values gives typer's own
values, and leaves every value it cannot read to typer (and so to typer's messages)."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
import typer
import typer.main
from typer._click.exceptions import BadParameter
from typer._coercion import build_runtime_param

from kg.cli import app
from kg.cli.coercion import _NOT_PLAIN, _plain

SAMPLES = ["x", "", " 5", "5", "-3", "007", "1.5", "-0.25", "abc", "1e3", "1_000", "0", "2", "table", "JSON",
           "json", "csv", "none", 5, 0.5, True, False, ("a", "b=c"), (), ("",), ["x"], ("a", 5)]


def _params() -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []

    def walk(command: Any, path: str) -> None:
        out.extend((f"{path} {p.name}", p) for p in command.params if hasattr(p, "type_descriptor"))
        if hasattr(command, "list_commands"):
            ctx = typer.Context(command)
            for name in command.list_commands(ctx):
                walk(command.get_command(ctx, name), f"{path} {name}")

    walk(typer.main.get_command(app), "kg")
    return out


def test_plain_values_read_as_typer_reads_them() -> None:
    params = _params()
    assert len(params) > 100
    read = 0
    for where, param in params:
        descriptor = param.type_descriptor
        typer_reading = build_runtime_param(descriptor)
        ctx = typer.Context(typer.main.get_command(app))
        samples = [*SAMPLES, *(list(descriptor.annotation) if descriptor.choices else [])]
        for value in samples:
            fast = _plain(descriptor.annotation, descriptor.parameter_info, value, ctx)
            try:
                expected = typer_reading._coerce_value(value, param=param, ctx=ctx)
            except BadParameter:
                assert fast is _NOT_PLAIN, (where, value)
                continue
            if fast is not _NOT_PLAIN:
                read += 1
                assert (fast, type(fast)) == (expected, type(expected)), (where, value)
    assert read > 500  # most values of most options are read without typer's adapters


@pytest.mark.parametrize("args", [["suggest", "lineage", "--min-score", "0.5", "-f", "json"],
                                  ["suggest", "reading", "-n", "3", "-f", "csv"],
                                  ["query", "repositories", "-p", "minStars=5", "-f", "jsonl", "--limit", "5"],
                                  ["query", "read-without-note", "-f", "csv"]])
def test_a_command_with_plain_options_does_not_import_pydantic(args: list[str]) -> None:
    code = ("import sys\nfrom typer.testing import CliRunner\nfrom kg.cli import app\n"
            f"r = CliRunner().invoke(app, ['--store', ':memory:', *{args!r}])\n"
            "print(r.exit_code, 'pydantic' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["0", "False"]


def test_an_ill_formed_value_gets_typers_message(kg_cli) -> None:
    out = kg_cli("--store", ":memory:", "suggest", "reading", "--limit", "many")
    assert out.returncode != 0 and "valid integer" in out.stderr
    out = kg_cli("--store", ":memory:", "suggest", "lineage", "--min-score", "2")
    assert out.returncode != 0 and "less than or equal to 1" in out.stderr
