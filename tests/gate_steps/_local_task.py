"""Run as a child process: what a gate task does in ``local`` mode, the ``local`` runner's gate job
(spark-submit, its JVM and Python driver), and nothing else, so that ``kill -9`` of this process
is the kill of a task process in a real deployment (an OOM kill, a lost worker slot).

    python _local_task.py <steps> <work folder> <arguments as JSON>
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from contract_gate.runners.base import GateJob
from contract_gate.runners.local import LocalRunner

if __name__ == "__main__":
    steps, workdir, arguments = sys.argv[1], Path(sys.argv[2]), json.loads(sys.argv[3])
    job = GateJob(steps, arguments, workdir, writes_result=steps != "validate", name=f"killed-task {steps}")
    print(json.dumps(LocalRunner(cores=1, cwd=str(workdir)).start(job), default=str))
