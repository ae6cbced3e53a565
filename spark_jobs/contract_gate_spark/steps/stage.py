"""Stage: freeze a landed batch as the immutable candidate every later step reads.

Files (CSV, JSON, Parquet) can change under the gate's feet, so they are copied once into a
restricted candidate Delta table (``errorifexists``) at ``<candidate schema>/<object>__<id>``;
its version is the snapshot validated and published. Delta landing is already versioned: it
is pinned at its current version instead, without a copy.

A retried stage finds the candidate its first attempt committed and returns it: a Delta
commit is all-or-nothing, so an existing candidate is a complete one, and the submission id
(derived from the landed batch) guarantees it holds the same batch. A JSON candidate frozen
under an earlier contract version gets the optional columns this version adds, NULL in every
row, as staging it now would (the same rows; the version returned is the newest). A candidate created now
is version 0 by construction, and its commit in the Delta log says how many rows it wrote, so
only a retry (or a catalog candidate) reads the table's history. The candidate carries this
contract's ownership properties (role ``candidate``) from that first commit; retention drops
only candidates that say they are this contract's. A local file landing holding a link or a
special file is refused before Spark reads it (:mod:`contract_gate_plan.landing_files`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import posixpath

from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import DataType, StructField

from contract_gate_plan.addresses import Address, glob_literal
from contract_gate_spark.validation.candidate import read_candidate
from contract_gate_spark.runtime.errors import NOT_A_DELTA_TABLE, PATH_EXISTS, TABLE_EXISTS, has_condition
from contract_gate_spark.steps.columns import add_missing_columns
from contract_gate_spark.steps.commits import tagged_session
from contract_gate_spark.steps.history import current_version, find_submission, just_committed
from contract_gate_plan.ownership import owner_properties, require_owner
from contract_gate_plan.model import Plan, load_plan
from contract_gate_plan.landing_files import landing_entries
from contract_gate_plan.restricted import local_folder, local_path, make_private_folder, restrict_tree, statistics_properties
from contract_gate_plan.table_ddl import table_properties


def stage_candidate(
    spark: SparkSession,
    plan: Plan | dict[str, Any] | str,
    submission_id: str,
    landing: Address | dict[str, Any] | str | None = None,
) -> dict[str, Any]:
    """Freeze the landing (the plan's, or ``landing``: an address or a path) as a candidate.

    Returns ``{"candidate": address document, "version", "row_count", "status"}`` with status
    ``staged`` (copied now), ``already_staged`` (a previous attempt's copy) or ``pinned``
    (Delta landing at its current version). A path given as ``landing`` keeps the plan
    landing's format and reader options.
    """
    plan = load_plan(plan)
    source = _landing(plan, landing)
    if source.format == "delta":
        return _pin(spark, plan, source)
    target = plan.candidate(submission_id)
    landed = local_path(source.location) if source.is_path else None
    if landed:  # Spark would follow a link the producer put in the landing
        landing_entries(landed)
    batch = read_candidate(
        tagged_session(spark, plan, submission_id, idempotent=False),
        source.location,
        format=source.format,
        options=dict(source.options),
        columns=plan.columns,
    ).df
    private = local_folder(target)
    if private:  # owner-only before its first file exists (contract_gate_plan.restricted)
        make_private_folder(posixpath.dirname(private))  # the candidate schema's folder
        make_private_folder(private)
    wrote = _write_once(spark, batch, plan, target)
    if private:
        restrict_tree(private)
    rows = _rows_created(spark, target) if wrote else None
    if rows is not None:
        return {"candidate": target.as_document(), "version": 0, "row_count": rows, "status": "staged"}
    if wrote:  # a catalog candidate, whose commit is its table's newest
        commit = just_committed(spark, target, submission_id)
        assert commit is not None  # the table was created now, by this session's commit
        return {"candidate": target.as_document(), "version": commit.version, "row_count": commit.rows_written(),
                "status": "staged"}
    # a retry's candidate, or a table someone else put there: ours only if it says so
    require_owner(spark, plan, target, "candidate")
    created = find_submission(spark, target, submission_id)  # the commit that created it
    if created is None:
        raise RuntimeError(
            f"candidate {target.location} exists but was not written for {submission_id}"
        )
    if source.format == "json":
        _add_optional_columns(tagged_session(spark, plan, submission_id, idempotent=False), plan, target)
    return {
        "candidate": target.as_document(),
        "version": current_version(spark, target),
        "row_count": created.rows_written(),
        "status": "already_staged",
    }


def _add_optional_columns(spark: SparkSession, plan: Plan, target: Address) -> None:
    """A JSON candidate frozen by a run of an earlier contract version (one stopped before its
    verdict) lacks the optional columns this version adds. Staged now, no record naming them,
    they would be NULL in every row (``read_candidate``: JSON has no header), so they are added
    so, as commits of the submission: the same rows, read as this version reads them. A column
    the candidate has stays, and a required column it lacks is still missing."""
    have = set(target.read(spark.read.format("delta")).schema.names)
    add_missing_columns(spark, target, [StructField(c.name, DataType.fromDDL(c.type))
                                        for c in plan.columns if c.nullable and c.name not in have])


def _landing(plan: Plan, landing: Address | dict[str, Any] | str | None) -> Address:
    planned = plan.tables.landing if plan.tables else None
    if landing is None:
        if planned is None:
            raise ValueError("the plan has no landing address and none was given")
        return planned
    if isinstance(landing, str) and planned is not None:
        given = Address.from_location(landing, planned.format)
        return replace(planned, kind=given.kind, path=given.path, name=given.name)
    return Address.of(landing)


def _pin(spark: SparkSession, plan: Plan, source: Address) -> dict[str, Any]:
    candidate = read_candidate(spark, source.location, format="delta", options=dict(source.options))
    return {
        "candidate": source.as_document(),
        "version": candidate.version,
        "row_count": candidate.df.count(),
        "status": "pinned",
    }


def _write_once(spark: SparkSession, batch: DataFrame, plan: Plan, target: Address) -> bool:
    """Write ``batch`` (read through a tagged session, so the commit names the submission) as
    a new Delta table at ``target``, carrying this contract's ownership properties from its
    first commit (a CREATE TABLE AS SELECT: ``DataFrameWriter`` options only set ``delta.*``
    properties); False when that table already exists.

    A path candidate's folder that holds no commit is what an attempt of this submission left
    when it died in its CREATE TABLE AS SELECT (its data files and log folder, a server's query
    that ran on after its client was killed): no reader sees those files, and it would refuse
    every retry as existing, so it is replaced (files not in a commit stay invisible)."""
    properties = {**owner_properties(plan.contract_id, "candidate"), **table_properties(plan),
                  **statistics_properties(plan.columns, [(f.name, f.dataType.simpleString()) for f in batch.schema.fields])}
    writer = batch.writeTo(target.sql_name).using("delta")
    for key, value in properties.items():
        writer = writer.tableProperty(key, value)
    try:
        writer.create()
    except AnalysisException as exc:
        if not has_condition(exc, PATH_EXISTS + TABLE_EXISTS):
            raise
        if not (target.is_path and _never_committed(spark, target)):
            return False
        writer.createOrReplace()
    return True


def _never_committed(spark: SparkSession, target: Address) -> bool:
    """Whether the path ``target`` holds no Delta commit (a folder without a table)."""
    try:
        spark.sql(f"DESCRIBE DETAIL {target.sql_name}").collect()
    except AnalysisException as exc:
        if has_condition(exc, NOT_A_DELTA_TABLE):
            return True
        raise
    return False


def _rows_created(spark: SparkSession, target: Address) -> int | None:
    """The rows the CREATE TABLE AS SELECT of a path candidate wrote, from its commit (version 0)
    in the Delta log: one small JSON file read with an explicit schema, in any session (a Spark
    Connect client has no JVM), cheaper than ``DESCRIBE HISTORY ... LIMIT 1``, a Spark job; Spark
    4.2 cannot hand back an observation of a CREATE TABLE AS SELECT. The path's glob
    characters are escaped (the compiler refuses them anyway), so the read is of this one file.
    None for a catalog table, whose log is not at hand: the caller then reads the table's
    history."""
    if not target.is_path:
        return None
    commit = posixpath.join(target.location, "_delta_log", f"{0:020d}.json")
    actions = spark.read.schema("commitInfo STRUCT<operationMetrics: MAP<STRING, STRING>>").json(glob_literal(commit))
    found = actions.where("commitInfo IS NOT NULL").select("commitInfo.operationMetrics.numOutputRows").collect()
    if not found or found[0][0] is None:
        raise RuntimeError(f"candidate {target.location}: its first commit records no row count")
    return int(found[0][0])
