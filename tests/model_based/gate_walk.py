"""A seeded random walk through the gate's whole life, checked against a reference model.

The world is a folder with contracts, landings and a lakehouse. Each step does what a user or a
producer does: land a batch (good, bad, malformed, empty, oversized, one key twice, keys the
target already holds) and gate it, evolve a contract (an optional column, a wider enum, a new
major version with a new target, a refused breaking change), re-run or correct a batch, ask
``validate --target``, apply retention days later, or stop a run. Its contracts cross both
publication modes with both violation policies, and one contract gates two objects. The gate is
driven the way its DAG drives it, in-process on one Spark session: the submission id from the
landing, the Spark side's ``stage+validate+batch_keys`` and outcome chains (``gate_job``), the
branch's :func:`decide`, the record task's :func:`verdict`, the decision store. Stops run the
stage/validate chain, or the branch's publish, in a child process and kill it (SIGTERM or
SIGKILL), or a whole run in the ``spark_connect`` mode (``_connect_run.py``, a Connect client of
the walk's own server, started when the first such step is drawn; :meth:`GateWorld.close` stops
it), stopped with SIGTERM (Airflow's ``on_kill``) or SIGKILL at a random moment; after a Connect
stop no job of the submission runs on the server (its own status API) within ``CONNECT_STOP_SECONDS``.
Or a whole run in the ``databricks`` mode (``_remote_run.py``, polling runs on the walk's
emulated workspace, ``jobs_api_emulator``, whose existing cluster is a local-mode spark-submit of
the Spark side's wheel), or in the ``spark_submit`` mode's cluster deploy mode (drivers on the
walk's standalone master and worker, ``standalone_cluster``, started when first needed), stopped
the same ways: a SIGKILL leaves its run or driver going, and once the decision is written no run
or driver of the submission goes on (the record's own step,
:func:`~contract_gate.operators.record.write_decision`, ends them first). Or a whole run in the
``spark_submit`` mode's client deploy mode (its drivers on this machine, a ``local[1]`` master),
whose worker process alone is stopped, as a task is: its drivers, in process groups of their own,
must be gone once the decision is written. Or a bad batch's record task (``_record_run.py``),
killed at a random moment (half the time the moment the decision log holds its decision), then
retried in the same run as Airflow retries it. Every contract alerts its rejections to a file of
its own (``FileNotifier``): each rejected decision a run records tells it once, at least once
after a killed record task.

The reference model keeps, per contract and target, which row ids must be in the target and how
many rows the quarantine holds; after every step the invariants (``check``) are compared with
the tables and the decision log. A disagreement is collected with the seed and the step list that
reproduces it, never raised mid-walk, so a soak run reports all of them.

Steps whose findings are known and not yet fixed are named in ``KNOWN_OPEN``: the CI seed leaves
them out, the soak keeps them.
"""

from __future__ import annotations

import collections
import contextlib
import io
import json
import os
import random
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable

import urllib.request
from time import monotonic

import psutil
import yaml
from deltalake import DeltaTable

from contract_gate import decisions
from contract_gate.cli.main import main
from contract_gate.contract.compiler import compile_plan
from contract_gate.decisions.audit import audit
from contract_gate.local_spark.connect_server import LocalConnectServer, free_port
from contract_gate.local_spark.submit import SHORT_JOB_JVM_OPTIONS
from contract_gate.operators.base import as_correction
from contract_gate.operators.branch import decide
from contract_gate.config import alerts_root
from contract_gate.contract.notifiers import FILE_NOTIFIER
from contract_gate.operators.record import alert_recorded, write_decision
from contract_gate.operators.retention import prune_run_folders
from contract_gate.operators.submission import landing_of_run
from contract_gate.runners import GateRunner, get_runner
from contract_gate.runners.base import is_run_of
from contract_gate.operators.validate import summarize
from contract_gate.submission import derive_submission_id, object_of
from contract_gate.work_folders import gate_folder, keep_days, submission_folder
from contract_gate_plan.document import render_plan
from contract_gate_plan.model import Plan
from contract_gate_spark.commands import gate_job
from contract_gate_spark.steps.retention import cleanup
from _record_run import record_inputs
from jobs_api_emulator import JobsApiEmulator
from standalone_cluster import StandaloneCluster
from waiting import wait_until

KNOWN_OPEN: dict[str, str] = {}  # step -> the open finding it exposes; the CI seed leaves these steps out
POLICIES = {  # contract name -> (publication mode, violation policy)
    "meters_append": ("append", "reject_batch"),
    "meters_split": ("append", "split_rows"),
    "meters_keys": ("replace_keys", "reject_batch"),
    "meters_keys_split": ("replace_keys", "split_rows"),
}
PAIR = ("meters_pair", ("north", "south"))  # a contract of two gated objects (not evolved by the walk)
MAX_ROWS = 40  # the contracts' rowCount limit: an oversized batch has more
# duplicate_keys: one key twice in the batch; resent: keys the target already holds (a producer re-sending rows)
KINDS = ("good", "bad", "malformed", "empty", "oversized", "duplicate_keys", "resent")
CONNECT_RUN = Path(__file__).with_name("_connect_run.py")
CONNECT_STOP_SECONDS = 15  # after a Connect client is stopped, no job of its submission runs on the server
REMOTE_RUN = Path(__file__).with_name("_remote_run.py")
DATABRICKS_CONN = "databricks_walk"  # the walk's emulated workspace, AIRFLOW_CONN_DATABRICKS_WALK
STANDALONE_CONN = "spark_standalone_walk"  # the walk's standalone cluster, cluster deploy mode
CLIENT_CONN = "spark_client_walk"  # spark_submit in client deploy mode on a local[1] master
# Its jobs are a few rows: one executor core beside the driver's on the 2-core worker, and the short-job
# JVM options a user's spark_conf would set for them.
STANDALONE_CONF = {"spark.pyspark.python": sys.executable, "spark.cores.max": "1", "spark.executor.memory": "1g",
                   "spark.sql.shuffle.partitions": "2", "spark.databricks.delta.snapshotPartitions": "2",
                   "spark.ui.enabled": "false", "spark.driver.extraJavaOptions": SHORT_JOB_JVM_OPTIONS,
                   "spark.executor.extraJavaOptions": SHORT_JOB_JVM_OPTIONS}
VOLUME = "/Volumes/main/contract_gate/walk"
RECORD_RUN = Path(__file__).with_name("_record_run.py")
REJECTED = ("quarantined", "split", "failed")


def processes_working_in(folder: Path) -> list[str]:
    """The live processes with a path in ``folder`` on their command line (a job's spark-submit, JVM,
    driver); not a folder whose name only begins with its name."""
    inside = f"{folder}{os.sep}"
    found = []
    for process in psutil.process_iter(["cmdline", "status"]):
        if process.info["status"] != psutil.STATUS_ZOMBIE and any(
                inside in part for part in process.info["cmdline"] or ()):
            found.append(f"{process.pid} {' '.join(process.info['cmdline'])[:120]}")
    return found


def alert_lines(contract_file_stem: str) -> list[dict]:
    """The rejection alerts the contract's ``FileNotifier`` wrote (its file in the alerts folder)."""
    path = alerts_root() / f"{contract_file_stem}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []


def column_of(location: str, column: str) -> list:
    """A column of the Delta table at ``location``; [] when no commit has made it a table (none yet,
    or a job stopped while it created the table left its log folder empty)."""
    if not any((Path(location) / "_delta_log").glob("*.json")):
        return []
    return DeltaTable(location).to_pyarrow_table(columns=[column]).column(column).to_pylist()


def contract_text(name: str, version: str, mode: str, policy: str, *, optional_column: bool = False,
                  kinds: tuple[str, ...] = ("a", "b"), reading_type: str = "bigint",
                  objects: tuple[str, ...] = ()) -> str:
    """The contract, its tables and landing relative to ``CONTRACT_GATE_HOME`` (the world's root);
    its one schema object is named like it, unless ``objects`` names several."""
    properties = [
        {"name": "meter_id", "physicalType": "string", "logicalType": "string", "primaryKey": True,
         "required": True},
        {"name": "reading", "physicalType": reading_type, "logicalType": "integer", "required": True,
         "logicalTypeOptions": {"minimum": 0}},
        {"name": "kind", "physicalType": "string", "logicalType": "string", "required": True,
         "quality": [{"type": "library", "metric": "invalidValues", "arguments": {"validValues": list(kinds)},
                      "mustBe": 0}]},
    ]
    if optional_column:
        properties.append({"name": "note", "physicalType": "string", "logicalType": "string"})
    gate: dict[str, Any] = {"landing": {"path": "landing/{object}" if objects else f"landing/{name}", "format": "json"},
                            "publication": {"mode": mode}, "violations": {"policy": policy},
                            "evolution": {"breaking": "newTarget"},
                            "alerts": {"onRejection": [{"class": FILE_NOTIFIER, "arguments": {"path": f"{name}.jsonl"}}]}}
    if policy == "split_rows":
        gate["violations"]["maxInvalidShare"] = 0.5
    document = {
        "apiVersion": "v3.1.0", "kind": "DataContract", "id": f"urn:walk:{name}", "version": version,
        "status": "active",
        "servers": [{"server": "local", "type": "local", "environment": "dev", "path": "lakehouse",
                     "format": "delta"}],
        "schema": [{"name": each, "physicalType": "table", "properties": properties,
                    "quality": [{"type": "library", "metric": "rowCount", "mustBeLessOrEqualTo": MAX_ROWS}]}
                   for each in objects or (name,)],
        "customProperties": [{"property": "contractGate", "value": gate}],
    }
    return yaml.safe_dump(document, sort_keys=False)


@dataclass
class Contract:
    """One gated object of the world (a contract of several has one per object, sharing its file)
    and what the model expects of its current target."""

    name: str
    mode: str
    policy: str
    file_stem: str = ""  # the contract file's name; default ``name``
    object: str | None = None  # the schema object, in a contract of several
    objects: tuple[str, ...] = ()  # every object of that contract
    major: int = 1
    minor: int = 0
    optional_column: bool = False
    kinds: tuple[str, ...] = ("a", "b")
    target_ids: dict[str, set[str]] = field(default_factory=dict)  # target location -> ids published
    published: dict[str, str] = field(default_factory=dict)  # submission -> outcome, of this world
    last_batch: list[dict] = field(default_factory=list)
    last_submission: str | None = None

    @property
    def version(self) -> str:
        return f"{self.major}.{self.minor}.0"


@dataclass
class StoppedBatch:
    """A batch landed for a run the walk stops, and what the model knows of it."""

    contract: Contract
    kind: str
    rows: list[dict]
    invalid: list[str]
    plan: Plan
    submission_id: str
    landing: dict


@dataclass
class Disagreement:
    step: int
    action: str
    what: str


class GateWorld:
    """The folder, the contracts, the model and the walk's own log of steps."""

    def __init__(self, root: Path, spark, seed: int, skip: set[str] | None = None):
        if os.environ.get("CONTRACT_GATE_HOME") != str(root):
            raise ValueError("the world's relative table paths resolve under CONTRACT_GATE_HOME: set it to its root")
        self.root = root
        self.spark = spark
        self.rng = random.Random(seed)
        self.seed = seed
        self.skip = set(skip or ())
        (root / "contracts").mkdir(parents=True, exist_ok=True)
        self.contracts = {name: Contract(name, *policy) for name, policy in POLICIES.items()}
        stem, objects = PAIR
        for each in objects:
            self.contracts[f"{stem}.{each}"] = Contract(f"{stem}.{each}", "append", "split_rows", stem, each, objects)
        for contract in self.contracts.values():
            self.write_contract(contract)
        self.next_id = 0
        self.steps: list[str] = []
        self.disagreements: list[Disagreement] = []
        self.stopped: set[tuple[str, str]] = set()  # (contract, submission) of runs stopped before a verdict
        self.connect_server: LocalConnectServer | None = None
        self.connect_ui: str | None = None  # the server's status API
        self.connect_stops: list[tuple[str, float]] = []  # (signal, seconds until no job of it ran on the server)
        self.workspace: JobsApiEmulator | None = None
        self.local_runner = get_runner("local", cwd=str(root))  # the in-process runs' record: nothing to end
        self.databricks_stops: list[tuple[str, int]] = []  # (signal, runs the decision had to end)
        self.cluster: StandaloneCluster | None = None
        self.standalone_stops: list[tuple[str, int]] = []  # (signal, drivers the decision had to end)
        # (branch, where the stop left the batch: "verdict", "nothing committed", "target", "quarantine", "both")
        self.stop_effects: collections.Counter[tuple[str, str]] = collections.Counter()
        self.runs = 0  # the record tasks' runs so far: each records once, as a DAG run does
        self.killed_record_runs: set[str] = set()
        self.record_stops: collections.Counter[str] = collections.Counter()  # alert lines a killed record task's run left
        os.environ[f"AIRFLOW_CONN_{CLIENT_CONN.upper()}"] = json.dumps(
            {"conn_type": "spark", "host": "local[1]", "extra": {"contract_gate": {"spark_conf": {
                key: value for key, value in STANDALONE_CONF.items() if not key.startswith("spark.executor")}}}})

    def close(self) -> None:
        """Stop the walk's Spark Connect server, emulated workspace and standalone cluster, if a step
        started them."""
        if self.connect_server is not None:
            self.connect_server.stop()
            self.connect_server = None
        if self.workspace is not None:
            self.workspace.__exit__(None, None, None)
            self.workspace = None
            os.environ.pop(f"AIRFLOW_CONN_{DATABRICKS_CONN.upper()}", None)
        if self.cluster is not None:
            self.cluster.stop()
            self.cluster = None
            os.environ.pop(f"AIRFLOW_CONN_{STANDALONE_CONN.upper()}", None)
        os.environ.pop(f"AIRFLOW_CONN_{CLIENT_CONN.upper()}", None)

    # ---- the world ------------------------------------------------------------------------
    def file(self, contract: Contract) -> Path:
        return self.root / "contracts" / f"{contract.file_stem or contract.name}.yaml"

    def write_contract(self, contract: Contract) -> None:
        self.file(contract).write_text(contract_text(
            contract.file_stem or contract.name, contract.version, contract.mode, contract.policy,
            optional_column=contract.optional_column, kinds=contract.kinds, objects=contract.objects), encoding="utf-8")

    def plan(self, contract: Contract) -> Plan:
        return compile_plan(self.file(contract), object_name=contract.object)

    def rows(self, kind: str, contract: Contract) -> tuple[list[dict], list[str]]:
        """(rows, the ids the contract must refuse) of a batch of ``kind``."""
        count = {"empty": 0, "oversized": MAX_ROWS + 5}.get(kind, self.rng.randint(3, 8))
        rows = []
        for _ in range(count):
            self.next_id += 1
            row: dict[str, Any] = {"meter_id": f"m{self.next_id:06d}", "reading": self.rng.randint(0, 900),
                                   "kind": self.rng.choice(contract.kinds)}
            if contract.optional_column and self.rng.random() < 0.5:
                row["note"] = "n"
            rows.append(row)
        invalid: list[str] = []
        if kind == "bad":
            for row in self.rng.sample(rows, max(1, len(rows) // 3)):
                row["reading"] = -1
                invalid.append(row["meter_id"])
        if kind == "malformed":
            row = self.rng.choice(rows)
            row["reading"] = "not a number"
            invalid.append(row["meter_id"])
        if kind == "duplicate_keys":  # both rows of the key fail key.unique
            row = self.rng.choice(rows)
            rows.append({**row, "reading": self.rng.randint(0, 900)})
            invalid += [row["meter_id"]] * 2
        if kind == "resent":  # valid rows; whether their keys may be published again is the mode's to say
            held = sorted(contract.target_ids.get(self.target_of(contract), ()))
            for row, held_id in zip(rows, self.rng.sample(held, min(len(held), self.rng.randint(1, 3)))):
                row["meter_id"] = held_id
        return rows, invalid

    def target_of(self, contract: Contract) -> str:
        return self.plan(contract).require_tables().require_target().location

    def land(self, contract: Contract, rows: list[dict]) -> None:
        folder = Path(self.plan(contract).require_tables().landing.location)  # type: ignore[union-attr]
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("*.json"):
            old.unlink()
        (folder / "batch.json").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        contract.last_batch = rows

    # ---- the gate, as its DAG runs it ---------------------------------------------------------
    def submission(self, plan: Plan, rerun_of: str | None = None, landing: dict | None = None) -> tuple[str, dict]:
        landing = landing or dict(plan.document["tables"]["landing"])
        return derive_submission_id(plan.contract_id, landing, rerun_of, plan.connection_id,
                                    object_of(plan.object, plan.names.sole)), landing

    def gate(self, contract: Contract, rerun_of: str | None = None, correction: bool = False,
             landing: str | None = None) -> dict | None:
        """One run of the contract's gate on its landing, or on the run's ``landing`` param; the
        decision that stands (None: nothing ran). A param the submission task refuses raises ValueError."""
        plan = self.plan(contract)
        if correction:
            plan = as_correction(plan)
        decisions.recover_missing_decisions(plan, min_age=timedelta(0))
        read = landing_of_run(plan, self.file(contract), None, landing, None)
        submission_id, landing_address = self.submission(plan, rerun_of, read)
        prior = decisions.final_decision(plan, submission_id)
        if prior is not None:
            return prior
        summary, results, states = self.run_gate_steps(plan, submission_id, landing_address)
        return self.record(plan, {"submission_id": submission_id, "rerun_of": rerun_of, "correction": correction},
                           summary, results, states)

    def run_gate_steps(self, plan: Plan, submission_id: str, landing: dict) -> tuple[dict | None, dict, dict]:
        """The run's Spark tasks as its DAG runs them, in-process: ``stage+validate+batch_keys``, then
        the branch's step; what the record task reads of them (summary, results, task states)."""
        folder = submission_folder(plan, submission_id)
        folder.mkdir(parents=True, exist_ok=True)
        plan_file = folder / "plan.json"
        plan_file.write_text(render_plan(plan.document), encoding="utf-8")
        report_path = folder / "report.json"
        common = ["--plan", str(plan_file), "--submission-id", submission_id, "--report", str(report_path)]
        stage_result = folder / "stage.json"
        code = gate_job.main(["stage+validate+batch_keys", *common, "--landing", json.dumps(landing),
                              "--result", str(stage_result)])
        if code != 0:
            return None, {}, {"stage_validate": "failed"}
        candidate = json.loads(stage_result.read_text(encoding="utf-8"))
        summary = summarize(json.loads(report_path.read_text(encoding="utf-8")), report_path, candidate)
        branch, _ = decide(plan, summary)
        result_path = folder / f"{branch}.json"
        code = gate_job.main([branch, *common[:4], "--candidate", json.dumps(candidate["candidate"]),
                              "--version", str(candidate["version"]), "--report", str(report_path),
                              "--result", str(result_path)])
        if code != 0:
            return summary, {}, {branch: "failed"}
        result = json.loads(result_path.read_text(encoding="utf-8"))
        return summary, {branch: result if branch == "split" else {branch: result}}, {branch: "success"}

    def next_run_id(self) -> str:
        """A new run's id, which names its step: ``walk-<step>.<run>``."""
        self.runs += 1
        return f"walk-{len(self.steps)}.{self.runs}"

    def record(self, plan: Plan, submission: dict, summary: dict | None, results: dict,
               states: dict[str, str], runner: GateRunner | None = None, run_id: str | None = None,
               try_number: int = 1) -> dict:
        """The record task's own step (``runner``: the mode the run's jobs ran in), then its alert."""
        record, context_fields = record_inputs(plan, submission, summary, results, states,
                                               run_id or self.next_run_id(), try_number)
        stored = write_decision(plan, record, results, context_fields, runner or self.local_runner)
        _, undelivered = alert_recorded(plan, stored, context_fields["run_id"])
        if undelivered:
            self.disagree(f"{plan.contract_id}: {'; '.join(undelivered)}")
        return stored

    # ---- steps ----------------------------------------------------------------------------
    def step_land_and_gate(self, kind: str) -> None:
        contract = self.rng.choice(list(self.contracts.values()))
        rows, invalid = self.rows(kind, contract)
        self.land(contract, rows)
        target = self.target_of(contract)
        decision = self.gate(contract)
        self.expect(contract, decision, rows, invalid, kind, target)

    def expect(self, contract: Contract, decision: dict | None, rows: list[dict], invalid: list[str], kind: str,
               target: str) -> None:
        """Compare the decision with the model's and add its published ids to the model."""
        if decision is None:
            return self.disagree(f"{contract.name}: no decision for a {kind} batch")
        outcome = decision["outcome"]
        if decision.get("source") == "gate" and not decision["run_id"].startswith(f"walk-{len(self.steps)}."):
            return  # this batch was gated before (same content): nothing new
        ids = [r["meter_id"] for r in rows]
        held = set(ids) & contract.target_ids.get(target, set())
        if kind in ("empty", "oversized"):
            expected = "quarantined"
        elif held and contract.mode == "append":  # key.unique_across_batches fails the whole batch
            expected = "quarantined"
        elif not invalid:
            expected = "published"
        elif contract.policy == "split_rows":
            expected = "split" if len(invalid) / len(rows) <= 0.5 else "quarantined"
        else:
            expected = "quarantined"
        if outcome != expected:
            self.disagree(f"{contract.name}: a {kind} batch ({len(rows)} rows, {len(invalid)} invalid) was {outcome}"
                          f" ({decision.get('reason')}); the model expects {expected}")
        if outcome in ("published", "split"):
            kept = [i for i in ids if outcome == "published" or i not in invalid]
            contract.target_ids.setdefault(target, set()).update(kept)
        contract.last_submission = decision["submission_id"]

    def step_evolve(self, how: str, contract: Contract | None = None) -> None:
        """Evolve ``contract`` (default a random one of a single object) the way ``how`` says."""
        contract = contract or self.rng.choice([c for c in self.contracts.values() if c.object is None])
        if how == "optional_column":
            if contract.optional_column:
                return
            contract.optional_column, contract.minor = True, contract.minor + 1
        elif how == "wider_enum":
            contract.kinds, contract.minor = (*contract.kinds, chr(ord(contract.kinds[-1]) + 1)), contract.minor + 1
        elif how == "new_major":
            contract.major, contract.minor = contract.major + 1, 0
        elif how == "refused_breaking":
            # a narrower enum in a minor version: `diff` says breaking, the gate must not migrate
            old = self.file(contract).read_text(encoding="utf-8")
            narrowed = yaml.safe_load(old)
            narrowed["version"] = f"{contract.major}.{contract.minor + 1}.0"
            narrowed["schema"][0]["properties"][1]["physicalType"] = "int"  # narrowing: bigint -> int
            candidate = self.root / "work" / f"{contract.name}_refused.yaml"
            candidate.parent.mkdir(parents=True, exist_ok=True)
            candidate.write_text(yaml.safe_dump(narrowed, sort_keys=False), encoding="utf-8")
            code, out = self.cli("diff", self.file(contract), candidate, "--json")
            if code != 1 or not json.loads(out)["breaking"]:
                self.disagree(f"{contract.name}: diff of a narrowed column says exit {code}: {out[:200]}")
            return
        self.write_contract(contract)

    def step_rerun(self, correction: bool, from_file: bool = False) -> None:
        """Re-run the last submission of a contract from a fixed batch (every row valid): landed
        again, or (``from_file``) in a file the run's ``landing`` param names, as ``contract-gate
        rerun --landing`` does. Such a file is half the time outside the lakehouse: the submission
        task must refuse it before anything is read, and the log and tables stay as they are."""
        candidates = [c for c in self.contracts.values() if c.last_submission
                      and (not correction or c.mode == "replace_keys")]
        if from_file:  # a fix the submission task takes: of a rejected submission
            candidates = [c for c in candidates if (decisions.final_decision(self.plan(c), c.last_submission) or
                                                    {"outcome": "published"})["outcome"] not in ("published", "split")]
        if not candidates:
            return
        contract = self.rng.choice(candidates)
        plan = self.plan(contract)
        prior = decisions.final_decision(plan, contract.last_submission)
        if prior is None:
            return
        if prior["outcome"] in ("published", "split") and not correction:
            return  # refused, as the submission task refuses it
        target = self.target_of(contract)
        # the producer's fix: valid readings, each key once, and in append mode no key the target holds
        refused = contract.target_ids.get(target, set()) if contract.mode == "append" else set()
        fixed: dict[str, dict] = {}
        for row in contract.last_batch:
            if row["meter_id"] not in refused:
                fixed.setdefault(row["meter_id"], {**row, "reading": abs(row["reading"])
                                                   if isinstance(row["reading"], int) else 1})
        if not fixed:
            return
        rows = list(fixed.values())[:MAX_ROWS]
        if not from_file:
            self.land(contract, rows)
            decision = self.gate(contract, rerun_of=contract.last_submission, correction=correction)
            return self.expect(contract, decision, contract.last_batch, [], "good", target)
        outside = self.rng.random() < 0.5
        fix = self.root / ("outside" if outside else "lakehouse/fixes") / f"{contract.name}-{len(self.steps)}.json"
        fix.parent.mkdir(parents=True, exist_ok=True)
        fix.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        try:
            decision = self.gate(contract, rerun_of=contract.last_submission, correction=correction, landing=str(fix))
        except ValueError as exc:
            if not outside:
                self.disagree(f"{contract.name}: a fix inside the lakehouse was refused: {exc}")
            return None
        if outside:
            return self.disagree(f"{contract.name}: the run read {fix}, outside the lakehouse: {decision}")
        contract.last_batch = rows
        return self.expect(contract, decision, rows, [], "good", target)

    def step_validate_target(self) -> None:
        """``validate --target`` of each contract's deployed target says what the gate published: pass."""
        contract = self.rng.choice(list(self.contracts.values()))
        target = self.plan(contract).require_tables().require_target()
        if not target.is_path or not (Path(target.location) / "_delta_log").is_dir():
            return
        code, out = self.cli("validate", self.file(contract), "--target", "--json",
                             *(("--object", contract.object) if contract.object else ()))
        if code != 0:
            self.disagree(f"{contract.name}: validate --target of the published target exits {code}: {out[:300]}")

    def step_preview(self) -> None:
        """``preview`` of the deployed, unchanged contract decides as the gate did: exit 0."""
        contract = self.rng.choice([c for c in self.contracts.values() if c.object is None])
        if not contract.target_ids:
            return
        code, out = self.cli("preview", self.file(contract), "--last", "3", "--json")
        if code != 0:
            self.disagree(f"{contract.name}: preview of the deployed contract exits {code}: {out[-300:]}")

    def step_stop(self, sig: signal.Signals) -> None:
        """Stage and validate in a child process, stopped with ``sig`` at a random moment; the run is
        recorded as the record task records a broken run (``failed``, non-final)."""
        batch = self.stoppable_batch()
        if batch is None:
            return
        contract, plan, submission_id = batch.contract, batch.plan, batch.submission_id
        folder = submission_folder(plan, f"{submission_id}-stopped")
        folder.mkdir(parents=True, exist_ok=True)
        plan_file = folder / "plan.json"
        plan_file.write_text(render_plan(plan.document), encoding="utf-8")
        child = subprocess.Popen(
            [sys.executable, "-m", "contract_gate_spark.commands.gate_job", "stage+validate+batch_keys",
             "--plan", str(plan_file), "--submission-id", submission_id, "--report", str(folder / "report.json"),
             "--landing", json.dumps(batch.landing), "--result", str(folder / "stage.json")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:  # a random moment of the child's run: starting Spark, staging or validating
            child.wait(timeout=self.rng.uniform(0.5, 20.0))
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, sig)
            child.wait(timeout=120)
        self.stopped.add((contract.name, submission_id))
        self.record(plan, {"submission_id": submission_id}, None, {}, {"stage_validate": "failed"})
        if decisions.final_decision(plan, submission_id) is not None:
            self.disagree(f"{contract.name}: the run stopped with {sig.name} has a final decision")
        self.check()  # the stopped run changed no table and left the log in agreement with them
        # the next run gates the same batch: the stop left it gateable
        target = plan.require_tables().require_target().location
        decision = self.gate(contract)
        self.stopped.discard((contract.name, submission_id))
        self.expect(contract, decision, batch.rows, batch.invalid, batch.kind, target)

    def step_stop_publish(self, sig: signal.Signals) -> None:
        """Stage and validate a batch, then run the branch's step (publish, quarantine or split) in a
        child process stopped with ``sig`` at a random moment: before, during, between or after its
        commits."""
        batch = self.stoppable_batch()
        if batch is None:
            return
        contract, plan, submission_id = batch.contract, batch.plan, batch.submission_id
        folder = self.run_folder(contract, plan, f"{submission_id}-publish-stopped")
        common = ["--plan", str(folder / "plan.json"), "--submission-id", submission_id,
                  "--report", str(folder / "report.json")]
        if gate_job.main(["stage+validate+batch_keys", *common, "--landing", json.dumps(batch.landing),
                          "--result", str(folder / "stage.json")]) != 0:
            return self.disagree(f"{contract.name}: stage and validate of a {batch.kind} batch failed")
        candidate = json.loads((folder / "stage.json").read_text(encoding="utf-8"))
        summary = summarize(json.loads((folder / "report.json").read_text(encoding="utf-8")), folder / "report.json",
                            candidate)
        branch, _ = decide(plan, summary)
        child = subprocess.Popen(
            [sys.executable, "-m", "contract_gate_spark.commands.gate_job", branch, *common,
             "--candidate", json.dumps(candidate["candidate"]), "--version", str(candidate["version"]),
             "--result", str(folder / f"{branch}.json")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        self.stop_at_random(child, sig, 0.5, 20.0, self.commit_of(plan, submission_id))
        self.after_stop(batch, summary, branch, folder / f"{branch}.json")

    def step_stop_connect(self, sig: signal.Signals) -> None:
        """A whole run of a good batch in the ``spark_connect`` mode (stage+validate, then the branch's
        step, each a job of the runner) in a client process stopped with ``sig`` at a random moment;
        then no job of the submission runs on the server within ``CONNECT_STOP_SECONDS``."""
        batch = self.stoppable_batch()
        if batch is None:
            return
        contract, plan, submission_id, landing = batch.contract, batch.plan, batch.submission_id, batch.landing
        folder = self.stopped_run(CONNECT_RUN, [self.connect_url()], contract, plan, submission_id, landing, sig, 40.0)
        seconds = self.wait_for_no_job_of(submission_id)
        self.connect_stops.append((sig.name, seconds))
        if seconds > CONNECT_STOP_SECONDS:
            self.disagree(f"{contract.name}: a job of {submission_id} ran on the server {seconds:.0f} s after the "
                          f"client was stopped with {sig.name}")
        self.after_stopped_run(batch, folder)

    def step_stop_databricks(self, sig: signal.Signals) -> None:
        """A whole run of a good batch in the ``databricks`` mode (stage+validate, then the branch's
        step, each a run on the emulated workspace) in a worker process stopped with ``sig`` at a
        random moment; once its decision is written, no run of the submission goes on."""
        batch = self.stoppable_batch()
        if batch is None:
            return
        contract, plan, submission_id, landing = batch.contract, batch.plan, batch.submission_id, batch.landing
        runner = self.databricks_runner()
        folder = self.stopped_run(REMOTE_RUN, ["databricks", DATABRICKS_CONN], contract, plan, submission_id, landing,
                                  sig, 60.0)
        self.databricks_stops.append((sig.name, len(self.runs_going(plan, submission_id))))
        if self.workspace is not None and self.workspace.rejected:
            self.disagree(f"requests the workspace's SDK models refuse: {self.workspace.rejected[-3:]}")
            self.workspace.rejected.clear()
        self.after_stopped_run(batch, folder, runner)

    def step_stop_standalone(self, sig: signal.Signals) -> None:
        """A whole run of a good batch in the ``spark_submit`` mode's cluster deploy mode (stage+validate,
        then the branch's step, each a driver launched on the walk's standalone cluster) in a worker
        process stopped with ``sig`` at a random moment; once its decision is written, no driver of the
        submission runs. The run works in the submission's own work folder, as the DAG's tasks do:
        the record task finds the drivers written down there."""
        batch = self.stoppable_batch()
        if batch is None:
            return
        contract, plan, submission_id, landing = batch.contract, batch.plan, batch.submission_id, batch.landing
        runner = self.standalone_runner()
        folder = self.stopped_run(REMOTE_RUN, ["spark_submit", STANDALONE_CONN], contract, plan, submission_id,
                                  landing, sig, 80.0, folder_name=submission_id)
        self.standalone_stops.append((sig.name, len(self.drivers_running())))
        self.after_stopped_run(batch, folder, runner)

    def step_stop_submit_client(self, sig: signal.Signals) -> None:
        """A whole run of a good batch in the ``spark_submit`` mode's client deploy mode (stage+validate,
        then the branch's step, each a spark-submit whose driver runs on this machine) in a worker
        process stopped with ``sig`` at a random moment, the worker alone, as a task is killed; once
        its decision is written, no process of its jobs is left."""
        batch = self.stoppable_batch()
        if batch is None:
            return
        contract, plan, submission_id, landing = batch.contract, batch.plan, batch.submission_id, batch.landing
        runner = get_runner("spark_submit", conn_id=CLIENT_CONN)
        folder = self.stopped_run(REMOTE_RUN, ["spark_submit", CLIENT_CONN], contract, plan, submission_id, landing,
                                  sig, 60.0, folder_name=submission_id)
        self.after_stopped_run(batch, folder, runner)

    def step_stop_record(self) -> None:
        """A bad batch's run whose record task is killed (SIGKILL: the OOM killer, a lost worker) at a
        random moment, half the time the moment the decision log holds its decision, so between
        recording and alerting; Airflow's retry of the task (the same run, its next try) finds the
        decision and alerts in its place: one decision, and the notifier told at least once by that
        run (:meth:`check_alerts`)."""
        contract = self.rng.choice(list(self.contracts.values()))
        rows, invalid = self.rows("bad", contract)
        self.land(contract, rows)
        target = self.target_of(contract)
        plan = self.plan(contract)
        submission_id, landing = self.submission(plan)
        if decisions.final_decision(plan, submission_id) is not None:
            return
        summary, results, states = self.run_gate_steps(plan, submission_id, landing)
        run_id = self.next_run_id()
        self.killed_record_runs.add(run_id)
        folder = self.run_folder(contract, plan, f"{submission_id}-record-stopped")
        (folder / "record.json").write_text(json.dumps({
            "submission": {"submission_id": submission_id}, "summary": summary, "results": results, "states": states,
            "run_id": run_id}), encoding="utf-8")
        with (folder / "worker.log").open("w") as log:
            child = subprocess.Popen([sys.executable, str(RECORD_RUN), str(folder / "plan.json"),
                                      str(folder / "record.json")], stdout=log, stderr=log, start_new_session=True)
            killed = self.stop_at_random(child, signal.SIGKILL, 0.5, 8.0,
                                         self.commit_of(plan, submission_id, ("decisions",)))
        if not killed and child.returncode != 0:
            self.disagree(f"{contract.name}: the record task of {submission_id} failed before its kill: "
                          f"{(folder / 'worker.log').read_text(encoding='utf-8')[-300:]}")
        recorded_before = decisions.final_decision(plan, submission_id) is not None

        def told() -> int:
            return sum(line["run_id"] == run_id for line in alert_lines(contract.file_stem or contract.name))

        told_before = told()
        decision = self.record(plan, {"submission_id": submission_id}, summary, results, states, run_id=run_id,
                               try_number=2)
        self.record_stops[f"{'killed' if killed else 'ended'} {'after' if recorded_before else 'before'} its record; "
                          f"it told the notifier {told_before} time(s), its retry {told() - told_before}"] += 1
        self.expect(contract, decision, rows, invalid, "bad", target)

    def stopped_run(self, script: Path, where: list[str], contract: Contract, plan: Plan, submission_id: str,
                    landing: dict, sig: signal.Signals, latest: float, folder_name: str | None = None) -> Path:
        """A whole run of the submission by ``script`` (``_connect_run.py``, ``_remote_run.py``, given
        ``where`` it runs) in a worker process, stopped with ``sig`` within ``latest`` seconds; the run's
        folder (``folder_name`` in the gate's work folders, else one of the stopped run's own)."""
        folder = self.run_folder(contract, plan, folder_name or f"{submission_id}-{script.stem.strip('_')}-stopped")
        with (folder / "worker.log").open("w") as log:
            child = subprocess.Popen([sys.executable, str(script), *where, str(folder / "plan.json"), submission_id,
                                      json.dumps(landing), str(folder)], stdout=log, stderr=log, start_new_session=True)
            stopped = self.stop_at_random(child, sig, 2.0, latest, self.commit_of(plan, submission_id))
        if not stopped and child.returncode != 0:  # a good batch's run that failed by itself tests no stop
            self.disagree(f"{contract.name}: the run of {submission_id} failed before its stop: "
                          f"{(folder / 'worker.log').read_text(encoding='utf-8')[-300:]}")
        return folder

    def after_stopped_run(self, batch: StoppedBatch, folder: Path, runner: GateRunner | None = None) -> None:
        """:meth:`after_stop` for a whole run of ``stopped_run``, with the summary and branch it got to."""
        summary_file = folder / "summary.json"
        summary = json.loads(summary_file.read_text(encoding="utf-8")) if summary_file.exists() else None
        branch = decide(batch.plan, summary)[0] if summary else "publish"
        self.after_stop(batch, summary, branch, folder / f"{branch}.result.json", runner)

    def databricks_runner(self) -> GateRunner:
        """The runner of the walk's emulated workspace, started when first needed."""
        if self.workspace is None:
            workspace = JobsApiEmulator(self.root / "workspace", self.root).__enter__()
            workspace.volumes.add(VOLUME)
            workspace.clusters.add("walk-cluster")
            os.environ[f"AIRFLOW_CONN_{DATABRICKS_CONN.upper()}"] = workspace.connection(
                volume=VOLUME, existing_cluster_id="walk-cluster", polling_period_seconds=1)
            self.workspace = workspace
        return get_runner("databricks", conn_id=DATABRICKS_CONN)

    def standalone_runner(self) -> GateRunner:
        """The runner of the walk's standalone cluster in cluster deploy mode, started when first needed."""
        if self.cluster is None:
            cluster = StandaloneCluster(self.root / "standalone")
            cluster.start()
            self.cluster = cluster
            os.environ[f"AIRFLOW_CONN_{STANDALONE_CONN.upper()}"] = json.dumps(
                {"conn_type": "spark", "host": "spark://127.0.0.1", "port": cluster.master_port,
                 "extra": {"deploy-mode": "cluster", "rest-port": cluster.rest_port,
                           "contract_gate": {"polling_period_seconds": 1, "spark_conf": STANDALONE_CONF}}})
        return get_runner("spark_submit", conn_id=STANDALONE_CONN)

    def drivers_running(self) -> list[str]:
        """The drivers the walk's standalone master has not seen end (the walk runs one run at a time)."""
        assert self.cluster is not None
        return [driver["id"] for driver in self.cluster.state()["activedrivers"]]  # no state: the step fails

    def remote_run_folders(self, plan: Plan) -> list[str]:
        """The gate's run folders in the emulated volume (a failed or stopped run's), sorted."""
        if self.workspace is None:
            return []
        folder = self.workspace.local(f"{VOLUME}/runs/{plan.names.gate}")
        return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []

    def runs_going(self, plan: Plan, submission_id: str) -> list[str]:
        """The names of the submission's runs on the emulated workspace not yet ended."""
        assert self.workspace is not None
        return [run["name"] for run in self.workspace.runs.values()
                if is_run_of(run["name"] or "", plan.contract_id, submission_id)
                and self.workspace.state(run).life_cycle_state.value in ("PENDING", "RUNNING", "TERMINATING")]

    def stoppable_batch(self) -> StoppedBatch | None:
        """A new batch landed for a stopped run: good (the branch publishes) or bad (it quarantines,
        or under ``split_rows`` splits: two commits); None when its submission has a final decision
        already."""
        contract = self.rng.choice(list(self.contracts.values()))
        kind = self.rng.choice(("good", "bad"))
        rows, invalid = self.rows(kind, contract)
        self.land(contract, rows)
        plan = self.plan(contract)
        submission_id, landing = self.submission(plan)
        if decisions.final_decision(plan, submission_id) is not None:
            return None
        return StoppedBatch(contract, kind, rows, invalid, plan, submission_id, landing)

    def run_folder(self, contract: Contract, plan: Plan, name: str) -> Path:
        folder = submission_folder(plan, name)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "plan.json").write_text(render_plan(plan.document), encoding="utf-8")
        return folder

    def stop_at_random(self, child: subprocess.Popen, sig: signal.Signals, earliest: float, latest: float,
                       committed: Callable[[], bool] | None = None) -> bool:
        """Stop ``child`` with ``sig`` at a random moment, unless it ended first (then False); given a
        ``committed`` probe, half the time at the moment it first says yes instead (a random moment
        mostly falls before a job's commits: its JVM starts for longer than it commits). A child
        that a SIGTERM leaves running after 120 s is killed, as Airflow's supervisor kills a task
        that outlives its grace period."""
        if committed is not None and self.rng.random() < 0.5:
            with contextlib.suppress(TimeoutError):
                wait_until(lambda: committed() or child.poll() is not None, timeout=3 * latest, interval=0.05,
                           message="a commit of the stopped run")
            if child.poll() is not None:
                return False
            os.killpg(child.pid, sig)
        else:
            try:
                child.wait(timeout=self.rng.uniform(earliest, latest))
                return False
            except subprocess.TimeoutExpired:
                os.killpg(child.pid, sig)
        try:
            child.wait(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait(timeout=60)
        return True

    @staticmethod
    def commit_of(plan: Plan, submission_id: str, roles: tuple[str, ...] = ("target", "quarantine")) -> Callable[[], bool]:
        """A probe: does the Delta log of a table of ``roles`` (of the plan's ``tables``) hold a commit
        naming ``submission_id`` yet? (Its commit files are renamed into place whole; each is read once.)"""
        tables = plan.require_tables()
        located = {"target": tables.require_target, "quarantine": tables.require_quarantine,
                   "decisions": tables.require_decisions}
        logs = [Path(located[role]().location) / "_delta_log" for role in roles]
        read: dict[Path, bool] = {}

        def committed() -> bool:
            for log in logs:
                for commit in sorted(log.glob("*.json")) if log.is_dir() else ():
                    if commit not in read:
                        read[commit] = submission_id in commit.read_text(encoding="utf-8", errors="replace")
                    if read[commit]:
                        return True
            return False

        return committed

    def after_stop(self, batch: StoppedBatch, summary: dict | None, branch: str, result_path: Path,
                   runner: GateRunner | None = None) -> None:
        """Record the stopped run as the record task does (its verdict if the branch's step ended
        before the stop, else ``failed`` with what it committed); then each table holds the batch's
        share whole or not at all (a split is stopped between its two commits too), a ``failed``
        record says what the tables hold, and without a verdict there is no final decision. An
        operator's ``audit --repair`` (half the time) or the next run finishes it: exactly once."""
        contract, plan, submission_id = batch.contract, batch.plan, batch.submission_id
        if summary is None:
            results, states = {}, {"stage_validate": "failed"}
        elif result_path.exists():  # the step ended before the stop
            result = json.loads(result_path.read_text(encoding="utf-8"))
            results, states = {branch: result if branch == "split" else {branch: result}}, {branch: "success"}
        else:
            results, states = {}, {branch: "failed"}
        recorded = self.record(plan, {"submission_id": submission_id}, summary, results, states, runner)
        if self.workspace is not None and self.runs_going(plan, submission_id):
            self.disagree(f"{contract.name}: a run of {submission_id} goes on after its decision was written: "
                          f"{self.runs_going(plan, submission_id)}")
        if self.cluster is not None and self.drivers_running():
            self.disagree(f"{contract.name}: a driver of {submission_id} runs on after its decision was written: "
                          f"{self.drivers_running()}")
        if left := processes_working_in(submission_folder(plan, submission_id)):
            self.disagree(f"{contract.name}: processes of {submission_id}'s jobs live on after its decision was "
                          f"written: {left}")
        if recorded["outcome"] == "failed" and decisions.final_decision(plan, submission_id) is not None:
            self.disagree(f"{contract.name}: the run stopped before its verdict has a final decision")
        stopped_target, left_published = self.check_stopped_share(batch, recorded, branch if summary else "stage")
        if self.rng.random() < 0.5:
            code, out = self.cli("audit", self.file(contract), "--repair", "--settle", "0", "--json")
            if code != 0:
                self.disagree(f"{contract.name}: audit --repair after a stopped run exits {code}: {out[-300:]}")
        if contract.object is None and self.rng.random() < 0.25:  # a new contract version gates the stopped batch
            self.step_evolve(self.rng.choice(("optional_column", "wider_enum", "new_major")), contract)
        decision = self.gate(contract)
        target = self.target_of(contract)
        if decision is not None and decision.get("contract_version") != contract.version:
            target = stopped_target  # audit --repair decided it under the version it was stopped in
        self.expect(contract, decision, batch.rows, batch.invalid, batch.kind, target)
        # what the stopped run published stays in its target, whichever version gated the batch since
        if left_published:
            contract.target_ids.setdefault(stopped_target, set()).update(left_published)

    def check_stopped_share(self, batch: StoppedBatch, recorded: dict, branch: str) -> tuple[str, set[str]]:
        """The target holds all of the rows the branch publishes or none, the quarantine all of the
        rows it quarantines or none, and a ``failed`` record counts what they hold; (the target, the
        batch's ids it holds)."""
        contract, tables = batch.contract, batch.plan.require_tables()
        ids = {row["meter_id"] for row in batch.rows}
        if batch.kind == "good":
            publishable = ids
        else:
            publishable = ids - set(batch.invalid) if contract.policy == "split_rows" else set()
        target, quarantine = tables.require_target().location, tables.require_quarantine().location
        in_target = ids & set(column_of(target, "meter_id"))
        if in_target not in (set(), publishable):
            self.disagree(f"{contract.name}: the stopped run left {len(in_target)} of the {len(publishable)} rows it "
                          f"publishes of a {batch.kind} batch in the target")
        quarantined = column_of(quarantine, "_submission_id").count(batch.submission_id)
        if quarantined not in (0, len(batch.rows) - len(publishable)):
            self.disagree(f"{contract.name}: the stopped run left {quarantined} of the "
                          f"{len(batch.rows) - len(publishable)} rows it quarantines of a {batch.kind} batch in the "
                          "quarantine")
        if recorded["outcome"] != "failed":
            left = "verdict"
        else:
            left = {(False, False): "nothing committed", (True, False): "target", (False, True): "quarantine",
                    (True, True): "both"}[(bool(in_target), bool(quarantined))]
        self.stop_effects[(branch, left)] += 1
        if recorded["outcome"] == "failed" and (recorded.get("rows_published") or 0, recorded.get("rows_quarantined")
                                                or 0) != (len(in_target), quarantined):
            self.disagree(f"{contract.name}: the failed record of {batch.submission_id} says "
                          f"{recorded.get('rows_published')} published, {recorded.get('rows_quarantined')} "
                          f"quarantined; the tables hold {len(in_target)} and {quarantined}")
        return target, in_target

    def connect_url(self) -> str:
        """The walk's Spark Connect server, with its status API on: started when first needed."""
        if self.connect_server is None:
            ui_port = free_port()
            server = LocalConnectServer(self.root / "connect-server", cores=2, name="contract-gate-walk-connect", conf={
                "spark.sql.shuffle.partitions": "2", "spark.databricks.delta.snapshotPartitions": "2",
                "spark.ui.enabled": "true", "spark.ui.port": str(ui_port), "spark.port.maxRetries": "0"})
            self.connect_server = server.start()
            self.connect_ui = f"http://127.0.0.1:{ui_port}/api/v1"
        return self.connect_server.url

    def wait_for_no_job_of(self, submission_id: str, limit: float = 120.0) -> float:
        """Seconds until the server's own status shows no running job of ``submission_id`` (its
        queries' tag) and no running SQL execution at all (a Delta commit runs after the last job
        of its command; the server serves only the stopped run), polled from now, at most ``limit``."""
        started = monotonic()

        def status(path: str):
            with urllib.request.urlopen(f"{self.connect_ui}{path}", timeout=10) as response:
                return json.load(response)

        tag = f"contract-gate-{submission_id}"

        def nothing_running() -> bool:
            try:
                (app,) = status("/applications")
                running = [job for job in status(f"/applications/{app['id']}/jobs?status=running")
                           if any(t.endswith(tag) for t in job.get("jobTags", []))]
                running += [query for query in status(f"/applications/{app['id']}/sql?details=false&length=1000")
                            if query.get("status") == "RUNNING"]
            except OSError:  # a status API too busy to answer has not said so yet
                return False
            return not running

        with contextlib.suppress(TimeoutError):  # the caller judges the delay, however long
            wait_until(nothing_running, timeout=limit, interval=0.2, message="no job of the stopped run")
        return monotonic() - started

    def step_preview_object(self) -> None:
        """``preview --object`` of an object of the two-object contract, deployed and unchanged,
        decides as the gate did: exit 0."""
        stem, objects = PAIR
        contract = self.contracts[f"{stem}.{self.rng.choice(objects)}"]
        if not contract.target_ids:
            return
        code, out = self.cli("preview", self.file(contract), "--object", contract.object, "--last", "3", "--json")
        if code != 0:
            self.disagree(f"{contract.name}: preview --object of the deployed contract exits {code}: {out[-300:]}")

    def step_audit_repair(self) -> None:
        """``audit --repair`` of a contract file (the two-object one too): the log and the tables agree
        after every step, so it exits 0 and records nothing."""
        contract = self.rng.choice(list(self.contracts.values()))
        code, out = self.cli("audit", self.file(contract), "--repair", "--settle", "0", "--json")
        repaired = [r for o in json.loads(out)["objects"] for r in o["repaired"]] if code in (0, 1) else []
        if code != 0 or repaired:
            self.disagree(f"{contract.name}: audit --repair of an agreeing log exits {code}, repaired {repaired}: "
                          f"{out[-300:]}")

    def step_retention(self) -> None:
        """The retention DAG's job on a contract's object as if ``days`` had passed: its candidates
        frozen before then dropped and its quarantined rows deleted (``cleanup``, the ``cleanup``
        gate job's step), then the decision table's upkeep (compaction, log clean-up) and the
        pruning of the gate's work folders (``[contract_gate] work_dir_days``, 90 by default), and of
        the run folders stopped Databricks runs left in the emulated volume, as the retention task
        prunes them (:func:`~contract_gate.operators.retention.prune_run_folders`). Later
        steps meet what retention removed: a preview reads the target instead of the candidate, a
        stopped split is finished, a batch is gated again without its old work folder; ``check``
        still finds the log and the tables in agreement."""
        contract = self.rng.choice(list(self.contracts.values()))
        plan = self.plan(contract)
        days = self.rng.choice((0, 8, 100))
        now = datetime.now(timezone.utc) + timedelta(days=days)
        cleanup(self.spark, plan, now=now)
        decisions.upkeep_decisions(plan)
        runs = gate_folder(plan)
        before = sorted(p.name for p in runs.iterdir()) if runs.is_dir() else []
        remote = self.remote_run_folders(plan)
        removed = prune_run_folders(plan, self.databricks_runner() if self.workspace else self.local_runner, now)
        expired = days > (keep_days() or float("inf"))
        # no job of the walk outlives its step, and a successful Databricks run's folder is gone already
        expected = {"work_folders_removed": before if expired else [], "remote_folders_removed": remote if expired else []}
        if removed != expected:
            self.disagree(f"{contract.name}: retention {days} days removed {removed}, expected {expected}")
        candidates = Path(plan.candidate("x").location).parent
        left = sorted(p.name for p in candidates.glob(f"{plan.object}__*")) if candidates.is_dir() else []
        if days > 7 and left:
            self.disagree(f"{contract.name}: retention {days} days on left candidates {left[:3]}")
        quarantine = Path(plan.require_tables().require_quarantine().location)
        if days > 90 and column_of(str(quarantine), "_submission_id"):
            self.disagree(f"{contract.name}: retention {days} days on left quarantined rows")

    def cli(self, *args) -> tuple[int, str]:
        """A ``contract-gate`` command in-process (Spark commands use the walk's session)."""
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main([str(a) for a in args])
        return code, out.getvalue() + err.getvalue()

    # ---- the walk -------------------------------------------------------------------------
    def actions(self) -> dict[str, Callable[[], None]]:
        every: dict[str, Callable[[], None]] = {f"land_{kind}": (lambda k=kind: self.step_land_and_gate(k))
                                                 for kind in KINDS}
        every.update({
            "evolve_optional_column": lambda: self.step_evolve("optional_column"),
            "evolve_wider_enum": lambda: self.step_evolve("wider_enum"),
            "evolve_new_major": lambda: self.step_evolve("new_major"),
            "evolve_refused_breaking": lambda: self.step_evolve("refused_breaking"),
            "rerun": lambda: self.step_rerun(False),
            "correction": lambda: self.step_rerun(True),
            "rerun_from_file": lambda: self.step_rerun(False, from_file=True),
            "validate_target": self.step_validate_target,
            "preview": self.step_preview,
            "stop_sigterm": lambda: self.step_stop(signal.SIGTERM),
            "stop_sigkill": lambda: self.step_stop(signal.SIGKILL),
            "stop_publish_sigterm": lambda: self.step_stop_publish(signal.SIGTERM),
            "stop_publish_sigkill": lambda: self.step_stop_publish(signal.SIGKILL),
            "stop_connect_sigterm": lambda: self.step_stop_connect(signal.SIGTERM),
            "stop_connect_sigkill": lambda: self.step_stop_connect(signal.SIGKILL),
            "stop_databricks_sigterm": lambda: self.step_stop_databricks(signal.SIGTERM),
            "stop_databricks_sigkill": lambda: self.step_stop_databricks(signal.SIGKILL),
            "stop_standalone_sigterm": lambda: self.step_stop_standalone(signal.SIGTERM),
            "stop_standalone_sigkill": lambda: self.step_stop_standalone(signal.SIGKILL),
            "stop_submit_client_sigterm": lambda: self.step_stop_submit_client(signal.SIGTERM),
            "stop_submit_client_sigkill": lambda: self.step_stop_submit_client(signal.SIGKILL),
            "stop_record_sigkill": self.step_stop_record,
            "preview_object": self.step_preview_object,
            "audit_repair": self.step_audit_repair,
            "retention": self.step_retention,
        })
        return {name: action for name, action in every.items() if name not in self.skip}

    def walk(self, steps: int, weights: dict[str, float] | None = None,
             required: tuple[tuple[str, ...], ...] = ()) -> list[Disagreement]:
        """``steps`` steps drawn by ``weights`` (default 3 for a landing, 1 for the rest); of each group
        of step names in ``required``, one is taken, at a random place of the walk (so a short walk
        covers what it must, whatever step types are added later)."""
        actions = self.actions()
        names = sorted(actions)
        chosen_weights = [(weights or {}).get(name, 3.0 if name.startswith("land_") else 1.0) for name in names]
        places = self.rng.sample(range(steps), len(required))
        planned = {place: self.rng.choice(group) for place, group in zip(places, required)}
        for index in range(steps):
            name = planned.get(index) or self.rng.choices(names, chosen_weights)[0]
            self.steps.append(name)
            try:
                actions[name]()
            except Exception as exc:  # noqa: BLE001 - a crash of a step is a disagreement to report
                self.disagree(f"the step raised {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
            self.check()
        return self.disagreements

    def disagree(self, what: str) -> None:
        self.disagreements.append(Disagreement(len(self.steps), self.steps[-1] if self.steps else "-", what))

    # ---- the invariants -------------------------------------------------------------------
    def check(self) -> None:
        for contract in self.contracts.values():
            plan = self.plan(contract)
            result = audit(plan, decisions.store_for(plan), decisions.history_for(plan), settle=timedelta(0),
                           unfinished_after=timedelta(days=365))
            for finding in result.findings:
                self.disagree(f"audit {contract.name}: {finding.kind}: {finding.message}")
            records = decisions.store_for(plan).records(contract_id=plan.contract_id)
            for record in records:
                if record.final and record.rows_landed is not None and record.source == "gate" and \
                        record.rows_landed != (record.rows_published or 0) + (record.rows_quarantined or 0):
                    self.disagree(f"{contract.name}: {record.submission_id} landed {record.rows_landed} rows, "
                                  f"published {record.rows_published} + quarantined {record.rows_quarantined}")
                if record.final and (contract.name, record.submission_id) in self.stopped:
                    self.disagree(f"{contract.name}: stopped run {record.submission_id} has a final decision")
            self.check_alerts(contract, plan, records)
            for location, expected in contract.target_ids.items():
                ids = column_of(location, "meter_id")
                if len(ids) != len(set(ids)):
                    self.disagree(f"{contract.name}: {location} holds {len(ids) - len(set(ids))} row(s) twice")
                if set(ids) != expected:
                    self.disagree(f"{contract.name}: {location} holds {len(set(ids))} ids, the model "
                                  f"{len(expected)} (missing {sorted(expected - set(ids))[:3]}, "
                                  f"extra {sorted(set(ids) - expected)[:3]})")

    def check_alerts(self, contract: Contract, plan: Plan, records: list) -> None:
        """Each rejected decision a run of the walk recorded told the contract's notifier once (a run
        whose record task was killed: at least once, twice only if killed between telling it and
        writing that down); no alert names a published decision or one the log does not hold."""
        told = collections.Counter((line["submission_id"], line["run_id"], line["outcome"])
                                   for line in alert_lines(contract.file_stem or contract.name)
                                   if line.get("object") == plan.object)
        for record in records:
            if record.source != "gate" or not (record.run_id or "").startswith("walk-") or record.object != plan.object:
                continue  # another object's decision (a contract of two shares its id), or not a run of the walk's
            key = (record.submission_id, record.run_id, record.outcome)
            count = told.pop(key, 0)
            allowed = ((1, 2) if record.run_id in self.killed_record_runs else (1,)) if record.outcome in REJECTED \
                else (0,)
            if count not in allowed:
                self.disagree(f"{contract.name}: the {record.outcome} decision of {record.submission_id} by run "
                              f"{record.run_id} told its notifier {count} time(s)")
        if told:
            self.disagree(f"{contract.name}: alerts of decisions the log does not hold: {sorted(told)[:3]}")

    def reproduction(self) -> str:
        return f"seed {self.seed}, steps {' '.join(self.steps)}"
