"""The product's local Spark Connect server (``contract_gate.local_spark.connect_server``, what
the quick start's demo gates through): it listens on 127.0.0.1 only, serves Delta to a client,
keeps Spark's and the JVM's scratch files owner-only, and is gone, port and process, after ``stop``; a server that cannot start is an error with its log.

The client runs in a child process: the suite's shared local Spark makes this process a classic
PySpark driver, and a process is a Connect client or a classic driver, not both."""

from __future__ import annotations

import ipaddress
import json
import stat
import subprocess
import sys

import psutil
import pytest

from contract_gate.local_spark.connect_server import LocalConnectServer, listening

CLIENT = """
import json, sys
from contract_gate_spark.runtime.session import connect
spark = connect(sys.argv[1])
spark.range(3).write.format("delta").save(sys.argv[2])
history = spark.sql(f"DESCRIBE HISTORY delta.`{sys.argv[2]}`").collect()
print(json.dumps({"rows": spark.read.format("delta").load(sys.argv[2]).count(),
                  "operations": [row["operation"] for row in history]}))
spark.stop()
"""


@pytest.mark.slow  # a server JVM and a client: about 40 s on two shared cores
def test_the_local_server_serves_delta_on_loopback_and_stops(tmp_path):
    server = LocalConnectServer(tmp_path / "server", cores=1)
    server.start()
    try:
        jvm = psutil.Process(server.process.pid)
        ports = {c.laddr for p in (jvm, *jvm.children(recursive=True)) for c in p.net_connections("tcp")
                 if c.status == psutil.CONN_LISTEN and c.laddr.port == server.port}
        # the JVM's socket may be IPv6, bound to the IPv4-mapped loopback ::ffff:127.0.0.1
        bound = {ipaddress.ip_address(address.ip) for address in ports}
        assert bound and {getattr(ip, "ipv4_mapped", None) or ip for ip in bound} == {ipaddress.ip_address("127.0.0.1")}
        done = subprocess.run([sys.executable, "-c", CLIENT, server.url, str(tmp_path / "table")],
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        assert json.loads(done.stdout.strip().splitlines()[-1]) == {"rows": 3, "operations": ["WRITE"]}
        # Spark's shuffle and spill files (rows) in the server's owner-only folder, not in /tmp
        assert list(server.scratch.glob("blockmgr-*")) and stat.S_IMODE(server.scratch.stat().st_mode) == 0o700
        # and the JVM's temporary files: the clients' artifacts, the native library Parquet's snappy unpacked
        assert list(server.scratch.glob("artifacts-*")) and list(server.scratch.glob("snappy-*")), \
            sorted(path.name for path in server.scratch.iterdir())
    finally:
        server.stop()
    assert server.process.poll() is not None
    assert not listening(server.port)


def test_a_server_that_cannot_start_is_an_error_with_its_log(tmp_path):
    server = LocalConnectServer(tmp_path / "server", conf={"spark.master": "not-a-master"})
    with pytest.raises(RuntimeError, match="the Spark Connect server exited") as failure:
        server.start(timeout=300)
    assert str(server.log) in str(failure.value)  # the error names the log, which says why
    assert "Master must either be yarn or start with spark, k8s, or local" in server.log.read_text()
    assert server.process.poll() is not None
