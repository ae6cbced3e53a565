"""A contract with several schema objects through ``plan`` (and ``--ddl``/``--migrate``), ``diff``,
``rerun`` and ``report``: each takes ``--object``, ``diff`` compares every object (or the named
one), and an unnamed object is refused with the option and the objects' names in the message."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

from contract_gate.cli.main import main

THREE_OBJECTS = """\
apiVersion: v3.1.0
kind: DataContract
id: urn:datacontract:shared:reference
version: 1.0.0
status: active
servers:
  - {server: local, type: local, environment: dev, path: lakehouse, format: delta}
schema:
  - name: countries
    physicalType: table
    properties:
      - {name: code, physicalType: string, logicalType: string, primaryKey: true}
  - name: currencies
    physicalType: table
    properties:
      - {name: code, physicalType: string, logicalType: string, primaryKey: true}
  - name: regions
    physicalType: table
    properties:
      - {name: code, physicalType: string, logicalType: string, primaryKey: true}
customProperties:
  - property: contractGate
    value:
      landing: {path: "landing/{object}", format: json}
"""
NAMES = "'countries', 'currencies', 'regions'"
# v1.1.0: currencies gets an optional column (non-breaking), regions loses its key's column type (breaking)
NEXT = THREE_OBJECTS.replace("version: 1.0.0", "version: 1.1.0").replace(
    "  - name: regions\n", "  - name: regions\n    description: the regions\n").replace(
    "  - name: regions\n", "  - name: regions\n", 1).replace(
    "      - {name: code, physicalType: string, logicalType: string, primaryKey: true}\n  - name: regions",
    "      - {name: code, physicalType: string, logicalType: string, primaryKey: true}\n"
    "      - {name: symbol, physicalType: string, logicalType: string}\n  - name: regions")


def cli(*args, cwd: Path) -> subprocess.CompletedProcess:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def contracts(tmp_path: Path) -> tuple[Path, Path]:
    old, new = tmp_path / "reference.yaml", tmp_path / "reference_next.yaml"
    old.write_text(THREE_OBJECTS, encoding="utf-8")
    new.write_text(NEXT, encoding="utf-8")
    return old, new


def test_plan_ddl_and_migrate_take_object_and_refuse_without_naming_the_option(tmp_path):
    old, _ = contracts(tmp_path)
    for extra in ((), ("--ddl",), ("--migrate",)):
        refused = cli("plan", old, *extra, cwd=tmp_path)
        assert refused.returncode == 1, extra
        assert f"3 schema objects ({NAMES}): name one with --object NAME" in refused.stdout + refused.stderr

    plan = cli("plan", old, "--object", "currencies", cwd=tmp_path)
    assert plan.returncode == 0, plan.stderr
    document = json.loads(plan.stdout)
    assert document["object"] == "currencies" and document["tables"]["target"]["path"].endswith("lakehouse/currencies")
    ddl = cli("plan", old, "--ddl", "--object", "regions", cwd=tmp_path)
    assert ddl.returncode == 0 and "lakehouse/regions" in ddl.stdout
    migrate = cli("plan", old, "--migrate", "--object", "regions", cwd=tmp_path)
    assert migrate.returncode == 0 and "the publish step creates it" in migrate.stdout
    unknown = cli("plan", old, "--object", "planets", cwd=tmp_path)
    assert unknown.returncode == 1 and f"no schema object 'planets'; the contract has {NAMES}" in unknown.stderr


def test_diff_compares_every_object_or_the_named_one(tmp_path):
    old, new = contracts(tmp_path)
    every = cli("diff", old, new, "--json", cwd=tmp_path)
    assert every.returncode == 0, every.stderr
    changed = {(c["object"], c["impact"]) for c in json.loads(every.stdout)["changes"]}
    assert changed == {("currencies", "non-breaking"), ("regions", "informational")}

    one = cli("diff", old, new, "--json", "--object", "currencies", cwd=tmp_path)
    assert {c["object"] for c in json.loads(one.stdout)["changes"]} == {"currencies"}
    none = cli("diff", old, new, "--json", "--object", "countries", cwd=tmp_path)
    assert json.loads(none.stdout)["changes"] == []
    unknown = cli("diff", old, new, "--object", "planets", cwd=tmp_path)
    assert unknown.returncode == 2 and f"no schema object 'planets' in either version; they have {NAMES}" in unknown.stderr


def test_report_names_the_option_and_the_objects(tmp_path):
    old, _ = contracts(tmp_path)
    refused = cli("report", old, "0123456789abcdef", cwd=tmp_path)
    assert refused.returncode == 2
    assert f"({NAMES}): name one with --object NAME" in refused.stderr


def test_rerun_names_the_option_and_the_objects(tmp_path):
    # a subprocess: rerun points Airflow at its own home before it refuses
    old, _ = contracts(tmp_path)
    executable = shutil.which("contract-gate", path=str(Path(sys.executable).parent)) or "contract-gate"
    refused = subprocess.run([executable, "rerun", str(old), "0123456789abcdef"], capture_output=True, text=True,
                             check=False, cwd=tmp_path, env={"PATH": str(Path(sys.executable).parent),
                                                             "CONTRACT_GATE_HOME": str(tmp_path / "home")})
    assert refused.returncode == 2
    assert NAMES in refused.stderr and "--object" in refused.stderr  # the option and every object's name
