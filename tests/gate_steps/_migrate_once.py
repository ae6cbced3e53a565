"""Migrate a target to a plan and wait to be killed: the publish step's first half, in a child.

Run as a script by :func:`migrate_and_kill`: its own Python and its own Spark JVM run
``migrate_target`` (what ``publish`` does before it writes the batch), write a flag file and
wait for the SIGKILL of their process group, so the batch commit and the decision record never
happen and the migration is known only to the target's history.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from pathlib import Path

from contract_gate_spark.runtime.job_start import CONNECT_CLIENT_ENV

def migrate_and_kill(plan_file: Path, flag: Path, env: dict[str, str] | None = None) -> int:
    """Run this script on ``plan_file`` in a process group of its own, SIGKILL the group once the
    migration is applied (``flag`` written), and return the group's id."""
    from waiting import wait_until

    # a local JVM of its own, even in a process that was a Spark Connect client (pyspark's mark of one)
    inherited = {name: value for name, value in os.environ.items()
                 if name not in CONNECT_CLIENT_ENV}
    child = subprocess.Popen([sys.executable, __file__, "--plan", str(plan_file), "--flag", str(flag)],
                             env={**inherited, "CONTRACT_GATE_SPARK_LOG_LEVEL": "ERROR", **(env or {})},
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_until(lambda: flag.exists() or child.poll() is not None, 600, message="the child's migration")
        assert child.poll() is None, f"the child exited ({child.returncode}) before it migrated"
    finally:
        os.killpg(child.pid, signal.SIGKILL)  # python and its JVM: after the ALTERs, before the batch
        child.wait()
    return child.pid


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plan", required=True, type=Path)
    parser.add_argument("--flag", required=True, type=Path, help="written once the migration is applied")
    args = parser.parse_args(argv)

    from contract_gate_plan.document import read_document
    from contract_gate_spark.runtime.session import get_session
    from contract_gate_spark.steps.target import migrate_target

    spark = get_session("contract-gate-migration-kill", {
        "spark.master": "local[1]", "spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "1"})
    migrate_target(spark, read_document(args.plan))
    args.flag.write_text("migrated", encoding="utf-8")
    while True:  # until the SIGKILL (no handler: pause() never returns for it)
        signal.pause()


if __name__ == "__main__":
    sys.exit(main())
