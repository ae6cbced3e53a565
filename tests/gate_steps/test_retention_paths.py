"""Retention removes path candidates through the file system (``contract_gate_spark.steps.retention``): only
folders the stage step made in the candidate folder. A link planted there, named like a candidate
and pointing at a table of this contract elsewhere, passes the listing and the ownership check;
it is left in place, and so is the table it points at."""

from __future__ import annotations

import logging
import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

from _gate_plans import case, plan_for, table_rows, write_csv
from contract_gate_spark.steps.retention import cleanup
from contract_gate_spark.steps.stage import stage_candidate


def test_a_link_planted_in_the_candidate_folder_is_left_alone_with_what_it_points_at(spark, tmp_path, caplog):
    plan = plan_for("regional_daily_cases", tmp_path / "ours")
    write_csv(tmp_path / "ours/lakehouse/landing/regional_daily_cases", [case("NL-NH", 1)])
    ours = Path(stage_candidate(spark, plan, "old")["candidate"]["path"])
    elsewhere_plan = plan_for("regional_daily_cases", tmp_path / "elsewhere")
    write_csv(tmp_path / "elsewhere/lakehouse/landing/regional_daily_cases", [case("NL-UT", 1)])
    elsewhere = stage_candidate(spark, elsewhere_plan, "kept")["candidate"]
    planted = ours.parent / "regional_daily_cases__planted"
    os.symlink(elsewhere["path"], planted)

    with caplog.at_level(logging.WARNING, logger="contract_gate.retention"):
        result = cleanup(spark, plan, now=datetime.now(timezone.utc) + timedelta(days=30))

    assert [path.rsplit("/", 1)[1] for path in result["candidates_dropped"]] == [ours.name]
    assert not ours.exists() and planted.is_symlink()
    assert len(table_rows(spark, elsewhere)) == 1  # the table the link points at is untouched
    assert any("regional_daily_cases__planted is a link" in message for message in caplog.messages)
