"""A landing is untrusted input: no coercion, empty batches never published, restricted tables
owner-only and without statistics of classified columns. Real landing files, real Spark, real
Delta tables, real file modes."""

from __future__ import annotations

import copy
import glob
import json
import math
import os
import stat
from pathlib import Path

import pytest

from _gate_plans import ROOT, order, table_rows, version_of, write_json
from contract_gate.contract.compiler import compile_plan
from contract_gate.operators.branch import PUBLISH, QUARANTINE, SPLIT, decide
from contract_gate.operators.validate import summarize
from contract_gate_spark.validation.candidate import read_candidate
from contract_gate_spark.validation.engine import run_validation
from contract_gate_plan.document import read_document
from contract_gate_plan.model import load_plan
from contract_gate_spark.steps.publish import publish
from contract_gate_spark.steps.quarantine import quarantine
from contract_gate_spark.steps.stage import stage_candidate

CSV_HEADER = "order_id,customer_id,order_total,currency,order_timestamp"


def orders_plan(tmp_path: Path, *, landing_format: str = "json", allow_non_finite: bool = False) -> dict:
    """contracts/orders.yaml (split_rows, customer_id confidential) compiled with its tables
    under ``tmp_path``, optionally with a CSV landing and ``allowNonFinite`` on order_total."""
    text = (ROOT / "contracts/orders.yaml").read_text(encoding="utf-8")
    text = text.replace("        format: json", f"        format: {landing_format}")
    if allow_non_finite:
        text = text.replace("        description: Order total in the order currency.\n",
                            "        description: Order total in the order currency.\n"
                            "        customProperties:\n          - property: allowNonFinite\n            value: true\n")
    contract = tmp_path / "orders.yaml"
    contract.write_text(text, encoding="utf-8")
    plan = copy.deepcopy(compile_plan(contract).document)
    assert [c.get("allow_non_finite", False) for c in plan["columns"] if c["name"] == "order_total"] == [allow_non_finite]
    plan.pop("fingerprint")
    for address in plan["tables"].values():
        if address["kind"] == "path":
            address["path"] = f"{tmp_path}/{address['path']}"
    return read_document(plan)


def write_text(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")
    return folder


def gate(spark, plan: dict, submission_id: str, tmp_path: Path) -> dict:
    """stage -> validate -> the branch's decision -> publish / quarantine / split, in process."""
    staged = stage_candidate(spark, plan, submission_id)
    candidate = read_candidate(spark, staged["candidate"]["path"], version=staged["version"])
    report = run_validation(spark, plan, candidate, submission_id=submission_id)
    report_path = tmp_path / f"{submission_id}.report.json"
    report_path.write_text(json.dumps(report), encoding="utf-8")
    branch, _ = decide(load_plan(plan), summarize(report, report_path, staged))
    args = (spark, plan, submission_id, staged["candidate"], staged["version"])
    if branch in (PUBLISH, SPLIT):
        publish(*args, "valid" if branch == SPLIT else "all", report)
    if branch in (QUARANTINE, SPLIT):
        quarantine(*args, report, "invalid" if branch == SPLIT else "all")
    failed = {r["id"]: r["failed_rows"] if r["failed_rows"] is not None else r["measured"]
              for r in report["rules"] if r.get("passed") is False}
    return {"staged": staged, "report": report, "branch": branch, "failed": failed}


def quarantined(spark, plan: dict) -> dict[str, set[str]]:
    """order_id -> the rule ids in its ``_errors``."""
    return {row.order_id: {e.rule_id for e in row._errors} for row in table_rows(spark, plan["tables"]["quarantine"])}


def test_json_objects_arrays_and_non_finite_numbers_fail_their_type_and_are_never_published(spark, tmp_path):
    plan = orders_plan(tmp_path)
    good = [json.dumps(order(f"g{i}", 10.0 + i)) for i in range(6)]
    bad = [
        json.dumps({**order("x"), "order_id": {"nested": "object"}}),
        json.dumps({**order("b-array"), "currency": ["EUR"]}),
        json.dumps({**order("b-number"), "currency": 978}),
        json.dumps(order("b-overflow")).replace('"order_total": 10.0', '"order_total": 1e999'),
        json.dumps(order("b-nan")).replace('"order_total": 10.0', '"order_total": NaN'),
        json.dumps({**order("b-infinity"), "order_total": "Infinity"}),
    ]
    write_text(tmp_path / "lakehouse/landing/orders", "batch.json", "\n".join(good + bad) + "\n")

    result = gate(spark, plan, "coerce-json", tmp_path)

    assert result["branch"] == SPLIT
    # the text Spark would have kept ('["EUR"]', '978') also fails the currency list
    assert result["failed"] == {"order_id.type": 1, "currency.type": 2, "order_total.type": 3, "currency_allowed": 2}
    published = table_rows(spark, plan["tables"]["target"])
    assert sorted(r.order_id for r in published) == [f"g{i}" for i in range(6)]
    assert all(math.isfinite(r.order_total) and r.currency == "EUR" for r in published)
    held = quarantined(spark, plan)
    assert held == {'{"nested":"object"}': {"order_id.type"}, "b-array": {"currency.type", "currency_allowed"},
                    "b-number": {"currency.type", "currency_allowed"}, "b-overflow": {"order_total.type"},
                    "b-nan": {"order_total.type"}, "b-infinity": {"order_total.type"}}


@pytest.mark.slow  # 6 s or more
@pytest.mark.parametrize("allowed", [False, True], ids=["default", "allowNonFinite"])
def test_csv_overflow_always_fails_and_non_finite_tokens_fail_unless_the_contract_allows_them(spark, tmp_path, allowed):
    plan = orders_plan(tmp_path, landing_format="csv", allow_non_finite=allowed)
    good = [f"g{i},c{i},{10 + i}.5,EUR,2024-03-01T01:00:00Z" for i in range(5)]
    special = {"b-overflow": "1e999", "b-nan": "NaN", "b-inf": "Inf", "b-plus-infinity": "+Infinity",
               "b-text": "twelve"}
    rows = [*good, *(f"{key},c,{value},EUR,2024-03-01T01:00:00Z" for key, value in special.items())]
    write_text(tmp_path / "lakehouse/landing/orders", "batch.csv", "\n".join([CSV_HEADER, *rows]) + "\n")

    result = gate(spark, plan, "coerce-csv", tmp_path)

    assert result["branch"] == SPLIT
    rejected = {"b-overflow", "b-text"} if allowed else set(special)
    # a value that is not a number is NULL as well, so order_total.required counts it too
    assert result["failed"] == {"order_total.type": len(rejected), "order_total.required": 1}
    assert set(quarantined(spark, plan)) == rejected
    published = {r.order_id: r.order_total for r in table_rows(spark, plan["tables"]["target"])}
    assert set(published) == {f"g{i}" for i in range(5)} | (set(special) - rejected)
    if allowed:
        assert math.isnan(published["b-nan"])
        assert published["b-inf"] == published["b-plus-infinity"] == math.inf
    assert published["g0"] == 10.5


EMPTY_LANDINGS = {
    "empty JSON file": ("json", "batch.json", ""),
    "CSV with only its header": ("csv", "batch.csv", CSV_HEADER + "\n"),
    "empty folder": ("json", None, None),
}


@pytest.mark.parametrize("landing", list(EMPTY_LANDINGS), ids=list(EMPTY_LANDINGS))
def test_an_empty_submission_is_rejected_by_a_built_in_rule_and_never_published(spark, tmp_path, landing):
    landing_format, name, text = EMPTY_LANDINGS[landing]
    plan = orders_plan(tmp_path, landing_format=landing_format)
    folder = tmp_path / "lakehouse/landing/orders"
    if landing_format == "json":
        write_json(folder, [order("o1"), order("o2")])
    else:
        write_text(folder, "batch.csv", f"{CSV_HEADER}\no1,c1,10.0,EUR,2024-03-01T01:00:00Z\n")
    assert gate(spark, plan, "first", tmp_path)["branch"] == PUBLISH
    target = plan["tables"]["target"]
    version, rows = version_of(spark, target), sorted(table_rows(spark, target))
    for old in folder.iterdir():
        old.unlink()
    if name is not None:
        write_text(folder, name, text)

    result = gate(spark, plan, "empty", tmp_path)

    assert result["staged"]["row_count"] == 0
    assert result["report"]["outcome"] == "fail" and result["branch"] == QUARANTINE
    assert result["failed"] == {"submission.not_empty": 0}
    assert (version_of(spark, target), sorted(table_rows(spark, target))) == (version, rows)


def _modes(folder: str) -> set[tuple[str, int]]:
    """(kind, permission bits) of ``folder`` and everything below it (symbolic links left out)."""
    found = {("dir", stat.S_IMODE(os.stat(folder).st_mode))}
    for parent, dirs, files in os.walk(folder):
        for kind, names in (("dir", dirs), ("file", files)):
            modes = [os.lstat(os.path.join(parent, name)).st_mode for name in names]
            found |= {(kind, stat.S_IMODE(mode)) for mode in modes if not stat.S_ISLNK(mode)}
    return found


@pytest.fixture(params=[0o000, 0o022], ids=["umask000", "umask022"])
def umask(request):
    previous = os.umask(request.param)
    yield request.param
    os.umask(previous)


def test_candidate_quarantine_work_folders_and_decisions_are_owner_only_the_target_stays_readable(
        spark, tmp_path, umask, monkeypatch):
    from contract_gate.decisions.delta_path import DeltaPathDecisionStore
    from contract_gate.decisions.record import Decision
    from contract_gate.config import environment_variable
    from contract_gate.operators.base import SparkGateOperator

    plan = orders_plan(tmp_path)
    write_json(tmp_path / "lakehouse/landing/orders", [order("o1"), order("o2"), order("o3", -1.0)])
    result = gate(spark, plan, "modes", tmp_path)
    assert result["branch"] == SPLIT
    DeltaPathDecisionStore(plan["tables"]["decisions"]).record(
        Decision(submission_id="modes", contract_id="orders", contract_version="1.0.0", outcome="split"))
    monkeypatch.setenv(environment_variable("work_dir"), str(tmp_path / "lakehouse/_runs"))
    operator = SparkGateOperator(task_id="modes", contract="orders.yaml", submission_id="modes")
    operator.write_plan(load_plan(plan), operator.workdir(load_plan(plan)))

    owner_only = {("dir", 0o700), ("file", 0o600)}
    candidates = plan["tables"]["candidate_schema"]["path"]
    for folder in (candidates, plan["tables"]["quarantine"]["path"], plan["tables"]["decisions"]["path"],
                   str(tmp_path / "lakehouse/_runs")):
        assert _modes(folder) == owner_only, folder
    assert glob.glob(f"{candidates}/*/_delta_log/*.json") and glob.glob(f"{tmp_path}/lakehouse/_runs/orders/modes/plan.json")
    target_modes = _modes(plan["tables"]["target"]["path"])
    assert {kind for kind, _ in target_modes} == {"dir", "file"}
    assert all(mode & 0o044 == 0o044 for _, mode in target_modes)  # consumers read the target as before


def _stats_keys(table_path: str) -> tuple[dict[str, str], set[str]]:
    """(logical -> physical column name, every column named in the log's file statistics)."""
    named, physical = set(), {}
    for commit in sorted(glob.glob(f"{table_path}/_delta_log/*.json")):
        for line in Path(commit).read_text(encoding="utf-8").splitlines():
            action = json.loads(line)
            if "metaData" in action:
                for field in json.loads(action["metaData"]["schemaString"])["fields"]:
                    physical[field["name"]] = field["metadata"].get("delta.columnMapping.physicalName", field["name"])
            if action.get("add", {}).get("stats"):
                stats = json.loads(action["add"]["stats"])
                for key in ("minValues", "maxValues", "nullCount"):
                    named |= set(stats.get(key, {}))
    return physical, named


def test_candidate_and_quarantine_logs_keep_no_statistics_of_classified_columns(spark, tmp_path):
    plan = orders_plan(tmp_path)
    assert [c["name"] for c in plan["columns"] if c["classification"]] == ["customer_id"]
    write_json(tmp_path / "lakehouse/landing/orders", [order("o1"), order("o2"), order("o3", -6.0)])

    result = gate(spark, plan, "stats", tmp_path)

    assert result["branch"] == SPLIT
    for table in (result["staged"]["candidate"]["path"], plan["tables"]["quarantine"]["path"]):
        physical, named = _stats_keys(table)
        assert physical["customer_id"] not in named, table
        assert {physical["order_id"], physical["order_total"]} <= named, table  # the others keep theirs


@pytest.mark.slow  # the local runner: spark-submit, a JVM of its own
def test_a_local_gate_job_started_with_umask_000_leaves_only_owner_only_files(tmp_path, monkeypatch):
    """The real local runner (spark-submit, a JVM of its own): its work folder (plan, the step's
    result) and the candidate it stages are owner-only, and the job's Spark scratch folder (Spark's
    log settings, shuffle and spill files) is gone once it ends."""
    from contract_gate.config import environment_variable
    from contract_gate.operators.base import SparkGateOperator
    from contract_gate.runners.base import GateJob
    from contract_gate.runners.local import LocalRunner

    plan = orders_plan(tmp_path)
    write_json(tmp_path / "lakehouse/landing/orders", [order("o1"), order("o2")])
    monkeypatch.setenv(environment_variable("work_dir"), str(tmp_path / "lakehouse/_runs"))
    previous = os.umask(0o000)
    try:
        operator = SparkGateOperator(task_id="stage", contract="orders.yaml", submission_id="job")
        folder = operator.workdir(load_plan(plan))
        job = GateJob("stage", {"--plan": operator.write_plan(load_plan(plan), folder), "--submission-id": "job"}, folder)
        result = LocalRunner(cores=1, cwd=str(tmp_path)).start(job)
    finally:
        os.umask(previous)

    assert (result["status"], result["row_count"]) == ("staged", 2)
    assert {p.name for p in folder.iterdir()} == {"plan.json", "stage.result.json", "job.lock"}
    for private in (str(tmp_path / "lakehouse/_runs"), plan["tables"]["candidate_schema"]["path"]):
        assert _modes(private) == {("dir", 0o700), ("file", 0o600)}, private


def test_statistics_are_kept_for_unclassified_plan_columns_of_types_delta_indexes(tmp_path):
    from contract_gate_plan.model import Column
    from contract_gate_plan.restricted import statistics_properties

    columns = [Column("id", "string"), Column("email", "string", classification="restricted"),
               Column("odd name`", "decimal(12,3)"), Column("flag", "boolean"), Column("amount", "array<int>")]
    fields = [("id", "string"), ("email", "string"), ("odd name`", "decimal(12,3)"), ("flag", "boolean"),
              ("amount", "array<int>"), ("extra", "string"), ("_quarantined_at", "timestamp")]

    assert statistics_properties(columns, fields, ("_quarantined_at",)) == {
        "delta.dataSkippingStatsColumns": "`id`,`odd name```,`_quarantined_at`"}
    assert statistics_properties(columns[1:2], fields[1:2]) == {
        "delta.dataSkippingStatsColumns": ""}  # nothing to index: Delta keeps row counts only


def test_only_local_folders_get_file_modes_and_existing_ones_are_narrowed(tmp_path):
    from contract_gate_plan.restricted import local_path, make_private_folder, restrict_tree, write_private_text

    assert [local_path(p) for p in ("file:///tmp/x", "/data/x", "lakehouse/x")] == ["/tmp/x", "/data/x", "lakehouse/x"]
    assert [local_path(p) for p in ("s3://b/x", "abfss://c@a.dfs.core.windows.net/x", "dbfs:/x", "/dbfs/x",
                                    "/Volumes/c/s/v")] == [None] * 5
    folder = tmp_path / "old"
    (folder / "sub").mkdir(parents=True, mode=0o755)
    (folder / "sub" / "part.parquet").write_text("x")
    os.chmod(folder / "sub" / "part.parquet", 0o644)
    outside = tmp_path / "outside.txt"
    outside.write_text("not ours")
    os.chmod(outside, 0o644)
    os.symlink(outside, folder / "link")
    make_private_folder(folder)
    restrict_tree(folder)
    write_private_text(folder / "sub" / "part.parquet", "y")  # an existing file keeps no wider mode
    assert _modes(str(folder)) == {("dir", 0o700), ("file", 0o600)}
    assert stat.S_IMODE(outside.stat().st_mode) == 0o644  # not followed through the link


@pytest.mark.slow  # 8 s or more
def test_a_quarantine_made_when_a_column_was_unclassified_stops_keeping_its_statistics(spark, tmp_path):
    plan = orders_plan(tmp_path)
    earlier = copy.deepcopy(plan)  # the contract before customer_id was classified
    earlier.pop("fingerprint")
    next(c for c in earlier["columns"] if c["name"] == "customer_id")["classification"] = None
    earlier = read_document(earlier)
    quarantine_path = plan["tables"]["quarantine"]["path"]
    write_json(tmp_path / "lakehouse/landing/orders", [order("o1"), order("o2"), order("x1", -1.0)])
    assert gate(spark, earlier, "before", tmp_path)["branch"] == SPLIT
    physical, named = _stats_keys(quarantine_path)
    assert physical["customer_id"] in named  # the earlier contract let Delta keep them

    write_json(tmp_path / "lakehouse/landing/orders", [order("o3"), order("o4"), order("x2", -2.0)])
    assert gate(spark, plan, "after", tmp_path)["branch"] == SPLIT

    commits = sorted(glob.glob(f"{quarantine_path}/_delta_log/*.json"))
    newest = [json.loads(line) for line in Path(commits[-1]).read_text(encoding="utf-8").splitlines()]
    stats = [json.loads(a["add"]["stats"]) for a in newest if a.get("add", {}).get("stats")]
    assert stats and all(physical["customer_id"] not in s.get(key, {}) for s in stats
                         for key in ("minValues", "maxValues", "nullCount"))
    assert all(physical["order_total"] in s["minValues"] for s in stats)
    properties = {r["key"]: r["value"] for r in spark.sql(f"SHOW TBLPROPERTIES delta.`{quarantine_path}`").collect()}
    assert "customer_id" not in properties["delta.dataSkippingStatsColumns"]
