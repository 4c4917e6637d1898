"""``kg kernels list`` and ``kg kernels verify`` through the real console script."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path


def test_list_does_not_need_torch(built_store_path: Path) -> None:
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from kg.cli import app\n"
        f"r = CliRunner().invoke(app, ['--store', {str(built_store_path)!r}, 'kernels', 'list', "
        "'-f', 'json'])\n"
        "print(r.exit_code, 'torch' in sys.modules, len(__import__('json').loads(r.stdout)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    exit_code, torch_loaded, rows = out.stdout.split()
    assert (exit_code, torch_loaded) == ("0", "False") and int(rows) >= 39


def test_verify_prints_each_check_and_records_the_runs(kg_cli, built_store_path: Path) -> None:
    out = kg_cli("kernels", "verify", "SiTU", "QAT", "--json", store=built_store_path, check=True)
    report = json.loads(out.stdout)
    assert report["recorded"] and report["failed"] == 0 and report["passed"] == 2
    assert [r["technique"] for r in report["runs"]] == ["situ", "qat"]
    check = report["runs"][0]["checks"][0]
    assert {"claim", "max_abs", "max_rel", "tolerance", "passed", "seconds"} <= set(check)
    assert report["runs"][0]["torch_version"] and report["runs"][0]["device"] == "cpu"

    rows = {
        r["technique"]: r
        for r in json.loads(kg_cli("kernels", "list", "-f", "json", store=built_store_path, check=True).stdout)
    }
    assert rows["situ"]["status"] == "verified" and rows["situ"]["checks"] == "4/4"
    assert rows["ascend-c"]["status"] == "none" and "C++" in rows["ascend-c"]["rationale"]
    assert rows["muon"]["status"] == "not run"
    card = json.loads(kg_cli("show", "situ", "-f", "json", store=built_store_path, check=True).stdout)
    assert card["kernel"] == "verified"


def test_a_technique_without_a_registry_entry_is_listed_as_not_run(kg_cli, built_store_path: Path) -> None:
    from kg.store.embedded import OxigraphStore

    with OxigraphStore(built_store_path) as store:  # a technique someone added to the graph by hand
        store.update("""INSERT DATA { GRAPH <urn:example:mine> {
            <https://w3id.org/techkg/id/technique/my-variant>
                a <https://w3id.org/techkg/ns#Technique> ;
                <http://www.w3.org/2004/02/skos/core#notation> "my-variant" ;
                <http://www.w3.org/2004/02/skos/core#prefLabel> "My variant"@en } }""")
    rows = {
        r["technique"]: r
        for r in json.loads(kg_cli("kernels", "list", "-f", "json", store=built_store_path, check=True).stdout)
    }
    assert rows["my-variant"]["status"] == "not run" and rows["my-variant"]["form"] == ""
    assert rows["eagle"]["form"] == "kernel" and rows["eagle"]["form"] != ""  # all are registered


def _invoke(store: Path, *args: str):  # type: ignore[no-untyped-def]
    """The kg command in this process (torch is already loaded here), for output formats."""
    from typer.testing import CliRunner

    from kg.cli import app

    return CliRunner().invoke(app, ["--store", str(store), *args], env={"COLUMNS": "200"})


def test_verify_table_and_csv(built_store_path: Path) -> None:
    table = _invoke(built_store_path, "kernels", "verify", "aux-loss-free-balancing", "ascend-c", "--no-record")
    assert table.exit_code == 0, table.output
    assert "unbiased-weights" in table.output and "pass" in table.output
    assert "not recorded" in table.output and "ascend-c: no kernel." in table.output
    result = _invoke(built_store_path, "kernels", "verify", "categorical-flow-maps", "-f", "csv", "--no-record")
    rows = list(csv.DictReader(io.StringIO(result.output)))
    assert {r["check"] for r in rows} == {"closed-form-vs-euler", "flow-map-identities", "simplex"}
    assert all(r["result"] == "pass" and float(r["max_abs"]) < 1e-3 for r in rows)
    listed = json.loads(_invoke(built_store_path, "kernels", "list", "-f", "json").output)
    assert {r["technique"]: r["status"] for r in listed}["categorical-flow-maps"] == "not run"


def test_verify_errors_are_clear(kg_cli, built_store_path: Path) -> None:
    unknown = kg_cli("kernels", "verify", "Gated DeltaNett", store=built_store_path)
    assert unknown.returncode == 1 and "Gated DeltaNet" in unknown.stderr
    assert "Traceback" not in unknown.stderr
    as_json = kg_cli("kernels", "verify", "zzzz-nothing", "--json", store=built_store_path)
    assert as_json.returncode == 1 and json.loads(as_json.stdout)["ok"] is False
    no_graph = kg_cli("kernels", "verify", "GDN", store=built_store_path.parent / "empty")
    assert no_graph.returncode == 1 and "kg build" in no_graph.stderr


def test_cuda_without_a_gpu_is_skipped_with_a_note(built_store_path: Path) -> None:
    """A script can ask for the GPU run everywhere: without CUDA it is skipped (exit 0),
    and says so, in the table and in JSON."""
    import pytest
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    table = _invoke(built_store_path, "kernels", "verify", "situ", "--device", "cuda")
    assert table.exit_code == 0 and "skipped" in table.output and "--device cpu" in table.output
    report = json.loads(_invoke(built_store_path, "kernels", "verify", "situ", "--device", "cuda", "-f", "json").output)
    assert report["device"] == "cuda" and "no GPU" in report["skipped"]
    mutants = _invoke(built_store_path, "kernels", "mutants", "situ", "--device", "cuda")
    assert mutants.exit_code == 0 and "skipped" in mutants.output


def test_verify_reports_families_broken_checks_and_half_precision_runs(built_store_path: Path) -> None:
    result = _invoke(
        built_store_path, "kernels", "verify", "gated-deltanet", "switch-transformer", "-f", "json", "--no-record"
    )
    report = json.loads(result.output)
    assert result.exit_code == 0 and report["broken"] == 0 and report["dtype"] == "all"
    assert report["families"]["no-initial-state"] == ["gated-deltanet"]
    assert report["families"]["idle-and-overloaded-experts"] == ["switch-transformer"]
    gdn = report["runs"][0]
    assert gdn["dtype"] == "float32+float16+bfloat16" and {"k-ne-v", "explicit-scale"} <= set(gdn["families"])
    first = gdn["checks"][0]
    assert first["status"] == "passed" and "no-initial-state" in first["covers"]
    assert {c["dtype"] for c in gdn["checks"] if c["name"] == "chunk-vs-recurrent"} == {
        "float32",
        "float16",
        "bfloat16",
    }


def _narrow(store: Path, *args: str):  # type: ignore[no-untyped-def]
    """The kg command in this process, printing into a pipe 80 columns wide."""
    from typer.testing import CliRunner

    from kg.cli import app

    return CliRunner().invoke(app, ["--store", str(store), *args], env={"COLUMNS": "80"})


def test_verify_table_fits_80_columns_in_a_pipe_and_v_adds_the_claims(built_store_path: Path) -> None:
    out = _narrow(built_store_path, "kernels", "verify", "situ", "aux-loss-free-balancing", "--no-record")
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert max(len(line) for line in lines) <= 80, max(lines, key=len)
    assert any(line.strip("│ ").startswith("situ") for line in lines)  # a row naming the technique
    assert any("fused-vs-formula" in line and "pass" in line for line in lines)
    assert "The fused SiTU-GLU equals the formula" not in out.output  # claims only with -v
    verbose = _narrow(built_store_path, "kernels", "verify", "situ", "--no-record", "-v")
    assert "situ / fused-vs-formula: The fused SiTU-GLU equals the formula" in verbose.output.replace("\n", " ")


def test_verify_in_half_precision_uses_the_declared_tolerances(built_store_path: Path) -> None:
    out = _invoke(built_store_path, "kernels", "verify", "gdn", "--dtype", "bfloat16", "--no-record", "-f", "json")
    report = json.loads(out.output)
    assert out.exit_code == 0 and report["dtype"] == "bfloat16"
    checks = {c["name"]: c for c in report["runs"][0]["checks"]}
    assert (checks["chunk-vs-recurrent"]["dtype"], checks["chunk-vs-recurrent"]["measure"]) == ("bfloat16", "rms")
    assert checks["chunk-vs-recurrent"]["tolerance"] == 0.005 and checks["gradients"]["tolerance"] == 0.008
    assert 0 < checks["chunk-vs-recurrent"]["rms"] < 0.005  # a real bf16 rounding error, within FLA's bound
    assert checks["alpha-one-is-deltanet"]["dtype"] == "float32"  # declares no half tolerance


def test_mutants_prints_the_kill_rate(built_store_path: Path) -> None:
    out = _invoke(built_store_path, "kernels", "mutants", "situ", "QAT", "-f", "json")
    report = json.loads(out.output)
    assert out.exit_code == 0 and report["mutants"] == report["killed"] >= 8 and report["rate"] == 1.0
    assert [t["technique"] for t in report["techniques"]] == ["situ", "qat"]
    assert all(r["verdict"] == "killed" and r["killed_by"] == r["check"] for r in report["runs"])
    table = _narrow(built_store_path, "kernels", "mutants", "situ")
    assert table.exit_code == 0 and max(len(line) for line in table.output.splitlines()) <= 80
    assert "situ" in table.output and "100%" in table.output and "4 of 4 mutants killed" in table.output
    rows = list(
        csv.DictReader(io.StringIO(_invoke(built_store_path, "kernels", "mutants", "situ", "-f", "csv", "-v").output))
    )
    assert {r["mutant"] for r in rows} >= {"backward-ignores-cotangent"} and {r["verdict"] for r in rows} == {"killed"}


def test_mutants_exits_1_and_names_a_survivor(built_store_path: Path, monkeypatch) -> None:
    import kernels.mutation as mutation
    from kernels.mutation import Mutant

    harmless = Mutant(
        "harmless",
        "a comment, not a bug",
        "kernels.situ.fused:situ_and_mul",
        "return out",
        "return out  # nothing",
        "fused-vs-formula",
    )
    monkeypatch.setattr(mutation, "declared_mutants", lambda e: (harmless,))
    result = _invoke(built_store_path, "kernels", "mutants", "situ")
    assert result.exit_code == 1
    assert "survived" in result.output and "harmless" in result.output and "0 of 1 mutants killed" in result.output
