"""Migrate a target to a plan and wait to be killed: the publish step's first half, in a child.

Run as a script by ``test_migration.py``: its own Python and its own Spark JVM run
``migrate_target`` (what ``publish`` does before it writes the batch), write a flag file and
wait for the SIGKILL of their process group, so the batch commit and the decision record never
happen and the migration is known only to the target's history.
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plan", required=True, type=Path)
    parser.add_argument("--flag", required=True, type=Path, help="written once the migration is applied")
    args = parser.parse_args(argv)

    from contract_plan.document import read_document
    from spark_jobs.runtime.session import get_session
    from spark_jobs.steps.target import migrate_target

    spark = get_session("contract-gate-migration-kill", {
        "spark.master": "local[1]", "spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "1"})
    migrate_target(spark, read_document(args.plan))
    args.flag.write_text("migrated", encoding="utf-8")
    while True:  # until the SIGKILL (no handler: pause() never returns for it)
        signal.pause()


if __name__ == "__main__":
    sys.exit(main())
