"""Twelve mistakes a newcomer makes, each through the real ``contract-gate`` process: every one
prints at most three lines on stderr (no traceback, no Java, Spark or Airflow log line), ends
with the exit code docs/cli.md gives, and the one-line errors name the file or option to fix."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

REPO = Path(__file__).resolve().parents[2]
CONTRACTS = REPO / "tests" / "contracts_bad"
CLI = str(Path(sys.executable).parent / "contract-gate")
ORDER = {"order_id": "O1", "customer_id": "C1", "order_total": 12.5, "currency": "USD",
         "order_timestamp": "2026-01-01T00:00:00Z"}


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    """A folder as a newcomer has it: the example contracts, the batches to try, nothing else."""
    home = tmp_path_factory.mktemp("newcomer")
    shutil.copytree(REPO / "contracts", home / "contracts")
    orders = (home / "contracts" / "orders.yaml").read_text()
    (home / "unknown_type.yaml").write_text(orders.replace("logicalType: number", "logicalType: money", 1))
    shutil.copy(REPO / "tests" / "contracts_real" / "multi_two_objects_per_object_settings.yaml", home / "two.yaml")
    shutil.copy(REPO / "tests" / "contracts_hostile" / "own_object_named_runs.yaml", home / "reserved.yaml")
    data = home / "data"
    data.mkdir()
    (data / "ok.json").write_text(json.dumps(ORDER) + "\n")
    (data / "empty.json").write_text("")
    (data / "garbage.json").write_text("order_id,customer_id\nO1,C1\n")
    # one value past the JSON parser's 20 MB string limit
    (data / "oversized.json").write_text(json.dumps(ORDER) + "\n" + json.dumps({**ORDER, "customer_id": "C" * 21_000_000})
                                         + "\n")
    pq.write_table(pa.table({**{k: [v] for k, v in ORDER.items()}, "order_total": ["12.5"]}), data / "wrong_type.parquet")
    return home


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def cli(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "CONTRACT_GATE_HOME": str(home), "AIRFLOW_HOME": str(home / ".airflow")}
    env.pop("SPARK_REMOTE", None)
    return subprocess.run([CLI, *args], cwd=home, env=env, capture_output=True, text=True, timeout=600, check=False)


CASES = {
    # name: (arguments, exit code, what stderr says on an error (2), else what the table on stdout says)
    "malformed YAML": (["run", str(CONTRACTS / "01_yaml_syntax_error.yaml")], 2, "01_yaml_syntax_error.yaml:19:"),
    "unknown type": (["validate", "unknown_type.yaml", "--data", "data/ok.json", "--input-format", "json"], 2,
                     "unknown_type.yaml:36: schema[0].properties[2].logicalType: 'money' is not one of"),
    "missing landing": (["run", "contracts/orders.yaml"], 2, "or give --landing PATH"),
    "missing --data": (["validate", "contracts/orders.yaml", "--data", "data/orders.parquet"], 2,
                       "no data at data/orders.parquet: give --data"),
    "object not named": (["run", "two.yaml", "--landing", "data/ok.json", "--input-format", "json"], 2,
                         "'order_headers', 'order_lines': give --object"),
    "wrong column type": (["validate", "contracts/orders.yaml", "--data", "data/wrong_type.parquet", "--input-format",
                           "parquet"], 1, "wrong type         order_total: string, expected double"),
    # validate judges the rules, which an empty file breaks none of (a gate run quarantines it: submission.not_empty)
    "empty batch": (["validate", "contracts/orders.yaml", "--data", "data/empty.json", "--input-format", "json"], 0,
                    ": 0 rows"),
    "non-JSON batch": (["validate", "contracts/orders.yaml", "--data", "data/garbage.json", "--input-format", "json"], 1,
                       "rows: 0 valid, 2 invalid"),
    "oversized record": (["validate", "contracts/orders.yaml", "--data", "data/oversized.json", "--input-format", "json"],
                         1, "rows: 1 valid, 1 invalid"),
    "unknown option": (["validate", "contracts/orders.yaml", "--data", "data/ok.json", "--colour"], 2,
                       "unrecognized arguments: --colour (see `contract-gate validate --help`)"),
    "unreachable Connect server": (["validate", "contracts/orders.yaml", "--data", "data/ok.json", "--input-format",
                                    "json", "--remote", "sc://127.0.0.1:{port}"], 2, "no Spark Connect server answers"),
    "reserved table name": (["run", "reserved.yaml"], 2, "a name the gate keeps for itself"),
}


@pytest.mark.slow  # a CLI process each, four of them with local Spark
@pytest.mark.parametrize("case", CASES)
def test_a_bad_input_is_a_short_message_and_the_documented_exit_code(world, case):
    args, code, says = CASES[case]
    done = cli(world, *[arg.format(port=_free_port()) for arg in args])

    lines = done.stderr.splitlines()
    assert done.returncode == code, done.stderr
    assert len(lines) <= 3, done.stderr
    assert "Traceback" not in done.stderr and " WARN " not in done.stderr and "[error" not in done.stderr
    if code == 2:
        assert says in done.stderr and done.stdout == ""
    else:  # a verdict on the data: a record that does not parse fails record.parseable only
        assert says in done.stdout and "_corrupt_record" not in done.stdout
        failed = [line.split()[0] for line in done.stdout.splitlines()
                  if line.rstrip().endswith("FAIL") and not line.startswith("rows:")]
        assert failed == (["record.parseable"] if "invalid" in says else []), done.stdout
