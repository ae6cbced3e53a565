"""The event-driven gate's watcher in a real ``airflow triggerer`` process: a landed batch becomes
one Asset event, and a restarted triggerer does not fire that batch again (the watcher keeps
the fired submission in the Asset's state store). No gate runs here: what a run does with the
event is shown in ``test_event_driven_gate.py``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from _airflow_gate import AIRFLOW_ENV, HOME, ROOT, gate_home
from _asset_watch import asset_events, asset_state, sync_dag_folder, unpause
from _landing_contracts import LAKEHOUSE, case_rows, land_csv, write_contract
from waiting import wait_until

pytestmark = pytest.mark.slow  # an Airflow triggerer process, started twice

CONTRACT = "cases_watched"
ASSET = f"contract_gate.{CONTRACT}@local.landing"  # per object and environment
CONTRACTS = HOME / "triggerer_contracts"
DAG_FILE = "triggerer_watch_dags.py"
DAGS = f'''"""The gate DAG of tests/airflow/test_triggerer_watch.py (written by the test, removed after it)."""
from contract_gate.dag_factory import contract_dag

gate = contract_dag({str(CONTRACTS / f"{CONTRACT}.yaml")!r})
'''
AIRFLOW = Path(sys.executable).parent / "airflow"


class Triggerer:
    """``airflow triggerer`` on the session's database (its own process group), its output in a file."""

    def __init__(self, name: str) -> None:
        self.output = ROOT / f"{name}.log"
        env = {**os.environ, **AIRFLOW_ENV, "CONTRACT_GATE_HOME": str(HOME)}
        with self.output.open("w") as output:
            # --skip-serve-logs: no log server, so nothing listens on a port
            self.process = subprocess.Popen([str(AIRFLOW), "triggerer", "--skip-serve-logs"], stdout=output, stderr=subprocess.STDOUT,
                                            env=env, start_new_session=True)

    def says(self, text: str) -> bool:
        if self.process.poll() is not None:
            raise RuntimeError(f"the triggerer exited ({self.process.returncode}): {self.output.read_text()[-3000:]}")
        return text in self.output.read_text()

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


@pytest.fixture(scope="module")
def watched(gate):
    # the shortest poll a contract may set: each wait below is for the watcher's next look
    write_contract(CONTRACTS, CONTRACT, schedule={"onLanding": {"marker": "_SUCCESS", "pollSeconds": 2}})
    (gate.dags / DAG_FILE).write_text(DAGS)
    gate.reset_bag()
    try:
        with gate_home():
            sync_dag_folder()
            unpause(CONTRACT)  # Airflow watches the Assets of active DAGs only
            sync_dag_folder()
        yield gate
    finally:
        (gate.dags / DAG_FILE).unlink()
        gate.reset_bag()


def submission_now() -> str:
    from contract_gate.submission import derive_submission_id

    return derive_submission_id(CONTRACT, {"kind": "path", "path": str(LAKEHOUSE / "landing" / CONTRACT),
                                           "format": "csv"})


def test_a_real_triggerer_fires_a_landed_batch_once_and_a_restarted_one_does_not_fire_it_again(watched):
    from contract_gate.triggers.landing import FIRED_KEY

    land_csv(CONTRACT, case_rows("2025-05-01", region="W"), marker="_SUCCESS")
    first = submission_now()
    triggerer = Triggerer("triggerer-1")
    try:
        events = wait_until(lambda: asset_events(ASSET), timeout=300, interval=0.5,
                            message="an Asset event from the triggerer")
        assert [event["submission_id"] for event in events] == [first]
        assert wait_until(lambda: asset_state(ASSET, FIRED_KEY), timeout=60, interval=0.5,
                          message="the fired submission in the Asset's state store") == first
    finally:
        triggerer.stop()

    triggerer = Triggerer("triggerer-2")  # the batch has no decision yet: only the state store knows it fired
    try:
        wait_until(lambda: triggerer.says(f"submission {first} was fired before this trigger started"),
                   timeout=300, interval=0.5, message="the restarted watcher's first look at the landing")
        assert [event["submission_id"] for event in asset_events(ASSET)] == [first]

        land_csv(CONTRACT, case_rows("2025-05-02", region="W"), marker="_SUCCESS")
        second = submission_now()
        events = wait_until(lambda: asset_events(ASSET)[1:], timeout=120, interval=0.5,
                            message="the next batch's Asset event")
        assert [event["submission_id"] for event in asset_events(ASSET)] == [first, second]
        assert events == [asset_events(ASSET)[1]]
    finally:
        triggerer.stop()
