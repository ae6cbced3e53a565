"""An import inside a function is there only to keep a heavy dependency (pyspark, Airflow, delta,
deltalake, openlineage) out of import time, or to break a cycle, and it says so: a comment on
its line or the line before (one comment serves a block of imports that follow each other).
Any other import belongs at the top of its module, where the import-layer check and a reader
see it."""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = [ROOT / "provider" / "contract_gate", ROOT / "contract_plan" / "contract_gate_plan", ROOT / "spark_jobs" / "contract_gate_spark"]

# The unexplained imports inside functions that the tree still holds, as ``file:module``, in
# files whose imports are being sorted out apart. This list must only shrink: an entry goes when
# its import moves to the module's top or gets its reason, and nothing is ever added to it.
ALLOWED = {
    "provider/contract_gate/cli/rerun_cmd.py:contract_gate.contract.compiler",
    "provider/contract_gate/cli/rerun_cmd.py:contract_gate.operators.submission",
    "provider/contract_gate/cli/run_cmd.py:airflow.models.xcom",
    "provider/contract_gate/cli/run_cmd.py:airflow.utils",
    "provider/contract_gate/cli/run_cmd.py:airflow.utils.session",
    "provider/contract_gate/cli/run_cmd.py:contract_gate.dags.stub_files",
    "provider/contract_gate/dags/gate_schedule.py:airflow.sdk",
    "provider/contract_gate/dags/gate_schedule.py:contract_gate.landing_batches",
    "provider/contract_gate/dags/gate_schedule.py:contract_gate.triggers.landing",
    "provider/contract_gate/dags/task_group.py:contract_gate.operators.base",
    "provider/contract_gate/freshness/check.py:contract_gate.notifications.dispatch",
    "provider/contract_gate/freshness/databricks_sql.py:airflow.providers.databricks.hooks.databricks_sql",
    "provider/contract_gate/freshness/readiness.py:contract_gate.freshness.decision_log",
    "provider/contract_gate/freshness/readiness.py:contract_gate.freshness.latest",
    "provider/contract_gate/freshness/readiness.py:contract_gate.freshness.status",
    "provider/contract_gate/landing_batches.py:contract_gate.decisions",
    "provider/contract_gate/landing_batches.py:contract_gate.delta_tables",
    "provider/contract_gate/landing_batches.py:contract_gate.landing_tables",
    "provider/contract_gate/landing_batches.py:contract_gate.submission",
    "provider/contract_gate/object_storage.py:contract_gate_spark.runtime",
    "provider/contract_gate/operators/branch.py:contract_gate.operators.base",
    "provider/contract_gate/runners/databricks.py:airflow.exceptions",
    "provider/contract_gate/runners/databricks.py:airflow.providers.databricks.hooks.databricks",
    "provider/contract_gate/runners/databricks.py:airflow.providers.databricks.triggers.databricks",
    "provider/contract_gate/runners/databricks.py:airflow.sdk",
    "provider/contract_gate/runners/databricks.py:contract_gate.unity_catalog.grants",
    "provider/contract_gate/runners/databricks.py:contract_gate_plan.model",
    "provider/contract_gate/runners/spark_connect.py:airflow.providers.apache.spark.hooks.spark_connect",
    "provider/contract_gate/runners/spark_connect.py:contract_gate_spark.commands",
    "provider/contract_gate/runners/spark_connect.py:contract_gate_spark.runtime.session",
    "spark_jobs/contract_gate_spark/runtime/errors.py:py4j.java_gateway",
    "spark_jobs/contract_gate_spark/runtime/errors.py:pyspark",
    "spark_jobs/contract_gate_spark/runtime/errors.py:pyspark.sql.connect.client",
    "spark_jobs/contract_gate_spark/runtime/jars.py:pyspark",
    "spark_jobs/contract_gate_spark/runtime/job_start.py:py4j",
    "spark_jobs/contract_gate_spark/runtime/session.py:delta",
    "spark_jobs/contract_gate_spark/runtime/session.py:pyspark.sql.connect.session",
}


def _commented_lines(source: str) -> set[int]:
    """The line numbers that carry a comment (a ``#`` inside a string is not one)."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return {token.start[0] for token in tokens if token.type == tokenize.COMMENT}


def _function_imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if in_function and isinstance(child, (ast.Import, ast.ImportFrom)):
                found.append(child)
            visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)))

    visit(tree, False)
    return sorted(found, key=lambda node: node.lineno)


def _module_name(node: ast.Import | ast.ImportFrom) -> str:
    if isinstance(node, ast.Import):
        return ", ".join(alias.name for alias in node.names)
    return "." * node.level + (node.module or "")


def unexplained(source: str) -> list[tuple[int, str]]:
    """(line, module) of each import inside a function of ``source`` that says no reason."""
    comments = _commented_lines(source)
    explained_ends: set[int] = set()  # last lines of the explained imports: a block shares a comment
    found = []
    for node in _function_imports(ast.parse(source)):
        said = comments & set(range(node.lineno - 1, node.end_lineno + 1))
        if said or node.lineno - 1 in explained_ends:
            explained_ends.add(node.end_lineno)
        else:
            found.append((node.lineno, _module_name(node)))
    return found


def _tree_findings() -> dict[str, int]:
    """``file:module`` -> its first line, for every unexplained import in a function of the tree."""
    findings: dict[str, int] = {}
    for package in PACKAGES:
        for path in sorted(package.rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            name = path.relative_to(ROOT).as_posix()
            for line, module in unexplained(path.read_text(encoding="utf-8")):
                findings.setdefault(f"{name}:{module}", line)
    return findings


def test_every_import_inside_a_function_says_why():
    findings = _tree_findings()
    new = [f"{key.split(':')[0]}:{line} imports {key.split(':', 1)[1]}"
           for key, line in sorted(findings.items()) if key not in ALLOWED]
    assert new == [], ("imports inside functions without a reason: move each to the top of its module, or say on "
                       "its line or the line before which heavy dependency or cycle keeps it there\n" + "\n".join(new))


def test_the_allowed_list_only_shrinks():
    """An entry whose import was moved or explained leaves the list, so it cannot come back."""
    gone = sorted(ALLOWED - set(_tree_findings()))
    assert gone == [], "remove from ALLOWED (fixed, or the file moved):\n" + "\n".join(gone)


def test_the_check_sees_a_reason_where_one_is_given():
    source = '''
import json


def top():
    from a import b
    text = "# not a comment"
    import c
    # pyspark: loaded only here
    from d import e
    from f import g
    import h  # Airflow, at run time


    import i

    def inner():
        from j import k
        return k


class Thing:
    def method(self):
        from l import m  # a cycle: l imports this module
        from .n import o

        from .p import q
        return m, o, q
'''
    assert unexplained(source) == [(6, "a"), (8, "c"), (15, "i"), (18, "j"), (27, ".p")]
