"""Publish: the validated candidate version into the target, in one atomic, idempotent commit.

* The rows come from the candidate at the pinned ``version`` — the one the report judged — so
  the validated snapshot and the published snapshot are the same Delta version. With
  ``rows="valid"`` the engine's ``split`` of that same version picks the rows without
  error-level failures.
* ``append`` with a business key and ``replace_keys`` are MERGEs on the key: ``replace_keys``
  replaces matching rows and inserts the others (the replaced rows stay readable by time
  travel); ``append`` inserts and fails on any match, atomically, whether the key came from
  an earlier batch or a concurrent publish: the step then reports ``rejected`` with the
  ``key.unique_across_batches`` count. (The gate's validation job runs the same check
  beforehand, so the branch quarantines such a batch instead of publishing into the failure.)
  ``append`` without a key is a plain append.
* Each commit is tagged and idempotent (``spark_jobs.steps.commits``): Delta skips the write of a
  submission already committed, whichever attempt or process committed it. After writing, the
  target's history must hold this submission's commit: the step reports ``published`` (the
  version advanced with it) or ``already_published`` (a previous attempt's commit), never a
  silent no-op.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from delta.tables import DeltaTable
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from contract_plan.addresses import as_address, location, resolve
from spark_jobs.validation.candidate import read_candidate
from spark_jobs.runtime.errors import CHECK_VIOLATED, NOT_NULL_VIOLATED, USER_RAISED, find_error
from spark_jobs.steps.commits import retry_conflicts, tagged_session
from spark_jobs.validation.diagnostics import split
from spark_jobs.steps.history import current_version, exists, find_submission
from contract_plan.document import load_plan
from spark_jobs.validation.rule_columns import quote
from contract_plan.tagged_commit import TaggedCommit
from spark_jobs.steps.target import ensure_target

KEYS_ACROSS_BATCHES = "key.unique_across_batches"
ROWS = ("all", "valid")
_GUARD = f"contract-gate:{KEYS_ACROSS_BATCHES}"


class PublishRefused(ValueError):
    """The inputs say this candidate must not be published (wrong version, rejected report)."""


class ConstraintViolation(RuntimeError):
    """A target constraint rejected the rows. The message names the constraint only: Delta's
    own message lists the offending values, which may be classified."""


def publication_mode(plan: dict[str, Any]) -> str:
    return ((plan.get("gate") or {}).get("publication") or {}).get("mode", "append")


def read_pinned(
    spark: SparkSession, plan: dict[str, Any], candidate: dict[str, Any] | str, version: int
) -> DataFrame:
    """The candidate exactly as validated: its Delta table at ``version``."""
    resolved = resolve(as_address(candidate))
    where = resolved["path"] if resolved["kind"] == "path" else resolved["name"]
    return read_candidate(spark, where, format="delta", version=version).df


def keys_across_batches(
    spark: SparkSession, plan: dict[str, Any], df: DataFrame, submission_id: str | None = None
) -> dict[str, Any]:
    """The ``key.unique_across_batches`` check: candidate rows whose business key the target
    already holds (publishing them in ``append`` mode would duplicate keys across batches).

    Returns a report-style rule entry with ``failed_rows``. When ``submission_id`` is already
    published, the target is read as it was just before that commit, so a retry is not
    judged against its own rows. Keys compare NULL-safely, as the ``key.unique`` rule does.
    Only a batch whose keys the target holds has its history read (the usual batch has none).
    """
    plan = load_plan(plan)
    keys = plan["key"]
    entry = {
        "id": KEYS_ACROSS_BATCHES,
        "kind": "unique",
        "scope": "group",
        "columns": list(keys),
        "severity": "error",
        "threshold": None,
        "status": "evaluated",
        "failed_rows": 0,
        "passed": True,
    }
    target = resolve(plan["tables"]["target"])
    if not keys or not exists(spark, target):
        return entry
    failed = _rows_with_held_keys(spark, keys, df, target)
    own = find_submission(spark, target, submission_id) if failed and submission_id else None
    if own is not None:
        failed = _rows_with_held_keys(spark, keys, df, target, version=own.version - 1)
    entry["failed_rows"] = failed
    entry["passed"] = failed == 0
    return entry


def _rows_with_held_keys(
    spark: SparkSession, keys: list[str], df: DataFrame, target: dict[str, Any], version: int | None = None
) -> int:
    """Rows of ``df`` whose key the target holds (at ``version``, else its latest)."""
    reader = spark.read.format("delta")
    if version is not None:
        reader = reader.option("versionAsOf", version)
    existing = reader.load(target["path"]) if target["kind"] == "path" else reader.table(target["name"])
    existing = existing.select(*[F.col(quote(k)).alias(f"_k{i}") for i, k in enumerate(keys)])
    condition = _key_match(keys, lambda i, k: F.col(f"_k{i}"), lambda i, k: df[quote(k)])
    return df.join(existing.distinct(), condition, "left_semi").count()


def publish(
    spark: SparkSession,
    plan: dict[str, Any] | str,
    submission_id: str,
    candidate: dict[str, Any] | str,
    version: int,
    rows: str = "all",
    report: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Publish ``candidate`` at ``version`` to the plan's target; see the module docs.

    Returns ``{"status", "target_version_before", "target_version_after", "rows", "mode",
    "attempts", "latest_business_date"}``; status ``published``, ``already_published``, or
    ``rejected`` (with ``"rules": [the key.unique_across_batches entry]``, nothing written).
    ``latest_business_date`` is the maximum of the plan's freshness column over the published
    rows (ISO 8601; timestamps in UTC), or None. Raises ``PublishRefused`` when ``report``
    does not vouch for this exact candidate version, ``TargetDriftError`` for a drifted
    target, ``ConstraintViolation`` when the target's constraints reject the rows.
    """
    plan = load_plan(plan)
    if rows not in ROWS:
        raise ValueError(f"rows must be one of {', '.join(ROWS)}, not {rows!r}")
    candidate = as_address(candidate)
    _check_report(report, version, submission_id, rows)
    mode = publication_mode(plan)
    if mode == "replace_keys" and not plan["key"]:
        raise PublishRefused("publication mode replace_keys needs a business key in the contract")
    target = resolve(plan["tables"]["target"])
    ensure_target(spark, plan, target)
    return retry_conflicts(
        lambda attempt: _attempt(spark, plan, submission_id, candidate, version, rows, mode, attempt),
        f"publishing {submission_id} to {location(target)}",
    )


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
    plan: dict[str, Any],
    submission_id: str,
    candidate: dict[str, Any],
    version: int,
    rows: str,
    mode: str,
    attempt: int,
) -> dict[str, Any]:
    target = resolve(plan["tables"]["target"])
    session = tagged_session(spark, plan, submission_id)
    df = read_pinned(session, plan, candidate, version)
    if rows == "valid":  # on every column the candidate has: a CSV's unfit-value marker is one
        df = split(df, plan)[0]
    df = df.select(*[F.col(quote(c["name"])) for c in plan["columns"]])
    # The business date is read after the commit (when the MERGE has warmed up this JVM's
    # reading of the candidate), so it costs a cheap second pass instead of a cold first one.
    def result(outcome: dict[str, Any]) -> dict[str, Any]:
        return {"mode": mode, "attempts": attempt, "latest_business_date": latest_business_date(plan, df), **outcome}

    before = current_version(spark, target)
    try:  # a submission already committed is skipped by Delta (its txnAppId), before any join
        _commit(session, plan, df, target, mode)
    except Exception as exc:  # noqa: BLE001 - only two kinds are translated, the rest re-raised
        raised = find_error(exc, USER_RAISED)  # the guard's raise_error, the cause of a failed MERGE task
        if raised is not None and raised.parameters.get("errorMessage") == _GUARD:
            # the target holds some of our keys (the MERGE wrote nothing): count them
            return result(_rejected(before, keys_across_batches(session, plan, df)))
        violated = find_error(exc, CHECK_VIOLATED + NOT_NULL_VIOLATED)
        if violated is not None:  # its name only: its parameter ``values`` quotes the row
            name = violated.parameters.get("constraintName", "NOT NULL")
            raise ConstraintViolation(
                f"target constraint {name} rejected rows of {submission_id}; nothing was published"
            ) from None
        raise
    done = find_submission(spark, target, submission_id)
    if done is None:
        raise RuntimeError(
            f"the target did not advance and its history has no commit of {submission_id}"
            " (Delta skipped the write as already applied, but the commit is past log retention)"
        )
    # Delta skipped the write when an earlier attempt (or a twin run) committed it: that commit
    # is then older than ``before``. A twin that committed between ``before`` and our write also
    # makes Delta skip ours; both then say "published" about the one commit, still the only one.
    status = "published" if before is None or done.version > before else "already_published"
    return result(_outcome(status, done))


def _commit(
    session: SparkSession, plan: dict[str, Any], df: DataFrame, target: dict[str, Any], mode: str
) -> None:
    """The one commit, in ``session`` (tagged): see the module docs for the three shapes."""
    keys = plan["key"]
    if not keys:
        writer = df.write.format("delta").mode("append")
        writer.save(target["path"]) if target["kind"] == "path" else writer.saveAsTable(target["name"])
        return
    table = (
        DeltaTable.forPath(session, target["path"])
        if target["kind"] == "path"
        else DeltaTable.forName(session, target["name"])
    )
    condition = _key_match(keys, lambda i, k: F.col(f"t.{quote(k)}"), lambda i, k: F.col(f"s.{quote(k)}"))
    merge = table.alias("t").merge(df.alias("s"), condition)
    if mode == "replace_keys":
        merge = merge.whenMatchedUpdateAll()
    else:
        merge = merge.whenMatchedUpdate(set={quote(keys[0]): F.raise_error(F.lit(_GUARD))})
    merge.whenNotMatchedInsertAll().execute()


def _key_match(keys: list[str], left, right) -> Column:
    condition = F.lit(True)
    for index, key in enumerate(keys):
        condition = condition & left(index, key).eqNullSafe(right(index, key))
    return condition


def _outcome(status: str, commit: TaggedCommit) -> dict[str, Any]:
    return {
        "status": status,
        "target_version_before": commit.version - 1,
        "target_version_after": commit.version,
        "rows": commit.rows_written(),
    }


def _rejected(before: int | None, check: dict[str, Any]) -> dict[str, Any]:
    return {
        "status": "rejected",
        "target_version_before": before,
        "target_version_after": before,
        "rows": 0,
        "rules": [check],
    }


def latest_business_date(plan: dict[str, Any], df: DataFrame) -> str | None:
    """Max of the freshness column over ``df`` as ISO 8601 (dates as dates, timestamps in
    UTC), computed in Spark so the session or worker time zone cannot shift it."""
    freshness = plan.get("freshness")
    if not freshness:
        return None
    column = F.col(quote(freshness["column"]))
    if freshness.get("column_type", "timestamp") == "date":
        value = df.agg(F.date_format(F.max(column), "yyyy-MM-dd")).first()[0]
        return value
    if freshness.get("column_type") == "timestamp_ntz":
        column = column.cast("timestamp")  # a wall-clock time; read in the session zone
    micros = df.agg(F.unix_micros(F.max(column))).first()[0]
    if micros is None:
        return None
    return datetime.fromtimestamp(micros / 1_000_000, tz=timezone.utc).isoformat()
