"""Preview a contract version against history: what a plan would have decided about batches the
gate has already accepted, reading each batch as it was accepted and writing nothing.

A batch is read from its retained candidate at the validated version when the candidate is
still there (the whole batch, exactly as it was judged), else by Delta time travel on the
target: the rows the batch's commit added, ``target@after EXCEPT ALL target@before`` (for an
append, exactly its published rows; a ``replace_keys`` row equal to the one it replaced was
already there and is not counted again). A batch read from before the plan's version added a
column (the target, when the batch was published, lacked it) is judged as the migrated target
holds it: the column NULL (``steps.target.as_migrated``), named under ``added_columns``. A batch
whose candidate is gone and whose publish is not a commit of this target (it went to an earlier
major version's target, or the target's log no longer holds it) cannot be read again: it is listed
under ``unreadable`` with the reason, never read from another commit. Each is
validated with the same engine as a gate (``contract_gate_spark.validation.engine``); the result
holds, per batch, what the gate's branch needs to decide (outcome, schema, row counts, the
failing rules with their scope and status: rule ids and counts, never a value).
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame, SparkSession

from contract_gate_plan.addresses import Address
from contract_gate_plan.model import Plan, load_plan
from contract_gate_spark.steps.history import exists, tagged_commits
from contract_gate_spark.steps.target import as_migrated
from contract_gate_spark.validation.candidate import Candidate
from contract_gate_spark.validation.engine import run_validation


def preview(spark: SparkSession, plan: Plan | dict[str, Any], batches: list[dict[str, Any]],
            target: Address | dict[str, Any]) -> dict[str, Any]:
    """What validating each of ``batches`` (decision records: their ``submission_id``,
    ``contract_version``, ``candidate``, ``candidate_version``, ``target_version_before`` and
    ``target_version_after``) against ``plan`` finds, the target they were published to being
    ``target``. Returns ``{"contract", "batches": [...], "rules": [...]}``: per batch the
    validation's outcome, schema, row counts and failing rules, per rule the rows and batches it
    would have failed. What the gate would decide is the provider's (``contract_gate.evolution.preview``)."""
    plan, target = load_plan(plan), Address.of(target)
    results, unreadable = [], []
    for batch in batches:
        try:
            results.append(_preview_batch(spark, plan, batch, target))
        except BatchGone as gone:
            unreadable.append({"submission_id": batch["submission_id"], "reason": str(gone)})
    totals: dict[str, dict[str, Any]] = {}
    for result in results:
        for rule in result["failing_rules"]:
            total = totals.setdefault(rule["id"], {"id": rule["id"], "severity": rule["severity"],
                                                    "failed_rows": 0, "batches": 0})
            total["batches"] += 1
            total["failed_rows"] += rule["failed_rows"] or 0
    return {"contract": {"id": plan.contract_id, "version": plan.contract_version},
            "batches": results, "unreadable": unreadable,
            "rules": sorted(totals.values(), key=lambda r: (-r["batches"], r["id"]))}


class BatchGone(Exception):
    """A batch's rows can no longer be read exactly as they were accepted."""


def batch_rows(spark: SparkSession, plan: Plan, batch: dict[str, Any], target: Address,
               published_here: bool) -> tuple[DataFrame, str]:
    """The batch's rows and where they were read from (``candidate ...`` or ``target ...``). A
    candidate is read only where the gate keeps this submission's candidate (or the Delta landing
    it pinned), never a table because a decision row names it."""
    candidate, version = batch.get("candidate"), batch.get("candidate_version")
    landing = plan.require_tables().landing
    kept = {plan.candidate(batch["submission_id"]).location, *([landing.location] if landing else [])}
    if candidate in kept and version is not None:
        address = Address.from_location(candidate)
        if exists(spark, address):
            return _at(spark, address, version), f"candidate {candidate} @ version {version}"
    before, after = batch.get("target_version_before"), batch.get("target_version_after")
    if after is None:
        raise ValueError(f"submission {batch['submission_id']}: no retained candidate and no target version to read")
    if not published_here:
        raise BatchGone(f"its candidate is gone and {target.location} holds no commit {after} of it "
                        "(published to an earlier version's target, or gone from the target's log)")
    published = _at(spark, target, after)
    if before is not None and before >= 0:
        published = published.exceptAll(_at(spark, target, before).select(*published.columns))
    return published, f"target versions {before} -> {after}"


def _preview_batch(spark: SparkSession, plan: Plan, batch: dict[str, Any], target: Address) -> dict[str, Any]:
    here = _published_here(spark, target, batch)  # one history read, for the rows and the columns
    rows, source = batch_rows(spark, plan, batch, target, here)
    if here:  # the target as the batch's publication left it says which columns came later
        rows, added = as_migrated(plan, rows, _at(spark, target, batch["target_version_after"]).schema)
    else:  # published to an earlier version's target: the batch's own columns say it
        rows, added = as_migrated(plan, rows)
    report = run_validation(spark, plan, Candidate(rows, source, batch.get("candidate_version"), "delta"))
    schema = report["schema"]
    return {
        "submission_id": batch["submission_id"],
        "accepted_under": batch.get("contract_version"),
        "source": source,
        "rows": report["candidate"]["row_count"],
        "outcome": report["outcome"],
        "rows_valid": report["rows"]["valid"],
        "rows_invalid": report["rows"]["invalid"],
        "added_columns": added,
        "schema": {"ok": schema["ok"], "missing": schema["missing"], "unexpected": schema["unexpected"],
                   "type_mismatches": [m["column"] for m in schema["type_mismatches"]]},
        # counts only: a rule's measured value may be a data value (a reason never holds one; it
        # says, e.g., that a history rule was not judged on its history here). The rules the gate's
        # branch weighs: failed, or not evaluated for a reason other than not being the validation's own
        "failing_rules": [{"id": r["id"], "severity": r["severity"], "scope": r["scope"], "status": r["status"],
                           "failed_rows": r["failed_rows"], "reason": r["reason"]}
                          for r in report["rules"]
                          if r["passed"] is False or r["status"] not in ("evaluated", "not_executed")],
    }


def _published_here(spark: SparkSession, target: Address, batch: dict[str, Any]) -> bool:
    """Whether ``target``'s commit ``target_version_after`` is the batch's own publish."""
    after = batch.get("target_version_after")
    return after is not None and any(
        commit.version == after for commit in tagged_commits(spark, target, batch["submission_id"]))


def _at(spark: SparkSession, address: Address, version: int) -> DataFrame:
    return spark.sql(f"SELECT * FROM {address.sql_name} VERSION AS OF {int(version)}")
