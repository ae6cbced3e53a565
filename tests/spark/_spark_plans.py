"""Hand-written ValidationPlans (docs/plan-format.md) and tiny data for the Spark tests.

They follow what the compiler writes for the regional_daily_cases contract, so the engine
is tested on its own, independently of the compiler.
"""

from __future__ import annotations

import copy
from datetime import date
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from contract_gate_plan.sql_allowlist import check_expression, check_query

CASES_DDL = (
    "region_code string, report_date date, reporting_org string, case_count bigint, status string"
)
D = date(2024, 3, 1)
NOT_BLANK = r"RLIKE '[^\\s\\p{Z}]'"


def _rule(rule_id: str, kind: str, columns: list[str], predicate: str | None = None, **extra: Any) -> dict[str, Any]:
    scope = {"unique": "group", "row_count": "dataset", "metric": "dataset", "sql": "query", "text": "text"}
    rule = {
        "id": rule_id,
        "kind": kind,
        "scope": scope.get(kind, "row"),
        "columns": columns,
        "severity": "error",
        "source": f"test.{rule_id}",
        "enforceable": False,
        "description": None,
    }
    if predicate is not None:
        rule["predicate"] = predicate
    rule.update(extra)
    return canonical(rule)


def canonical(rule: dict[str, Any]) -> dict[str, Any]:
    """The rule with its SQL in the form the compiler writes, which the Spark side requires
    (``contract_gate_plan.sql_allowlist``); SQL the allow-list refuses is left as written."""
    placeholders = ["object", *(["property"] if rule["columns"] else [])]
    for key in ("predicate", "filter", "query"):
        if isinstance(rule.get(key), str):
            try:
                rule[key] = check_query(rule[key], placeholders) if key == "query" else check_expression(rule[key])
            except ValueError:
                pass
    return rule


def cases_plan(**overrides: Any) -> dict[str, Any]:
    """The regional_daily_cases plan: 4 required columns, a non-blank region code, a
    non-negative count, a status list, a composite key and a non-empty batch."""
    plan = {
        "plan_version": 1,
        "contract": {"id": "regional_daily_cases", "version": "1.0.0", "name": "Cases", "domain": "health"},
        "object": "regional_daily_cases",
        "environment": "dev",
        "columns": [
            {"name": "region_code", "type": "string", "nullable": False, "classification": None,
             "description": "ISO region", "sample_allowed": True},
            {"name": "report_date", "type": "date", "nullable": False, "classification": None,
             "description": "Day reported", "sample_allowed": False},
            {"name": "reporting_org", "type": "string", "nullable": False, "classification": "restricted",
             "description": "Who reported", "sample_allowed": True},
            {"name": "case_count", "type": "bigint", "nullable": False, "classification": None,
             "description": "Cases that day", "sample_allowed": True},
            {"name": "status", "type": "string", "nullable": True, "classification": None,
             "description": None, "sample_allowed": False},
        ],
        "key": ["region_code", "report_date"],
        "rules": [
            _rule("region_code.required", "required", ["region_code"], "region_code IS NOT NULL"),
            _rule("report_date.required", "required", ["report_date"], "report_date IS NOT NULL"),
            _rule("reporting_org.required", "required", ["reporting_org"], "reporting_org IS NOT NULL"),
            _rule("case_count.required", "required", ["case_count"], "case_count IS NOT NULL"),
            _rule("region_code.not_blank", "not_blank", ["region_code"], f"region_code {NOT_BLANK}"),
            _rule("case_count.minimum", "minimum", ["case_count"], "case_count >= 0"),
            _rule("status.enum", "enum", ["status"],
                  "(status IS NULL OR status IN ('confirmed', 'provisional', 'revised'))"),
            _rule("key.unique", "unique", ["region_code", "report_date"], nulls_distinct=True),
            _rule("dataset.row_count", "row_count", [],
                  threshold={"operator": "mustBeGreaterThan", "value": 0, "unit": "rows"}),
        ],
        "schema_policy": "strict",
        "freshness": None,
        "gate": None,
        "tables": None,
    }
    plan.update(overrides)
    return plan


def with_rules(plan: dict[str, Any], *rules: dict[str, Any]) -> dict[str, Any]:
    plan = copy.deepcopy(plan)
    plan["rules"] = list(rules)
    return plan


def rule(rule_id: str, kind: str, columns: list[str], predicate: str | None = None, **extra: Any) -> dict[str, Any]:
    return _rule(rule_id, kind, columns, predicate, **extra)


def good_row(region: str = "NL-NH", day: int = 1, count: int = 5, status: str | None = "confirmed") -> tuple:
    return (region, date(2024, 3, day), "GGD", count, status)


def cases_df(spark: SparkSession, rows: list[tuple], ddl: str = CASES_DDL) -> DataFrame:
    return spark.createDataFrame(rows, ddl)


def failed(report: dict[str, Any]) -> dict[str, int]:
    """{rule id: failed rows} for every evaluated rule that counted failures."""
    return {r["id"]: r["failed_rows"] for r in report["rules"] if r["failed_rows"]}


def rule_entry(report: dict[str, Any], rule_id: str) -> dict[str, Any]:
    return next(r for r in report["rules"] if r["id"] == rule_id)
