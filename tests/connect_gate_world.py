"""Four real gates over the suite's Spark Connect server, built once per session for the tests of
the ``spark_connect`` mode's DAG (tests/spark_connect/test_gate_dag_over_connect.py) and of the
gates' OpenLineage events and StatsD metrics (tests/airflow/test_lineage_and_metrics.py).

The gates run in a child process of their own (``spark_connect/_connect_dag_run.py``): Airflow
reads its home, database, metrics and OpenLineage settings once per process, and the suite's
shared Airflow world has read its own. The child gets the OpenLineage provider's file transport
and a real StatsD UDP listener on 127.0.0.1, and every Java process below it is noted while it
runs: the Connect server is detached from the test's process (``tests/connect_server.py``), so
any Java process found there is one the gates started.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

from java_processes import run_watching_java
from contract_gate_spark.runtime.job_start import CONNECT_CLIENT_ENV

RUN = Path(__file__).with_name("spark_connect") / "_connect_dag_run.py"
MARKER = "Org-Marker-5f1c9e"  # every batch's classified columns hold it
RESULT = "RESULT "  # the prefix of the child's result line


def build(server, folder: Path) -> dict:
    """The four runs (``published``, ``rejected``, ``rerun``, ``split``: decision, task states,
    submission), the world's ``home``, the OpenLineage ``events`` (parsed, and ``events_text``),
    the StatsD ``metrics`` (one text line each) and the ``java`` processes seen below the child."""
    events_file = folder / "openlineage.jsonl"
    listener = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 * 1024 * 1024)
    listener.bind(("127.0.0.1", 0))
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("AIRFLOW", "CONTRACT_GATE_", "OPENLINEAGE"))
           and name not in CONNECT_CLIENT_ENV}
    env.update({
        "AIRFLOW_CONN_SPARK_CONNECT_DEFAULT": server.connection(),
        "CONTRACT_GATE_TEST_WORLD_DIR": str(folder),
        "AIRFLOW__METRICS__STATSD_ON": "True",
        "AIRFLOW__METRICS__STATSD_HOST": "127.0.0.1",
        "AIRFLOW__METRICS__STATSD_PORT": str(listener.getsockname()[1]),
        "AIRFLOW__METRICS__STATSD_PREFIX": "airflow",
        "AIRFLOW__METRICS__STATSD_INFLUXDB_ENABLED": "True",  # tags in the packet: name,tag=value:...
        "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps({"type": "file", "log_file_path": str(events_file),
                                                       "append": True}),
        "AIRFLOW__OPENLINEAGE__EXECUTE_IN_THREAD": "True",  # emit in the task's process, not a fork of it
        "AIRFLOW__LOGGING__LOGGING_LEVEL": "WARNING",
    })
    try:
        done, java = run_watching_java([sys.executable, str(RUN), MARKER], env, folder, timeout=1500)
        assert done.returncode == 0, done.stderr[-5000:]
        # every datagram was sent before the process exited; on loopback it is queued by then
        listener.setblocking(False)
        packets = []
        while True:
            try:
                packets.append(listener.recv(65535).decode())
            except BlockingIOError:
                break
    finally:
        listener.close()
    result = json.loads(next(line for line in done.stdout.splitlines() if line.startswith(RESULT))[len(RESULT):])
    events_text = events_file.read_text()
    return {**result, "java": java, "marker": MARKER,
            "events": [json.loads(line) for line in events_text.splitlines() if line.strip()],
            "events_text": events_text,
            "metrics": [line for packet in packets for line in packet.split("\n") if line],
            "output": done.stdout + done.stderr}
