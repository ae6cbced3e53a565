"""A miniature gate, run once at install time so the JVM can record the classes a gate job loads.

``contract_gate.local_spark.class_archive`` runs this file under ``spark-submit`` with
``-XX:ArchiveClassesAtExit``: the JVM writes every class it loaded (Spark, Delta, the codegen
compiler) into a class-data-sharing archive, and later gate jobs map that archive instead of
loading and verifying the same ~20,000 classes from jars again. What is run here decides what
is archived, so it walks every step a gate job takes — stage a CSV landing, validate (fused
pass, key group-by, SQL rule), keys across batches, create the target with its constraints,
publish by MERGE, split into valid and quarantined rows, read the history — on a few rows in
a scratch folder that is deleted afterwards.

    spark-submit spark_jobs/contract_gate_spark/commands/class_archive_workload.py <scratch folder>
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: make contract_gate_spark and contract_gate_plan importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from contract_gate_spark.runtime import job_start  # noqa: E402

job_start.prepare()

from contract_gate_spark.validation.candidate import read_candidate  # noqa: E402
from contract_gate_spark.validation.engine import run_validation  # noqa: E402
from contract_gate_spark.steps.history import tagged_commits  # noqa: E402
from contract_gate_plan.model import Plan, load_plan  # noqa: E402
from contract_gate_spark.steps.publish import keys_across_batches, publish  # noqa: E402
from contract_gate_spark.steps.quarantine import quarantine  # noqa: E402
from contract_gate_spark.runtime.session import get_session  # noqa: E402
from contract_gate_spark.steps.stage import stage_candidate  # noqa: E402


def _rule(rule_id: str, kind: str, scope: str, columns: list[str], predicate: str | None, **extra) -> dict:
    return {"id": rule_id, "kind": kind, "scope": scope, "columns": columns, "severity": "error",
            "source": rule_id, "enforceable": scope == "row", "description": None, "filter": None,
            "threshold": None, "predicate": predicate, **extra}


def workload_plan(root: Path) -> Plan:
    tables: dict[str, dict[str, Any]] = {name: {"kind": "path", "path": str(root / name), "format": "delta"}
              for name in ("target", "quarantine", "decisions")}
    tables["candidate_schema"] = {"kind": "path", "path": str(root / "candidates"), "format": "delta"}
    tables["landing"] = {"kind": "path", "path": str(root / "landing"), "format": "csv",
                         "options": {"header": "true"}}
    return load_plan({
        "plan_version": 1, "contract": {"id": "warmup", "version": "1.0.0"}, "object": "warmup",
        "environment": None, "schema_policy": "strict", "delta_column_mapping": False,
        "freshness": {"column": "day", "column_type": "date", "max_age_seconds": 86400, "property": "freshness",
                      "unit": "d", "value": 1},
        "columns": [{"name": "id", "type": "string", "nullable": False},
                    {"name": "day", "type": "date", "nullable": False},
                    {"name": "amount", "type": "decimal(12,2)", "nullable": True}],
        "key": ["id", "day"],
        "rules": [_rule("id.required", "required", "row", ["id"], "`id` IS NOT NULL"),
                  _rule("amount.minimum", "minimum", "row", ["amount"], "(`amount` IS NULL OR `amount` >= 0)"),
                  _rule("key.unique", "unique", "group", ["id", "day"], None, nulls_distinct=True),
                  _rule("amount.bounded", "sql", "query", [], None,
                        query="SELECT count(*) FROM {object} WHERE `amount` > 1000000",
                        threshold={"operator": "mustBe", "unit": "rows", "value": 0})],
        "gate": {"publication": {"mode": "append"}, "violations": {"policy": "split_rows"}},
        "tables": tables,
    })


def run(root: Path) -> None:
    spark = get_session()
    plan = workload_plan(root)
    landing = root / "landing"
    landing.mkdir(parents=True)
    (landing / "batch.csv").write_text(
        "id,day,amount\na,2024-01-01,1.50\nb,2024-01-01,-2.00\nb,2024-01-01,3.00\nc,2024-01-02,\n", encoding="utf-8")
    staged = stage_candidate(spark, plan, "warmup-1")
    candidate = read_candidate(spark, staged["candidate"]["path"], format="delta", version=staged["version"])
    report = run_validation(spark, plan, candidate, submission_id="warmup-1")
    keys_across_batches(spark, plan, candidate.df, "warmup-1")
    publish(spark, plan, "warmup-1", staged["candidate"], staged["version"], "valid", report)
    quarantine(spark, plan, "warmup-1", staged["candidate"], staged["version"], report, "invalid")
    target = plan.require_tables().target
    assert target is not None  # the workload plan names its target
    tagged_commits(spark, target)
    spark.stop()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    root = Path(args[0])
    try:
        run(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
