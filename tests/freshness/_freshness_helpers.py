"""Real Delta targets written by real Spark, and contracts compiled by the real compiler, for the
freshness tests. Batches are tiny appends tagged with the submission id in ``userMetadata``,
exactly as the publish step writes them.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import yaml

from contract_gate.contract.compiler import compile_plan
from contract_gate.decisions import Decision, store_for

REPO = Path(__file__).resolve().parents[2]
CASES_SCHEMA = "region_code string, report_date date, reporting_org string, case_count bigint, status string"


def write_contract(folder: Path, base: str = "regional_daily_cases", alerts: dict | None = None,
                   classify: str | None = None, name: str | None = None) -> Path:
    """A copy of an example contract with gate alert settings (and optionally a classified
    column), so tests exercise the real loader and compiler."""
    document = yaml.safe_load((REPO / "contracts" / f"{base}.yaml").read_text())
    gate = next(p for p in document["customProperties"] if p["property"] == "contractGate")["value"]
    if alerts is not None:
        gate["alerts"] = alerts
    if classify:
        for prop in document["schema"][0]["properties"]:
            if prop["name"] == classify:
                prop["classification"] = "restricted"
    path = folder / f"{name or base}.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


def file_alerts(path: Path, *extra: dict) -> dict:
    return {"notifiers": [{"class": "contract_gate.notifications.file.FileNotifier",
                           "arguments": {"path": path.name}}, *extra]}


def plan_for(folder: Path, **kwargs) -> dict:
    return compile_plan(write_contract(folder, **kwargs))


def read_lines(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def publish_cases(spark, path: str | Path, submission_id: str, dates: list[dt.date], version: int = 1) -> None:
    """An accepted batch: one atomic append tagged with the submission id (as the publish step
    does, with Delta's idempotent-write options)."""
    rows = [(f"NL-{i:02d}", day, "org", 10 + i, "final") for i, day in enumerate(dates)]
    (spark.createDataFrame(rows, CASES_SCHEMA).write.format("delta").mode("append")
     .option("userMetadata", submission_id)
     .option("txnAppId", f"contract-gate:regional_daily_cases:{submission_id}").option("txnVersion", version)
     .save(str(path)))


def quarantine_cases(spark, path: str | Path, submission_id: str, dates: list[dt.date]) -> None:
    """A rejected batch: its rows go to the quarantine table, the target is not touched."""
    rows = [(f"NL-{i:02d}", day, "org", -1, "final", ["case_count.minimum"], submission_id)
            for i, day in enumerate(dates)]
    schema = f"{CASES_SCHEMA}, _errors array<string>, _submission_id string"
    spark.createDataFrame(rows, schema).write.format("delta").mode("append").save(str(path))


def record_decisions(plan: dict, *rows: tuple) -> None:
    """Decision records written by the gate's own decision store: (submission id, outcome,
    decided_at, latest business date, target version after, rerun_of)."""
    store = store_for(plan)
    for submission, outcome, decided_at, latest, version, rerun_of in rows:
        store.record(Decision(submission_id=submission, contract_id=plan.contract_id,
                              contract_version=plan.contract_version, outcome=outcome,
                              decided_at=decided_at.replace(tzinfo=dt.timezone.utc), latest_business_date=latest,
                              target_version_after=version, rerun_of=rerun_of))
