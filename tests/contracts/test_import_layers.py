"""Imports run downward, and no package imports one that imports it back: the import-linter
contracts of pyproject.toml (``[tool.importlinter]``) hold on the tree, and they break on a
planted upward import, a planted cycle and a Spark side that imports the provider."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
PACKAGES = {"contract_gate": ROOT / "provider" / "contract_gate", "contract_gate_plan": ROOT / "contract_plan" / "contract_gate_plan",
            "contract_gate_spark": ROOT / "spark_jobs" / "contract_gate_spark"}


def lint_imports(tree: Path) -> subprocess.CompletedProcess:
    """import-linter on the packages of ``tree`` with ``tree``'s pyproject.toml."""
    path = ":".join(str(source.parent) for source in PACKAGES.values()) if tree == ROOT else str(tree)
    return subprocess.run([str(LINT_IMPORTS), "--config", str(tree / "pyproject.toml"), "--no-cache"],
                          capture_output=True, text=True, cwd=tree, env={"PYTHONPATH": path, "PATH": "/usr/bin:/bin"},
                          check=False, timeout=300)


def test_the_tree_keeps_every_import_contract():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout


@pytest.fixture(scope="module")
def copy(tmp_path_factory) -> Path:
    """The three packages and pyproject.toml, copied: imports are planted there, never in the tree."""
    tree = tmp_path_factory.mktemp("import-layers")
    for name, source in PACKAGES.items():
        shutil.copytree(source, tree / name, ignore=shutil.ignore_patterns("__pycache__", "*.html"))
    shutil.copyfile(ROOT / "pyproject.toml", tree / "pyproject.toml")
    return tree


@pytest.mark.parametrize(("module", "planted", "broken"), [
    # the ground floor reaching up to the command line
    ("contract_gate/config.py", "import contract_gate.cli.main", "contract_gate.config is not allowed to import contract_gate.cli"),
    # storage reaching up to the tasks
    ("contract_gate/decisions/store.py", "from contract_gate.operators import base",
     "contract_gate.decisions is not allowed to import contract_gate.operators"),
    # two packages of one layer importing each other: freshness already imports metrics
    ("contract_gate/metrics.py", "import contract_gate.freshness.status", "No cycles are allowed in contract_gate"),
    # the Spark side is shipped without the provider
    ("contract_gate_spark/runtime/errors.py", "import contract_gate.config", "contract_gate_spark imports neither the provider nor Airflow BROKEN"),
    ("contract_gate_spark/runtime/errors.py", "import contract_gate_spark.steps.publish", "contract_gate_spark.runtime is not allowed to import contract_gate_spark.steps"),
    ("contract_gate_plan/sql_text.py", "import airflow.sdk", "contract_gate_plan is the ground floor"),
])
def test_a_planted_import_breaks_a_contract(copy, module, planted, broken):
    path = copy / module
    original = path.read_text(encoding="utf-8")
    try:
        path.write_text(original.replace("from __future__ import annotations\n",
                                         f"from __future__ import annotations\n{planted}\n", 1), encoding="utf-8")
        result = lint_imports(copy)
    finally:
        path.write_text(original, encoding="utf-8")
    assert result.returncode == 1, result.stdout[-3000:]
    assert broken in " ".join(result.stdout.split()), result.stdout[-3000:]


def test_the_import_map_of_the_architecture_document_is_the_codes():
    """docs/architecture.md carries the package import map generated from the code."""
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "import_map.py"), "--check"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
