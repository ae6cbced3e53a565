"""Publish: the validated candidate version into the target, in one atomic, idempotent commit.

* The rows come from the candidate at the pinned ``version`` — the one the report judged — so
  the validated snapshot and the published snapshot are the same Delta version. With
  ``rows="valid"`` the engine's ``split`` of that same version picks the rows without
  error-level failures.
* ``append`` with a business key and ``replace_keys`` are MERGEs on the key: ``replace_keys``
  replaces matching rows and inserts the others (the replaced rows stay readable by time
  travel); ``append`` inserts and fails on any match, atomically, whether the key came from
  an earlier batch or a concurrent publish: the step then reports ``rejected`` with the
  ``key.unique_across_batches`` count. (The gate's validation job measures the plan's rule of
  that id beforehand, ``batch_keys``, so the branch quarantines such a batch instead of
  publishing into the failure.)
  ``append`` without a key is a plain append.
* Each commit is tagged and idempotent (``contract_gate_spark.steps.commits``): Delta skips the write of a
  submission already committed, whichever attempt or process committed it. After writing, the
  step reports ``published`` (this attempt made the commit) or ``already_published`` (Delta
  skipped the write: an earlier attempt or a twin run made it, and the target's history must
  hold that commit), never a silent no-op. Which of the two, Delta says itself: it sets the
  commit's version in the writing session's conf (``own_commit_version``). A MERGE that
  committed also returns the rows it wrote, so its step reads no history at all.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from contract_gate_plan.addresses import Address
from contract_gate_spark.validation.candidate import read_candidate
from contract_gate_spark.runtime.errors import CHECK_VIOLATED, NOT_NULL_VIOLATED, find_error
from contract_gate_spark.runtime.side_by_side import side_by_side
from contract_gate_spark.steps.commits import (
    is_conflict, own_commit_version, retry_conflicts, tagged_session,
)
from contract_gate_spark.validation.diagnostics import split
from contract_gate_spark.validation.references import pinned_in_report, with_found_flags
from contract_gate_spark.steps.history import current_version, exists, find_submission, just_committed
from contract_gate_plan.model import Plan, load_plan
from contract_gate_spark.steps.target import ensure_target, migrate_target
from contract_gate_plan.sql_text import quote_identifier, string_literal
from contract_gate_plan.keys_across_batches import KIND as _ACROSS_KIND, RULE_ID as KEYS_ACROSS_BATCHES, SCOPE as _ACROSS_SCOPE

ROWS = ("all", "valid")
_GUARD = f"contract-gate:{KEYS_ACROSS_BATCHES}"


class PublishRefused(ValueError):
    """The inputs say this candidate must not be published (wrong version, rejected report)."""


class ConstraintViolation(RuntimeError):
    """A target constraint rejected the rows. The message names the constraint only: Delta's
    own message lists the offending values, which may be classified."""


def read_pinned(spark: SparkSession, plan: Plan, candidate: Address, version: int) -> DataFrame:
    """The candidate exactly as validated: its Delta table at ``version``."""
    return read_candidate(spark, candidate.location, format="delta", version=version).df


def keys_across_batches(
    spark: SparkSession, plan: Plan, df: DataFrame, submission_id: str | None = None
) -> int:
    """The ``key.unique_across_batches`` measure: the number of candidate rows whose business key
    the target already holds (publishing them in ``append`` mode would duplicate keys across
    batches). A count only: no key value leaves this function.

    When ``submission_id`` is already published, the target is read as it was just before that
    commit, so a retry is not judged against its own rows. Keys compare NULL-safely, as the ``key.unique`` rule does.
    Only a batch whose keys the target holds has its history read (the usual batch has none).
    """
    plan = load_plan(plan)
    keys = plan.key
    target = plan.require_tables().require_target()
    if not keys or not exists(spark, target):
        return 0
    failed = _rows_with_held_keys(spark, keys, df, target)
    own = find_submission(spark, target, submission_id) if failed and submission_id else None
    if own is not None:
        failed = _rows_with_held_keys(spark, keys, df, target, version=own.version - 1)
    return failed


def _rows_with_held_keys(
    spark: SparkSession, keys: Sequence[str], df: DataFrame, target: Address, version: int | None = None
) -> int:
    """Rows of ``df`` whose key the target holds (at ``version``, else its latest)."""
    reader = spark.read.format("delta")
    if version is not None:
        reader = reader.option("versionAsOf", version)
    existing = target.read(reader)
    existing = existing.select(*[F.col(quote_identifier(k)).alias(f"_k{i}") for i, k in enumerate(keys)])
    batch = df.select(*[F.col(quote_identifier(k)).alias(f"_b{i}") for i, k in enumerate(keys)])
    condition = _key_match(keys, lambda i, k: F.col(f"_k{i}"), lambda i, k: F.col(f"_b{i}"))
    # The usual batch holds no key of the target: the target's keys stream past the batch's (a
    # broadcast where the batch is small) and one match ends the look; only then are rows counted.
    if existing.join(batch, condition, "left_semi").isEmpty():
        return 0
    return batch.join(existing, condition, "left_semi").count()  # a semi-join: the target's repeats change nothing


def publish(
    spark: SparkSession,
    plan: Plan | dict[str, Any] | str,
    submission_id: str,
    candidate: Address | dict[str, Any] | str,
    version: int,
    rows: str = "all",
    report: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Publish ``candidate`` at ``version`` to the plan's target; see the module docs.

    Returns ``{"status", "target_version_before", "target_version_after", "rows", "mode",
    "attempts", "latest_business_date"}``; status ``published``, ``already_published``, or
    ``rejected`` (with ``"rules": [the key.unique_across_batches entry]``, nothing written).
    ``latest_business_date`` is the maximum of the plan's freshness column over the published
    rows (ISO 8601; timestamps in UTC), or None. ``migration`` is there when the target was
    migrated to the plan first (``target.migrate_target``). Raises ``PublishRefused`` when ``report``
    does not vouch for this exact candidate version, ``TargetDriftError`` for a drifted
    target, ``ConstraintViolation`` when the target's constraints reject the rows.
    """
    plan = load_plan(plan)
    if rows not in ROWS:
        raise ValueError(f"rows must be one of {', '.join(ROWS)}, not {rows!r}")
    candidate = Address.of(candidate)
    _check_report(report, version, submission_id, rows)
    mode = plan.publication_mode
    if mode == "replace_keys" and not plan.key:
        raise PublishRefused("publication mode replace_keys needs a business key in the contract")
    target = plan.require_tables().require_target()
    migration = migrate_target(spark, plan, target)
    ensure_target(spark, plan, target)
    published = retry_conflicts(
        lambda attempt: _attempt(spark, plan, submission_id, candidate, version, rows, mode, attempt, report),
        f"publishing {submission_id} to {target.location}",
    )
    return {**published, "migration": migration} if migration else published


def _check_report(
    report: dict[str, Any] | None,
    version: int,
    submission_id: str,
    rows: str,
) -> None:
    """Refuse to publish anything but the snapshot the report validated and accepted."""
    if report is None:
        return
    judged = report.get("candidate") or {}
    if judged.get("version") != version:
        raise PublishRefused(
            f"the report validated version {judged.get('version')} of the candidate;"
            f" refusing to publish version {version}"
        )
    if report.get("submission_id") not in (None, submission_id):
        raise PublishRefused(f"the report is for submission {report['submission_id']}")
    if rows == "all" and report.get("outcome") == "fail":
        raise PublishRefused("the report rejected this candidate; only rows='valid' may publish")


def _attempt(
    spark: SparkSession,
    plan: Plan,
    submission_id: str,
    candidate: Address,
    version: int,
    rows: str,
    mode: str,
    attempt: int,
    report: dict[str, Any] | None,
) -> dict[str, Any]:
    target = plan.require_tables().require_target()
    session = tagged_session(spark, plan, submission_id)
    df = read_pinned(session, plan, candidate, version)
    if rows == "valid":  # on every column the candidate has: a CSV's unfit-value marker is one
        # foreign keys read their targets at the versions the report judged
        df = split(with_found_flags(session, df, pinned_in_report(plan, report)), plan)[0]
    df = df.select(*[F.col(quote_identifier(c.name)) for c in plan.columns])
    # The business date is read beside the commit: a second query of the same snapshot, whose
    # fixed costs overlap the MERGE's instead of following them.
    dated = side_by_side(lambda: latest_business_date(plan, df), "business-date")

    def result(outcome: dict[str, Any]) -> dict[str, Any]:
        return {"mode": mode, "attempts": attempt, "latest_business_date": dated.result(), **outcome}

    try:  # a submission already committed is skipped by Delta (its txnAppId), before any join
        written = _commit(session, plan, df, target, mode)
    except Exception as exc:  # noqa: BLE001 - only two kinds are translated, the rest re-raised
        violated = find_error(exc, CHECK_VIOLATED + NOT_NULL_VIOLATED)
        if violated is not None:  # its name only: its parameter ``values`` quotes the row
            name = violated.parameters.get("constraintName", "NOT NULL")
            raise ConstraintViolation(
                f"target constraint {name} rejected rows of {submission_id}; nothing was published"
            ) from None
        # The guard's raise_error fails a task of the MERGE, which then wrote nothing
        # (TASK_WRITE_FAILED, caused by USER_RAISED_EXCEPTION, in either kind of session): the
        # step counts the keys the target holds, the guard's one trigger (an append MERGE whose
        # target holds none of the keys has nothing for the guard to fire on).
        # A lost commit race is retried (``retry_conflicts``); a twin's commit of this very
        # submission holds our keys too, so it is left out of the count.
        guarded = mode == "append" and plan.key and not is_conflict(exc)
        held = keys_across_batches(session, plan, df, submission_id) if guarded else 0
        if held:  # nothing was written: the target's current version is the one before
            return result(_rejected(current_version(spark, target), plan.key, held))
        raise
    committed = own_commit_version(session)
    if committed is not None and written is not None:  # a MERGE that committed says all itself
        return result(_outcome("published", committed, written))
    # A plain append (its rows are in its commit, the newest), or a write Delta skipped (an earlier
    # commit's, searched for)
    look = just_committed if committed is not None else find_submission
    done = look(spark, target, submission_id)
    if done is None:
        raise RuntimeError(
            f"the target did not advance and its history has no commit of {submission_id}"
            " (Delta skipped the write as already applied, but the commit is past log retention)"
        )
    return result(_outcome("published" if committed is not None else "already_published", done.version,
                           done.rows_written()))


def _commit(
    session: SparkSession, plan: Plan, df: DataFrame, target: Address, mode: str
) -> int | None:
    """The one commit, in ``session`` (tagged): see the module docs for the three shapes.

    Whether it committed is :func:`own_commit_version`'s to say. Returns the rows a MERGE wrote
    (inserted plus updated, as ``TaggedCommit.rows_written`` counts them; 0 when Delta skipped
    it), None for a plain append, which does not say."""
    keys = plan.key
    if not keys:
        writer = df.write.format("delta").mode("append")
        target.write(writer)
        return None
    # MERGE INTO in SQL, which any session offers (a Spark Connect client has no DeltaTable
    # API); the rows come through a temporary view of the tagged session, dropped afterwards.
    source = f"contract_gate_publish_{uuid.uuid4().hex}"
    condition = " AND ".join(f"t.{quote_identifier(k)} <=> s.{quote_identifier(k)}" for k in keys)
    if mode == "replace_keys":
        matched = "UPDATE SET *"
    else:  # the guard: any match fails the MERGE (see ``_attempt``)
        matched = f"UPDATE SET t.{quote_identifier(keys[0])} = raise_error({string_literal(_GUARD)})"
    df.createOrReplaceTempView(source)
    try:
        metrics = session.sql(
            f"MERGE INTO {target.sql_name} AS t USING {source} AS s ON {condition}"
            f" WHEN MATCHED THEN {matched} WHEN NOT MATCHED THEN INSERT *"
        ).collect()
        return sum(int(row["num_inserted_rows"]) + int(row["num_updated_rows"]) for row in metrics)
    finally:
        session.catalog.dropTempView(source)


def _key_match(
    keys: Sequence[str], left: Callable[[int, str], Column], right: Callable[[int, str], Column]
) -> Column:
    condition = F.lit(True)
    for index, key in enumerate(keys):
        condition = condition & left(index, key).eqNullSafe(right(index, key))
    return condition


def _outcome(status: str, version: int, rows: int) -> dict[str, Any]:
    return {"status": status, "target_version_before": version - 1, "target_version_after": version, "rows": rows}


def _rejected(before: int | None, keys: tuple[str, ...], held: int) -> dict[str, Any]:
    check = {"id": KEYS_ACROSS_BATCHES, "kind": _ACROSS_KIND, "scope": _ACROSS_SCOPE, "columns": list(keys),
             "severity": "error", "failed_rows": held, "passed": False}
    return {
        "status": "rejected",
        "target_version_before": before,
        "target_version_after": before,
        "rows": 0,
        "rules": [check],
    }


def latest_business_date(plan: Plan, df: DataFrame) -> str | None:
    """Max of the freshness column over ``df`` as ISO 8601 (dates as dates, timestamps in
    UTC), computed in Spark so the session or worker time zone cannot shift it."""
    freshness = plan.freshness
    if not freshness:
        return None
    column = F.col(quote_identifier(freshness.column))
    if freshness.column_type == "date":
        return _aggregate(df, F.date_format(F.max(column), "yyyy-MM-dd"))
    if freshness.column_type == "timestamp_ntz":
        column = column.cast("timestamp")  # a wall-clock time; read in the session zone
    micros = _aggregate(df, F.unix_micros(F.max(column)))
    if micros is None:
        return None
    return datetime.fromtimestamp(micros / 1_000_000, tz=timezone.utc).isoformat()


def _aggregate(df: DataFrame, column: Column) -> Any:
    """The value of a global aggregate of ``df``, which has exactly one row."""
    (row,) = df.agg(column).collect()
    return row[0]
