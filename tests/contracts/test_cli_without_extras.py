"""The install without extras (docs/install.md): ``--help``, ``lint``, ``plan`` and ``diff`` work
when no package of an extra can be imported, and a command that needs one says which extra."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ORDERS = ROOT / "contracts" / "orders.yaml"

# The packages that only the extras install (spark, airflow): importing one fails as if it were absent.
EXTRAS_ONLY = ("pyspark", "delta", "pandas", "rich", "airflow", "deltalake", "pyarrow", "databricks",
               "py4j", "numpy", "sqlalchemy", "pendulum", "structlog")

_WITHOUT_EXTRAS = f"""
import importlib.abc, sys
class _Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in {EXTRAS_ONLY!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None
sys.meta_path.insert(0, _Absent())
from contract_gate.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", _WITHOUT_EXTRAS, *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, check=False, timeout=120)


def test_the_blocker_blocks():
    done = subprocess.run([sys.executable, "-c", _WITHOUT_EXTRAS.replace("from contract_gate.cli.main import main\n"
                                                                          "sys.exit(main(sys.argv[1:]))", "import pyarrow")],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 1 and "No module named 'pyarrow'" in done.stderr


@pytest.mark.parametrize("args", [["--help"], ["lint", "--help"], ["lint", ROOT / "contracts"], ["plan", ORDERS],
                                  ["plan", ORDERS, "--ddl"], ["diff", ORDERS, ORDERS]])
def test_help_lint_plan_and_diff_need_no_extra(args):
    done = cli(*args)

    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert done.stdout.strip()


def test_help_lists_every_command_and_what_the_unavailable_ones_need():
    listed = cli("--help").stdout

    for command in ("lint", "plan", "diff", "validate", "run", "status", "init", "preview"):
        assert f"    {command} " in listed, command
    assert "not available" in listed and "[airflow]" in listed


@pytest.mark.parametrize("args, extra", [(["status"], "airflow"), (["validate", ORDERS, "--data", "x"], "spark"),
                                         (["run", ORDERS], "spark")])
def test_a_command_that_needs_an_extra_says_which_in_one_line(args, extra):
    done = cli(*args)

    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and f"pip install 'airflow-provider-contract-gate[{extra}]'" in done.stderr
