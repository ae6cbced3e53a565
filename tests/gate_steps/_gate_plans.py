"""Plans from the example contracts, with every table under one test folder, and tiny data."""

from __future__ import annotations

import copy
import json
from datetime import date
from pathlib import Path
from typing import Any

import yaml

from contract_gate.contract.compiler import compile_plan
from contract_gate.contract.loader import load_contract_text
from contract_gate_plan.document import read_document

ROOT = Path(__file__).resolve().parents[2]
_COMPILED: dict[tuple[str, str], dict[str, Any]] = {}

CASES_DDL = "region_code string, report_date date, reporting_org string, case_count bigint, status string"


def plan_for(contract: str, root: Path | str | None, **gate: Any) -> dict[str, Any]:
    """The compiled plan of ``contracts/<contract>.yaml`` with its tables under ``root``
    (None: the compiler's relative paths); ``gate`` overrides gate settings (e.g.
    ``publication={"mode": "replace_keys"}``)."""
    plan = copy.deepcopy(_compiled(contract, gate))
    plan.pop("fingerprint")
    for address in plan["tables"].values():
        if root is not None and address["kind"] == "path":
            address["path"] = f"{root}/{address['path']}"
    return read_document(plan)


def _compiled(contract: str, gate: dict[str, Any]) -> dict[str, Any]:
    """The plan of the contract as if its gate settings also said ``gate``: compiled, so whatever
    follows from a setting follows here too (the cross-batch key rule comes with ``append``)."""
    key = (contract, json.dumps(gate, sort_keys=True))
    if key not in _COMPILED:
        path = ROOT / "contracts" / f"{contract}.yaml"
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        next(c for c in data["customProperties"] if c["property"] == "contractGate")["value"].update(gate)
        _COMPILED[key] = compile_plan(load_contract_text(yaml.safe_dump(data, sort_keys=False), str(path))).document
    return _COMPILED[key]


def case(region: str, day: int, count: int = 5, status: str = "final", org: str = "GGD") -> tuple:
    return (region, date(2024, 3, day), org, count, status)


def cases_df(spark, rows: list[tuple]):
    return spark.createDataFrame(rows, CASES_DDL)


def write_csv(path: Path, rows: list[tuple]) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    lines = ["region_code,report_date,reporting_org,case_count,status"]
    lines += [",".join(str(v) for v in row) for row in rows]
    (path / "batch.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def order(order_id: str, total: float = 10.0, currency: str = "EUR", hour: int = 1) -> dict[str, Any]:
    return {"order_id": order_id, "customer_id": "c-" + order_id, "order_total": total,
            "currency": currency, "order_timestamp": f"2024-03-01T{hour:02d}:00:00Z"}


def write_json(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "batch.json").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def table_rows(spark, address: dict[str, Any], version: int | None = None) -> list:
    reader = spark.read.format("delta")
    if version is not None:
        reader = reader.option("versionAsOf", version)
    return reader.load(address["path"]).collect()


def version_of(spark, address: dict[str, Any]) -> int:
    return int(spark.sql(f"DESCRIBE HISTORY delta.`{address['path']}` LIMIT 1").first()["version"])




def mapped_plan(root: Path) -> dict[str, Any]:
    """A small plan whose column names need Delta column mapping (space, comma, braces)."""
    def rule(rule_id, kind, column, predicate):
        return {"id": rule_id, "kind": kind, "scope": "row", "columns": [column], "severity": "error",
                "source": rule_id, "enforceable": True, "description": None, "filter": None,
                "threshold": None, "predicate": predicate}

    tables = {name: {"kind": "path", "path": f"{root}/lakehouse/{name}", "format": "delta"}
              for name in ("target", "quarantine", "decisions")}
    tables["candidate_schema"] = {"kind": "path", "path": f"{root}/lakehouse/_candidates", "format": "delta"}
    tables["landing"] = {"kind": "path", "path": f"{root}/landing", "format": "parquet"}
    return read_document({
        "plan_version": 1, "contract": {"id": "mapped", "version": "1.0.0"}, "object": "mapped",
        "environment": None, "schema_policy": "strict", "freshness": None, "delta_column_mapping": True,
        "columns": [{"name": "order id", "type": "string", "nullable": False},
                    {"name": "amount {EUR}, net", "type": "double", "nullable": True}],
        "key": ["order id"],
        "rules": [rule("order_id.required", "required", "order id", "`order id` IS NOT NULL"),
                  rule("amount.minimum", "minimum", "amount {EUR}, net",
                       "(`amount {EUR}, net` IS NULL OR `amount {EUR}, net` >= 0)")],
        "gate": {"publication": {"mode": "append"}}, "tables": tables,
    })
