"""The DAG folder as a fresh deployment sees it: every gate, retention and freshness DAG on the
first parse, nothing written into the folder, a read-only folder works, and a malformed or
unsynced contract is one import error naming its file while every other gate loads.

Each parse runs in a process of its own, as Airflow's DAG processor does, on a copy of the
repository's committed DAG folder and contracts (tracked and not-ignored files: what a clone has).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from _airflow_gate import BROKEN, REPO

from contract_gate.cli.main import main as contract_gate_cli
from contract_gate.dag_factory import STUB_FOLDER, unsynced_dag_files

EXPECTED = ["meter_readings", "meter_readings__retention", "orders", "orders__freshness", "orders__retention",
            "regional_daily_cases", "regional_daily_cases__freshness", "regional_daily_cases__retention"]
PARSE = (
    "import json, sys\n"
    "from contract_gate.airflow_compat import dag_bag\n"
    "bag = dag_bag(sys.argv[1])\n"
    "print(json.dumps({'dags': sorted(bag.dags), 'errors': bag.import_errors}))\n"
)
# What the DAG processor does with a parse (one bundle, the DAG folder): the import errors the UI
# lists are its ParseImportError rows. Prints them and the DAG ids.
PARSE_TO_DB = (
    "import json, sys\n"
    "from pathlib import Path\n"
    "from airflow.dag_processing.bundles.manager import DagBundlesManager\n"
    "from airflow.dag_processing.dagbag import BundleDagBag, sync_bag_to_db\n"
    "from airflow.models.dag import DagModel\n"
    "from airflow.models.errors import ParseImportError\n"
    "from airflow.utils import db\n"
    "from airflow.utils.session import create_session\n"
    "if sys.argv[2] == 'migrate':\n"
    "    db.upgradedb()\n"
    "    DagBundlesManager().sync_bundles_to_db()\n"
    "bag = BundleDagBag(dag_folder=sys.argv[1], bundle_path=Path(sys.argv[1]), bundle_name='dags-folder')\n"
    "sync_bag_to_db(bag, 'dags-folder', None)\n"
    "with create_session() as session:\n"
    "    errors = {e.filename: e.stacktrace for e in session.query(ParseImportError)}\n"
    "    dags = sorted(d.dag_id for d in session.query(DagModel) if not d.is_stale)\n"
    "print(json.dumps({'dags': dags, 'errors': errors}))\n"
)
# Root writes through any permission bits; without these capabilities chmod a-w binds it too.
DROP_WRITE_OVERRIDE = ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner",
                       "--inh-caps=-dac_override,-dac_read_search,-fowner"]


def fresh_copy(tmp_path: Path) -> Path:
    """The repository's DAG folder, contracts and .gitignore as a new git checkout."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--",
                             "dags", "contracts", ".gitignore"], cwd=REPO, capture_output=True, check=True)
    root = tmp_path / "checkout"
    for name in filter(None, listed.stdout.decode().split("\0")):
        if (REPO / name).is_file():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, root / name)
    git = ["git", "-c", "user.name=test", "-c", "user.email=test@example.invalid"]
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "fresh"], cwd=root, check=True)
    return root


def wrapper(read_only: bool) -> list[str]:
    return DROP_WRITE_OVERRIDE if read_only and os.geteuid() == 0 else []


def parse(root: Path, tmp_path: Path, read_only: bool = False, script: str = PARSE, *args: str) -> dict:
    """A DagBag over ``root/dags`` in a new process, with the default settings of a deployment."""
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("CONTRACT_GATE_", "AIRFLOW"))}
    env.update(AIRFLOW_HOME=str(tmp_path / "airflow"), AIRFLOW__CORE__LOAD_EXAMPLES="False",
               AIRFLOW__CORE__DAGS_FOLDER=str(root / "dags"), CONTRACT_GATE_HOME=str(tmp_path / "home"),
               AIRFLOW__LOGGING__LOGGING_LEVEL="WARNING")
    done = subprocess.run([*wrapper(read_only), sys.executable, "-c", script, str(root / "dags"), *args],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def files_of(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and ".git" not in p.relative_to(root).parts}


def git_status(root: Path) -> str:
    return subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True,
                          check=True).stdout


def test_the_committed_dag_files_match_the_contracts():
    # what CI's `contract-gate dags sync --check` guards: no contract without its committed DAG file
    assert unsynced_dag_files(REPO / "dags" / "contract_gates.py", REPO / "contracts") == []


def test_every_gate_appears_on_the_first_parse_and_nothing_is_written(tmp_path):
    root = fresh_copy(tmp_path)
    before = files_of(root)

    parsed = parse(root, tmp_path)

    assert parsed == {"dags": EXPECTED, "errors": {}}
    after = files_of(root)
    # Python may cache bytecode of the DAG files it imports; nothing else appears or changes
    assert {name: data for name, data in after.items() if "__pycache__" not in name} == before
    assert git_status(root) == ""


def test_a_read_only_dag_folder_parses_the_same(tmp_path):
    root = fresh_copy(tmp_path)
    subprocess.run(["chmod", "-R", "a-w", str(root)], check=True)
    try:
        probe = subprocess.run([*wrapper(True), "touch", str(root / "dags" / STUB_FOLDER / "probe.py")],
                               capture_output=True, text=True)
        assert probe.returncode != 0 and "Permission denied" in probe.stderr  # the folder is truly read-only

        assert parse(root, tmp_path, True) == {"dags": EXPECTED, "errors": {}}
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(root)], check=True)
    assert git_status(root) == ""


@pytest.mark.slow  # 8 s or more
def test_a_malformed_or_unsynced_contract_is_one_import_error_naming_its_file(tmp_path, capsys):
    root = fresh_copy(tmp_path)
    dags, contracts = root / "dags", root / "contracts"
    (contracts / "broken.yaml").write_text(BROKEN)

    # dropped in without the deploy step: an import error of contract_gates.py naming the contract
    assert contract_gate_cli(["dags", "sync", "--check", "--dags", str(dags), "--contracts", str(contracts)]) == 1
    assert f"{STUB_FOLDER}/broken.py: missing" in capsys.readouterr().out
    parsed = parse(root, tmp_path)
    assert parsed["dags"] == EXPECTED
    (unsynced, message), = parsed["errors"].items()
    assert unsynced == str(dags / "contract_gates.py")
    assert str(contracts / "broken.yaml") in message and "contract-gate dags sync" in message

    # after the deploy step: an import error of the contract's own DAG file, naming file, line, YAML path
    assert contract_gate_cli(["dags", "sync", "--dags", str(dags), "--contracts", str(contracts)]) == 0
    assert contract_gate_cli(["dags", "sync", "--check", "--dags", str(dags), "--contracts", str(contracts)]) == 0
    parsed = parse(root, tmp_path)
    assert parsed["dags"] == EXPECTED
    (broken, message), = parsed["errors"].items()
    assert broken == str(dags / STUB_FOLDER / "broken.py")
    assert "broken.yaml:11" in message and "schema[0].properties[0].physicalType" in message

    # the contract removed: check names the orphaned DAG file, sync removes it, all clean again
    (contracts / "broken.yaml").unlink()
    assert contract_gate_cli(["dags", "sync", "--check", "--dags", str(dags), "--contracts", str(contracts)]) == 1
    assert f"{STUB_FOLDER}/broken.py: its contract is gone" in capsys.readouterr().out
    assert contract_gate_cli(["dags", "sync", "--dags", str(dags), "--contracts", str(contracts)]) == 0
    assert git_status(root) == ""


def test_a_stub_reads_its_contract_from_the_configured_folder(tmp_path, monkeypatch):
    """Deployments that mount contracts elsewhere (the compose stack) set CONTRACT_GATE_CONTRACTS_DIR."""
    from contract_gate.dags.stub_files import stub_contract

    stub = REPO / "dags" / STUB_FOLDER / "orders.py"
    assert stub_contract(stub, "../../contracts/orders.yaml") == REPO / "contracts" / "orders.yaml"
    monkeypatch.setenv("CONTRACT_GATE_CONTRACTS_DIR", str(tmp_path))
    assert stub_contract(stub, "../../contracts/orders.yaml") == tmp_path.resolve() / "orders.yaml"


@pytest.mark.slow  # migrates an Airflow database of its own
def test_the_ui_lists_one_import_error_for_a_malformed_contract_until_it_is_fixed(tmp_path):
    root = fresh_copy(tmp_path)
    dags, contracts = root / "dags", root / "contracts"
    (contracts / "broken.yaml").write_text(BROKEN)
    assert contract_gate_cli(["dags", "sync", "--dags", str(dags), "--contracts", str(contracts)]) == 0

    stored = parse(root, tmp_path, False, PARSE_TO_DB, "migrate")

    assert stored["dags"] == EXPECTED
    (broken, message), = stored["errors"].items()
    assert broken == f"{STUB_FOLDER}/broken.py"  # the row the UI shows, relative to the DAG bundle
    assert "broken.yaml:11" in message and "schema[0].properties[0].physicalType" in message

    # the producer fixes the contract: its own file parses again, its error row goes, its gate appears
    (contracts / "broken.yaml").write_text(BROKEN.replace("decimal(50,2)", "double"))
    assert parse(root, tmp_path, False, PARSE_TO_DB, "again") == {
        "dags": sorted([*EXPECTED, "broken", "broken__retention"]), "errors": {}}
