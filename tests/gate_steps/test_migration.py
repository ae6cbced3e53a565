"""A deployed target follows a new contract version: non-breaking differences are migrated
(new nullable column, a currency added to a list), once and idempotently, also after a kill
between any two statements; breaking ones are refused and the table is left as it was."""

from __future__ import annotations

import contextlib
import copy
import io
import json
from datetime import timedelta
from pathlib import Path

import pytest
import yaml

from _fault_trials import _wait_group_gone
from _gate_plans import ROOT, table_rows, version_of
from _catalog_sql import LocalSparkSql
from _migrate_once import migrate_and_kill
from contract_gate import decisions
from contract_gate.cli.main import main
from contract_gate.contract.compiler import compile_plan
from contract_gate.contract.loader import load_contract_text
from contract_gate.decisions.unity_catalog import UnityCatalogHistory
from contract_gate_plan.document import read_document
from contract_gate.operators.record import migration_record
from contract_gate_plan.migration import INTENT_PROPERTY, SCHEMA_VERSION_PROPERTY, finished_migrations, plan_migration
from contract_gate_spark.steps.publish import publish
from contract_gate_spark.steps.target import (
    MigrationNeedsReview,
    TargetDriftError,
    deployed_state,
    ensure_target,
    migrate_target,
)
from contract_gate_plan.addresses import Address
from contract_gate_plan.model import load_plan

ORDERS = yaml.safe_load((ROOT / "contracts" / "orders.yaml").read_text(encoding="utf-8"))


def orders_text(version: str = "1.0.0", coupon: bool = False, yen: bool = False,
                drop: str | None = None, no_gbp: bool = False, **gate) -> str:
    """The orders contract at ``version``, with a nullable ``coupon`` column and/or JPY added."""
    data = copy.deepcopy(ORDERS)
    data["version"] = version
    properties = data["schema"][0]["properties"]
    if coupon:
        properties.insert(4, {"name": "coupon", "physicalType": "string", "logicalType": "string",
                              "description": "Coupon code."})
    if yen:
        check = next(p for p in properties if p["name"] == "currency")["quality"][0]["implementation"]["check"]
        check["arguments"]["allowed"].append("'JPY'")
    if no_gbp:
        check = next(p for p in properties if p["name"] == "currency")["quality"][0]["implementation"]["check"]
        check["arguments"]["allowed"].remove("'GBP'")
    if drop:
        properties[:] = [p for p in properties if p["name"] != drop]
    next(c for c in data["customProperties"] if c["property"] == "contractGate")["value"].update(gate)
    return yaml.safe_dump(data, sort_keys=False)


def orders_plan(root: Path, *args, **kwargs) -> dict:
    """``orders_text``'s plan with its tables under ``root``."""
    plan = compile_plan(load_contract_text(orders_text(*args, **kwargs), "orders.yaml")).document
    plan.pop("fingerprint")
    for address in plan["tables"].values():
        address["path"] = f"{root}/{address['path']}"
    return read_document(plan)


def deployed_v1(spark, root: Path) -> dict:
    """The v1 target with two published rows; returns the v1 plan."""
    plan = orders_plan(root)
    ensure_target(spark, plan)
    rows = [("o-1", "c-1", 10.0, "EUR"), ("o-2", "c-2", 20.0, "GBP")]
    spark.createDataFrame(rows, "order_id string, customer_id string, order_total double, currency string") \
        .selectExpr("*", "timestamp'2024-03-01 01:00:00' AS order_timestamp") \
        .write.format("delta").mode("append").save(plan["tables"]["target"]["path"])
    return plan


def state(spark, plan: dict) -> tuple:
    """What a migration leaves: fields, constraints and properties (without Delta's own bookkeeping)."""
    fields, properties = deployed_state(spark, load_plan(plan), Address.of(plan["tables"]["target"]))
    kept = {k: v for k, v in properties.items() if k.startswith(("delta.constraints.", "contract_gate."))}
    return fields, kept


def test_a_new_nullable_column_and_a_new_currency_are_migrated_once(spark, tmp_path):
    deployed_v1(spark, tmp_path)
    v1_1 = orders_plan(tmp_path, "1.1.0", coupon=True, yen=True)
    target = v1_1["tables"]["target"]
    rows_before = sorted(tuple(r) for r in table_rows(spark, target))

    migration = migrate_target(spark, v1_1)

    assert (migration["from_version"], migration["to_version"]) == ("1.0.0", "1.1.0")
    table = f"delta.`{target['path']}`"
    assert migration["statements"][1:5] == [
        f"ALTER TABLE {table} DROP CONSTRAINT IF EXISTS `cg_currency_allowed`",
        f"ALTER TABLE {table} ADD COLUMNS (`coupon` string COMMENT 'Coupon code.')",
        f"ALTER TABLE {table} ADD CONSTRAINT `cg_currency_allowed` CHECK "
        "((`currency` IS NULL OR `currency` IN ('USD', 'EUR', 'GBP', 'JPY')))",
        f"ALTER TABLE {table} SET TBLPROPERTIES ('{SCHEMA_VERSION_PROPERTY}' = '1.1.0')",
    ]
    fields, properties = state(spark, v1_1)
    assert ("coupon", "string", True) in fields
    assert "'JPY'" in properties["delta.constraints.cg_currency_allowed"]
    assert properties[SCHEMA_VERSION_PROPERTY] == "1.1.0" and INTENT_PROPERTY not in properties
    # old rows intact; the new column comes last, NULL in them
    assert sorted(tuple(r) for r in table_rows(spark, target)) == [(*row, None) for row in rows_before]
    assert ensure_target(spark, v1_1) is False  # the table now matches the plan
    versions = version_of(spark, target)
    assert migrate_target(spark, v1_1) is None  # once: a second run finds nothing to do
    assert version_of(spark, target) == versions
    with pytest.raises(Exception, match="cg_currency_allowed"):  # the relaxed list is still enforced
        spark.createDataFrame([("o-3", "c", 1.0, "CHF", None)], "order_id string, customer_id string, "
                              "order_total double, currency string, coupon string") \
            .selectExpr("order_id", "customer_id", "order_total", "currency", "coupon",
                        "timestamp'2024-03-01 01:00:00' AS order_timestamp") \
            .write.format("delta").mode("append").save(target["path"])


def test_a_breaking_change_is_refused_and_the_table_is_untouched(spark, tmp_path):
    deployed_v1(spark, tmp_path)
    v2 = orders_plan(tmp_path, "2.0.0", drop="customer_id")
    target = v2["tables"]["target"]
    before = version_of(spark, target)

    with pytest.raises(TargetDriftError) as refused:
        migrate_target(spark, v2)

    assert "breaking: column 'customer_id' is in the table but not in the plan (removed or renamed)" \
        in refused.value.differences
    assert version_of(spark, target) == before
    tightened = orders_plan(tmp_path, "2.0.0", coupon=True, yen=False)
    plan = load_plan(tightened)
    fields, properties = deployed_state(spark, plan, Address.of(target))
    narrower = dict(properties, **{"delta.constraints.cg_currency_allowed":
                                   "( `currency` IS NULL OR `currency` IN ( 'USD', 'EUR', 'GBP', 'CHF' ) )"})
    assert plan_migration(plan, fields, narrower).breaking == (
        "constraint 'cg_currency_allowed' is narrower in the plan: values removed: 'CHF'",)


def test_manual_evolution_refuses_and_prints_the_statements(spark, tmp_path):
    deployed_v1(spark, tmp_path)
    manual = orders_plan(tmp_path, "1.1.0", coupon=True, evolution="manual")
    before = version_of(spark, manual["tables"]["target"])

    with pytest.raises(MigrationNeedsReview) as refused:
        migrate_target(spark, manual)

    assert "ADD COLUMNS (`coupon` string COMMENT 'Coupon code.');" in str(refused.value)
    assert version_of(spark, manual["tables"]["target"]) == before


def test_plan_migrate_prints_the_statements_for_review(spark, tmp_path, monkeypatch):
    deployed_v1(spark, tmp_path)
    monkeypatch.setenv("CONTRACT_GATE_HOME", str(tmp_path))  # where the contract's relative paths lead
    harmless, breaking = tmp_path / "v1_1.yaml", tmp_path / "v2.yaml"
    harmless.write_text(orders_text("1.1.0", coupon=True))
    breaking.write_text(orders_text("2.0.0", drop="customer_id"))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        codes = [main(["plan", str(harmless), "--migrate"]), main(["plan", str(breaking), "--migrate"])]

    assert codes == [0, 1]
    table = f"delta.`{tmp_path}/lakehouse/orders`"
    lines = out.getvalue().splitlines()
    add = f"ALTER TABLE {table} ADD COLUMNS (`coupon` string COMMENT 'Coupon code.')"
    assert lines[0] == f"-- target {tmp_path}/lakehouse/orders: contract version 1.0.0 -> 1.1.0, 4 statement(s)"
    begin = f"ALTER TABLE {table} SET TBLPROPERTIES ('{INTENT_PROPERTY}' = '"
    assert lines[1].startswith(begin) and lines[1].endswith("');")
    intent = json.loads(lines[1][len(begin):-len("');")].replace("\\'", "'"))  # the intent names its statements
    assert (intent["from"], intent["to"], intent["statements"]) == ("1.0.0", "1.1.0", [add])
    assert lines[2:5] == [f"{add};", f"ALTER TABLE {table} SET TBLPROPERTIES ('{SCHEMA_VERSION_PROPERTY}' = '1.1.0');",
                          f"ALTER TABLE {table} UNSET TBLPROPERTIES IF EXISTS ('{INTENT_PROPERTY}');"]
    assert "column 'customer_id' is in the table but not in the plan" in err.getvalue()
    allowed = tmp_path / "v2_allowed.yaml"
    allowed.write_text(orders_text("2.0.0", drop="customer_id", evolution={"breaking": "allow", "consumers": ["bi"]}))
    with contextlib.redirect_stdout(out := io.StringIO()):
        assert main(["plan", str(allowed), "--migrate"]) == 0
    assert f"ALTER TABLE {table} DROP COLUMN `customer_id`;" in out.getvalue().splitlines()
    assert "--   column 'customer_id' is in the table but not in the plan (removed or renamed)" in out.getvalue()


@pytest.mark.slow
def test_a_migration_killed_after_any_statement_finishes_the_same_on_the_next_run(spark, tmp_path):
    deployed_v1(spark, tmp_path / "reference")
    reference_plan = orders_plan(tmp_path / "reference", "1.1.0", coupon=True, yen=True)
    migrate_target(spark, reference_plan)
    expected = state(spark, reference_plan)
    steps = len(plan_migration(load_plan(orders_plan(tmp_path, "1.1.0", coupon=True, yen=True)),
                               *_v1_state(spark, tmp_path / "probe")).steps)
    assert steps == 6
    for applied in range(1, steps):
        root = tmp_path / f"killed_after_{applied}"
        deployed_v1(spark, root)
        plan = orders_plan(root, "1.1.0", coupon=True, yen=True)
        statements = plan_migration(load_plan(plan), *deployed_state(spark, load_plan(plan),
                                                                     Address.of(plan["tables"]["target"]))).statements
        for statement in statements[:applied]:  # the run that was killed
            spark.sql(statement)
        migrate_target(spark, plan)  # the next run
        assert state(spark, plan) == expected, f"killed after {applied} statements"
        assert migrate_target(spark, plan) is None


def _v1_state(spark, root: Path):
    plan = deployed_v1(spark, root)
    return deployed_state(spark, load_plan(plan), Address.of(plan["tables"]["target"]))


def test_a_breaking_change_is_refused_unless_a_new_major_version_allows_it(spark, tmp_path):
    deployed_v1(spark, tmp_path)
    consumers = ["finance-dashboard", "churn-model"]
    same_major = orders_plan(tmp_path, "1.2.0", drop="customer_id", evolution={"breaking": "allow", "consumers": consumers})
    target = same_major["tables"]["target"]
    before, rows_before = version_of(spark, target), sorted(tuple(r) for r in table_rows(spark, target))

    with pytest.raises(TargetDriftError) as refused:
        migrate_target(spark, same_major)
    assert "give the contract a new major version" in str(refused.value)
    assert version_of(spark, target) == before

    allowed = orders_plan(tmp_path, "2.0.0", drop="customer_id", evolution={"breaking": "allow", "consumers": consumers})
    migration = migrate_target(spark, allowed)

    assert migration["breaking_applied"] == [
        "column 'customer_id' is in the table but not in the plan (removed or renamed)"]
    assert migration["consumers"] == consumers
    assert (migration["from_version"], migration["to_version"]) == ("1.0.0", "2.0.0")
    fields, properties = state(spark, allowed)
    assert "customer_id" not in [name for name, _, _ in fields]
    assert properties[SCHEMA_VERSION_PROPERTY] == "2.0.0"
    assert sorted(tuple(r) for r in table_rows(spark, target)) == [(r[0], *r[2:]) for r in rows_before]
    assert ensure_target(spark, allowed) is False and migrate_target(spark, allowed) is None


def test_allowing_a_tightened_rule_checks_the_rows_already_published(spark, tmp_path):
    deployed_v1(spark, tmp_path)  # holds a GBP order
    gbp_gone = orders_plan(tmp_path, "2.0.0", no_gbp=True, evolution={"breaking": "allow", "consumers": ["billing"]})
    target = gbp_gone["tables"]["target"]
    before = version_of(spark, target)

    with pytest.raises(Exception, match="(?i)check|constraint"):  # Delta refuses: a published row breaks it
        migrate_target(spark, gbp_gone)

    assert sorted(tuple(r)[3] for r in table_rows(spark, target)) == ["EUR", "GBP"]
    assert version_of(spark, target) > before  # the intent and the drop went in; a re-run goes on from there


def test_a_new_target_per_major_version_keeps_the_old_table(spark, tmp_path):
    v1 = deployed_v1(spark, tmp_path)
    new_target = orders_plan(tmp_path, "2.0.0", drop="customer_id", evolution={"breaking": "newTarget"})
    old = v1["tables"]["target"]
    before = version_of(spark, old)

    assert new_target["tables"]["target"]["path"] == old["path"] + "_v2"
    assert new_target["tables"]["quarantine"]["path"] == f"{tmp_path}/lakehouse/orders_v2_quarantine"
    assert orders_plan(tmp_path, "1.3.0", evolution={"breaking": "newTarget"})["tables"]["target"] == old
    assert migrate_target(spark, new_target) is None  # a table of its own, created from the plan
    assert ensure_target(spark, new_target) is True
    assert version_of(spark, old) == before
    assert "customer_id" not in [n for n, _, _ in state(spark, new_target)[0]]


def test_breaking_allow_needs_the_consumers_it_breaks():
    with pytest.raises(Exception, match="consumers"):
        compile_plan(load_contract_text(orders_text("2.0.0", evolution={"breaking": "allow"}), "orders.yaml"))
    with pytest.raises(Exception, match="consumers"):
        compile_plan(load_contract_text(orders_text("2.0.0", evolution={"breaking": "newTarget",
                                                                         "consumers": ["x"]}), "orders.yaml"))


def _publish_and_record(spark, plan: dict, submission_id: str, candidate: dict, run_id: str) -> None:
    """What a gate run does from its submission task to its record task: recovery first (no
    grace period: an earlier run is known dead), then publish, the migration's record if the
    publish migrated, the final record."""
    typed = load_plan(plan)
    decisions.recover_missing_decisions(typed, min_age=timedelta(0))
    published = publish(spark, plan, submission_id, candidate, 0)
    context = {"contract_id": typed.contract_id, "object": typed.object, "run_id": run_id}
    migrated = migration_record({"publish": {"publish": published}}, submission_id)
    if migrated:
        decisions.record_decision(typed, {**migrated, **context})
    decisions.record_decision(typed, {"submission_id": submission_id, "outcome": "published", "contract_version":
                                      typed.contract_version, "target_version_before": published["target_version_before"],
                                      "target_version_after": published["target_version_after"], **context})


def _v1_1_batch(spark, root: Path) -> dict:
    address = {"kind": "path", "path": str(root / "candidates" / "batch"), "format": "delta"}
    spark.createDataFrame([("o-3", "c-3", 30.0, "JPY", "WELCOME")],
                          "order_id string, customer_id string, order_total double, currency string, coupon string") \
        .selectExpr("*", "timestamp'2024-03-02 01:00:00' AS order_timestamp") \
        .write.format("delta").save(address["path"])
    return address


def _migrations(plan: dict) -> list:
    return [d for d in decisions.store_for(load_plan(plan)).records(contract_id="orders") if d.outcome == "migrated"]


@pytest.mark.slow  # a child Spark JVM of its own, killed
def test_a_migration_whose_run_was_killed_before_its_batch_is_recorded_once_by_the_next_run(spark, tmp_path):
    clean_root, killed_root = tmp_path / "clean", tmp_path / "killed"
    deployed_v1(spark, clean_root)
    clean = orders_plan(clean_root, "1.1.0", coupon=True, yen=True)
    _publish_and_record(spark, clean, "sub-1", _v1_1_batch(spark, clean_root), "clean")

    deployed_v1(spark, killed_root)
    killed = orders_plan(killed_root, "1.1.0", coupon=True, yen=True)
    (killed_root / "plan.json").write_text(json.dumps(killed), encoding="utf-8")
    _wait_group_gone(migrate_and_kill(killed_root / "plan.json", killed_root / "migrated"))
    assert state(spark, killed)[1][SCHEMA_VERSION_PROPERTY] == "1.1.0" and _migrations(killed) == []

    _publish_and_record(spark, killed, "sub-1", _v1_1_batch(spark, killed_root), "re-run")
    decisions.recover_missing_decisions(load_plan(killed), min_age=timedelta(0))  # and any later run

    assert decisions.recover_missing_decisions(load_plan(clean), min_age=timedelta(0)) == []  # recorded by its run
    [recovered], [reference] = _migrations(killed), _migrations(clean)
    assert recovered.source == "recovery" and reference.source == "gate"
    fingerprints = load_plan(killed).fingerprint, load_plan(clean).fingerprint  # the plans differ in their paths
    assert [s.replace(str(killed_root), str(clean_root)).replace(*fingerprints)
            for s in recovered.migration["statements"]] == reference.migration["statements"]
    assert (recovered.migration["from_version"], recovered.contract_version) == ("1.0.0", "1.1.0")
    assert (recovered.submission_id.replace(fingerprints[0][:16], fingerprints[1][:16]),
            recovered.target_version_before, recovered.target_version_after) == (
        reference.submission_id, reference.target_version_before, reference.target_version_after)
    assert state(spark, killed) == state(spark, clean)
    assert sorted(map(tuple, table_rows(spark, killed["tables"]["target"]))) == \
        sorted(map(tuple, table_rows(spark, clean["tables"]["target"])))
    assert version_of(spark, killed["tables"]["target"]) == version_of(spark, clean["tables"]["target"])


def _on_catalog(plan: dict, name: str) -> dict:
    """``plan`` with its target the catalog table ``name`` (the session's metastore) instead of a path."""
    document = {key: value for key, value in plan.items() if key != "fingerprint"}
    document["tables"] = {**plan["tables"], "target": {"kind": "table", "name": name, "format": "delta"}}
    return read_document(document)


def test_breaking_allow_migrates_a_catalog_target_in_place(spark, tmp_path):
    schema = f"evolving_{tmp_path.name.lower().replace('-', '_')}"
    spark.sql(f"CREATE DATABASE spark_catalog.{schema} LOCATION '{tmp_path}/warehouse'")
    table = f"spark_catalog.{schema}.orders"
    consumers = ["finance-dashboard"]
    try:
        v1 = _on_catalog(orders_plan(tmp_path), table)
        ensure_target(spark, v1)
        spark.sql(f"INSERT INTO {table} VALUES ('o-1', 'c-1', 10.0, 'EUR', timestamp'2024-03-01 01:00:00'), "
                  "('o-2', 'c-2', 20.0, 'GBP', timestamp'2024-03-01 02:00:00')")
        rows_before = sorted(tuple(r) for r in spark.table(table).collect())
        same_major = _on_catalog(orders_plan(tmp_path, "1.2.0", drop="customer_id",
                                             evolution={"breaking": "allow", "consumers": consumers}), table)
        with pytest.raises(TargetDriftError):
            migrate_target(spark, same_major)
        assert sorted(tuple(r) for r in spark.table(table).collect()) == rows_before

        allowed = _on_catalog(orders_plan(tmp_path, "2.0.0", drop="customer_id",
                                          evolution={"breaking": "allow", "consumers": consumers}), table)
        migration = migrate_target(spark, allowed)

        assert migration["statements"] and all(f"ALTER TABLE `spark_catalog`.`{schema}`.`orders` " in s
                                               for s in migration["statements"])
        assert (migration["from_version"], migration["to_version"], migration["consumers"]) == (
            "1.0.0", "2.0.0", consumers)
        assert migration["breaking_applied"] == [
            "column 'customer_id' is in the table but not in the plan (removed or renamed)"]
        fields, properties = deployed_state(spark, load_plan(allowed), Address.of(allowed["tables"]["target"]))
        assert "customer_id" not in [name for name, _, _ in fields]
        assert properties[SCHEMA_VERSION_PROPERTY] == "2.0.0" and INTENT_PROPERTY not in properties
        assert sorted(tuple(r) for r in spark.table(table).collect()) == [(r[0], *r[2:]) for r in rows_before]
        assert ensure_target(spark, allowed) is False and migrate_target(spark, allowed) is None

        # recovery finds it in the table's DESCRIBE HISTORY, as on Databricks: once, with its statements
        target = Address.of(allowed["tables"]["target"])
        [finished] = finished_migrations(UnityCatalogHistory(LocalSparkSql(spark)).commits(target))
        assert (finished.version_before, finished.version_after) == (
            migration["target_version_before"], migration["target_version_after"])
        assert finished.statements(target.sql_name) == migration["statements"]
        assert (finished.intent["from"], finished.intent["to"]) == ("1.0.0", "2.0.0")
    finally:
        spark.sql(f"DROP DATABASE spark_catalog.{schema} CASCADE")
