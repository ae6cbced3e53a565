"""``contract-gate status``: freshness and the latest decisions per contract, read without Spark."""

from __future__ import annotations

import datetime as dt
import json
import shutil

from _freshness_helpers import REPO, file_alerts, publish_cases, record_decisions, write_contract

from contract_gate.cli.main import main
from contract_gate.contract.compiler import compile_plan
from contract_gate.freshness.check import check_freshness


def lakehouse(spark, home):
    contracts = home / "contracts"
    contracts.mkdir()
    write_contract(contracts, alerts=file_alerts(home / "alerts.jsonl"))
    shutil.copy(REPO / "contracts" / "meter_readings.yaml", contracts)
    publish_cases(spark, home / "lakehouse" / "regional_daily_cases", "sub-3", [dt.date(2024, 3, 1)])
    record_decisions(compile_plan(contracts / "regional_daily_cases.yaml"),
                     ("sub-1", "quarantined", dt.datetime(2024, 3, 1, 8), None, None, None),
                     ("sub-3", "published", dt.datetime(2024, 3, 2, 8), "2024-03-01", 0, "sub-1"))
    record_decisions(compile_plan(contracts / "meter_readings.yaml"),
                     ("sub-9", "published", dt.datetime(2024, 3, 3, 8), None, 4, None))
    return contracts


def test_status_of_one_contract(spark, home, capsys):
    contracts = lakehouse(spark, home)
    check_freshness(compile_plan(contracts / "regional_daily_cases.yaml"))  # the freshness DAG's last check

    assert main(["status", "regional_daily_cases", "--contracts-dir", str(contracts)]) == 1  # stale
    text = capsys.readouterr().out
    lines = text.splitlines()
    assert lines[0] == "regional_daily_cases 1.0.0 (local)"
    assert lines[1].startswith("  freshness  STALE  report_date 2024-03-01 is ") and lines[1].endswith("; SLA 2 d (freshness)")
    assert "last accepted submission sub-3, target version 0 (source: delta_log)" in lines[2]
    assert lines[3].startswith("  last check ") and "stale notice sent" in lines[3] and "to 1 notifier(s)" in lines[3]
    assert lines[4] == "  decisions  (newest first)"
    assert lines[5].split() == ["submission_id", "outcome", "decided_at", "rerun_of"]
    assert [line.split()[:2] for line in lines[6:]] == [["sub-3", "published"], ["sub-1", "quarantined"]]

    assert main(["status", "regional_daily_cases", "--contracts-dir", str(contracts), "--json"]) == 1
    [entry] = json.loads(capsys.readouterr().out)["contracts"]
    assert entry["freshness"]["state"] == "stale" and entry["freshness"]["latest_accepted_date"] == "2024-03-01"
    assert entry["last_check"]["alerted"] is True
    assert [d["submission_id"] for d in entry["decisions"]] == ["sub-3", "sub-1"]
    assert entry["decisions"][0]["rerun_of"] == "sub-1"


def test_status_of_every_contract_and_errors(spark, home, capsys):
    contracts = lakehouse(spark, home)
    (contracts / "broken.yaml").write_text("apiVersion: v3.1.0\nkind: DataContract\n")
    assert main(["status", "--contracts-dir", str(contracts)]) == 2  # one contract does not compile
    text = capsys.readouterr().out
    assert "meter_readings 2.1.0 (local)\n  freshness  no freshness SLA\n  decisions  (newest first)" in text
    assert "regional_daily_cases 1.0.0 (local)\n  freshness  STALE" in text
    assert "last check never (the freshness DAG has not run)" in text
    assert "broken.yaml\n  error      " in text

    assert main(["status", "nope", "--contracts-dir", str(contracts)]) == 2
    assert "no contract 'nope'" in capsys.readouterr().err
