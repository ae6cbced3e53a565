"""Run as a child process: what a gate task does when its driver runs on this worker, and nothing
else, so that ``kill -9`` of this process is the kill of a task process in a real deployment (an
OOM kill, a lost worker slot). ``local``: the ``local`` runner's gate job (spark-submit, its JVM
and Python driver); ``spark_submit``: the ``spark_submit`` runner's, in client deploy mode through
``SparkSubmitHook`` (the connection ``AIRFLOW_CONN_SPARK_KILLED_TASK``, inherited).

    python _local_task.py <mode> <steps> <work folder> <arguments as JSON>
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from contract_gate.runners import get_runner
from contract_gate.runners.base import GateJob

CONNECTION = "spark_killed_task"

if __name__ == "__main__":
    mode, steps, workdir, arguments = sys.argv[1], sys.argv[2], Path(sys.argv[3]), json.loads(sys.argv[4])
    job = GateJob(steps, arguments, workdir, writes_result=steps != "validate", name=f"killed-task {steps}")
    if mode == "local":
        runner = get_runner("local", cores=1, cwd=str(workdir))
    else:
        runner = get_runner("spark_submit", conn_id=CONNECTION,
                            spark_conf={"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"})
    print(json.dumps(runner.start(job), default=str))
