"""A deployment made by ``contract-gate airflow up`` in a folder of its own, for the tests (and the
benchmark) that run gates through the real processes: contracts written from the example
``regional_daily_cases`` under other ids, batches landed as CSV, decisions read from the decision
log with delta-rs (no Spark), and the command run as a user runs it."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
CLI = str(Path(sys.executable).parent / "contract-gate")


class Deployed:
    """The deployment in ``home`` (its Airflow home and gate home; contracts, DAGs and the
    contracts' ``lakehouse`` server root inside it)."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.contracts = home / "contracts"
        self.lakehouse = home / "lakehouse"

    def command(self, action: str, *options: str, timeout: float = 900) -> subprocess.CompletedProcess:
        done = subprocess.run([CLI, "airflow", action, "--airflow-home", str(self.home), *options],
                              capture_output=True, text=True, timeout=timeout, env=_without_gate_settings())
        return done

    def up(self, *options: str) -> None:
        done = self.command("up", *options)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]

    def down(self) -> None:
        self.command("down", timeout=300)

    def pid(self, component: str) -> int | None:
        from contract_gate.cli.deployment import Deployment

        return Deployment(self.home).pid(component)

    def write_contract(self, contract_id: str, schedule) -> Path:
        document = yaml.safe_load((REPO / "contracts" / "regional_daily_cases.yaml").read_text())
        document["id"] = contract_id
        document["schema"][0]["name"] = contract_id  # its candidates' names: two contracts may not share them
        document.pop("slaProperties", None)  # no freshness DAG: these deployments gate, nothing else
        gate = next(p for p in document["customProperties"] if p["property"] == "contractGate")["value"]
        gate["landing"] = {"path": f"landing/{contract_id}", "format": "csv", "options": {"header": "true"}}
        gate["target"] = {"path": contract_id}
        gate["quarantine"] = {"path": f"{contract_id}_quarantine"}
        gate["schedule"] = schedule
        self.contracts.mkdir(parents=True, exist_ok=True)
        path = self.contracts / f"{contract_id}.yaml"
        path.write_text(yaml.safe_dump(document, sort_keys=False))
        return path

    def land(self, contract_id: str, day: str, *, region: str = "D", marker: str | None = "_SUCCESS") -> Path:
        """One CSV batch of three valid rows, replacing the landing's content; the marker written last."""
        folder = self.lakehouse / "landing" / contract_id
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.iterdir():
            old.unlink()
        rows = [{"region_code": f"{region}{i}", "report_date": day, "reporting_org": "Org-A", "case_count": 10 + i,
                 "status": "final"} for i in range(3)]
        with (folder / "part-0.csv").open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        if marker:
            (folder / marker).write_text("")
        return folder

    def plan(self, contract_id: str):
        from contract_gate.operators.base import compile_gate_plan

        with self.gate_home():
            return compile_gate_plan(str(self.contracts / f"{contract_id}.yaml"), None, None)

    def submission_now(self, contract_id: str) -> str:
        from contract_gate.submission import derive_submission_id

        plan = self.plan(contract_id)
        with self.gate_home():
            return derive_submission_id(contract_id, plan.document["tables"]["landing"])

    def decisions(self, contract_id: str, submission_id: str | None = None) -> list:
        """The contract's decision records (of one submission), newest first."""
        from contract_gate.decisions import store_for

        plan = self.plan(contract_id)
        with self.gate_home():
            return store_for(plan).records(submission_id=submission_id, contract_id=contract_id)

    def final(self, contract_id: str, submission_id: str):
        return next((d for d in self.decisions(contract_id, submission_id) if d.final), None)

    def tagged_commits(self, contract_id: str, submission_id: str) -> int:
        """Commits of the contract's target tagged with ``submission_id`` (the publish step's tag)."""
        from deltalake import DeltaTable

        target = self.lakehouse / contract_id
        if not (target / "_delta_log").is_dir():
            return 0
        return sum(1 for entry in DeltaTable(str(target)).history() if entry.get("userMetadata") == submission_id)

    def gate_home(self):
        return _GateHome(self.home)


class _GateHome:
    """``CONTRACT_GATE_HOME`` = the deployment's gate home (its Airflow home) while the test reads its tables."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.saved: str | None = None

    def __enter__(self) -> None:
        self.saved = os.environ.get("CONTRACT_GATE_HOME")
        os.environ["CONTRACT_GATE_HOME"] = str(self.home)

    def __exit__(self, *exc) -> None:
        if self.saved is None:
            os.environ.pop("CONTRACT_GATE_HOME", None)
        else:
            os.environ["CONTRACT_GATE_HOME"] = self.saved


def _without_gate_settings() -> dict[str, str]:
    """The command's environment without this test process's Airflow and gate settings: the
    deployment's own settings file is what its components read."""
    return {name: value for name, value in os.environ.items()
            if not name.startswith(("AIRFLOW", "CONTRACT_GATE"))}
