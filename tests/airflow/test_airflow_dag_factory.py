"""One generated DAG per contract file, isolated from each other's errors, cheap to parse."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from _airflow_gate import BROKEN, CONTRACTS, DAGS, REPO

GATES = ["meter_readings", "orders", "regional_daily_cases"]
ALL_DAGS = sorted([*GATES, *(f"{g}__retention" for g in GATES),
                   "orders__freshness", "regional_daily_cases__freshness"])  # SLA contracts


def cron(timetable) -> str:
    """A DAG's cron expression: Airflow 3.2+ parses into SDK timetables (``expression``), 3.1 into
    the scheduler's (``summary``)."""
    return getattr(timetable, "expression", None) or timetable.summary


def test_one_dag_per_contract_file_with_the_contract_in_the_ui(gate):
    bag = gate.bag()
    assert bag.import_errors == {}
    assert sorted(bag.dags) == ALL_DAGS
    assert len({dag.fileloc for dag in bag.dags.values()}) == 3  # one file per contract
    dag = bag.dags["regional_daily_cases"]
    assert set(dag.tags) == {"contract-gate", "public_health", "v1.0.0"}
    assert set(dag.params) == {"submission_id", "landing", "landing_format", "rerun_of", "correction"}
    assert dag.max_active_runs == 1
    assert "Daily aggregates of reported cases" in dag.doc_md
    assert "| `case_count.minimum` | minimum | `case_count` | error |" in dag.doc_md
    assert cron(bag.dags["orders"].timetable) in ("@hourly", "0 * * * *")
    assert set(dag.task_ids) == {"submission", "stage_validate", "branch", "publish", "quarantine", "split",
                                 "record_decision"}
    assert dag.task_dict["record_decision"].trigger_rule == "all_done"
    retention = bag.dags["regional_daily_cases__retention"]
    assert retention.task_ids == ["apply_retention", "audit_decisions"] and retention.max_active_runs == 1
    assert cron(retention.timetable) in ("@daily", "0 0 * * *")


def test_a_malformed_contract_breaks_only_its_own_dag(tmp_path):
    from contract_gate.airflow_compat import dag_bag
    from contract_gate.dag_factory import sync_dag_files

    contracts, dags = tmp_path / "contracts", tmp_path / "dags"
    shutil.copytree(REPO / "contracts", contracts)
    (contracts / "broken.yaml").write_text(BROKEN)
    dags.mkdir()
    shutil.copy(REPO / "dags" / "contract_gates.py", dags / "contract_gates.py")
    sync_dag_files(dags / "contract_gates.py", contracts)
    bag = dag_bag(dags)
    assert sorted(bag.dags) == ALL_DAGS
    (broken_file, error), = bag.import_errors.items()
    assert broken_file.endswith("contract_gates_generated/broken.py")
    assert "broken.yaml:11" in error and "schema[0].properties[0].physicalType" in error
    # Airflow 3 marks every DAG of a file with an import error stale: none of them share that file.
    assert all(not dag.fileloc.endswith("broken.py") for dag in bag.dags.values())


def test_stub_files_follow_the_contracts_folder(tmp_path):
    from contract_gate.dag_factory import STUB_FOLDER, sync_dag_files

    contracts = tmp_path / "contracts"
    shutil.copytree(REPO / "contracts", contracts)
    dag_file = tmp_path / "dags" / "contract_gates.py"
    dag_file.parent.mkdir()
    stubs = sync_dag_files(dag_file, contracts)
    mtimes = [stub.stat().st_mtime_ns for stub in stubs]
    (tmp_path / "dags" / STUB_FOLDER / "mine.py").write_text("# a user's own file\n")
    (contracts / "orders.yaml").unlink()
    again = sync_dag_files(dag_file, contracts)
    assert [s.name for s in again] == ["meter_readings.py", "regional_daily_cases.py"]
    assert [s.stat().st_mtime_ns for s in again] == [mtimes[0], mtimes[2]]  # unchanged stubs not rewritten
    assert sorted(p.name for p in (tmp_path / "dags" / STUB_FOLDER).glob("*.py")) == [
        "meter_readings.py", "mine.py", "regional_daily_cases.py"]
    with pytest.raises(FileNotFoundError):  # a mistyped folder setting removes no DAG
        sync_dag_files(dag_file, tmp_path / "no-such-folder")
    assert len(list((tmp_path / "dags" / STUB_FOLDER).glob("*.py"))) == 3


@pytest.mark.parametrize("name", [
    "orders\nimport os; os.system('touch pwned')\n#.yaml",  # a line of code after the stub's comment line
    "{{ conn.aws_default.password }}.yaml",  # a secret rendered into the gate tasks' contract field
    'orders"""x.yaml', "orders%d.yaml", "orders\r.yaml"])
def test_a_contract_file_name_that_would_reach_code_or_jinja_is_refused_by_sync_and_parse(tmp_path, name, capsys):
    from contract_gate.cli.main import main
    from contract_gate.contract.errors import ContractError
    from contract_gate.dag_factory import STUB_FOLDER, contract_dag, sync_dag_files

    contracts = tmp_path / "contracts"
    contracts.mkdir()
    hostile = contracts / name
    hostile.write_text((REPO / "contracts" / "orders.yaml").read_text())
    dags = tmp_path / "dags"
    dags.mkdir()
    with pytest.raises(ContractError, match="letters, digits"):
        sync_dag_files(dags / "contract_gates.py", contracts)
    assert not (dags / STUB_FOLDER).exists()  # no stub written, none with the name in it
    assert main(["dags", "sync", "--dags", str(dags), "--contracts", str(contracts)]) == 2
    assert "rename the file" in capsys.readouterr().err
    with pytest.raises(ContractError):  # a DAG file of one's own that names it builds no gate
        contract_dag(hostile)
    assert not (tmp_path / "pwned").exists()


def test_parsing_the_dags_imports_no_pyspark(gate):
    script = (
        "import json, sys, time\n"
        "from contract_gate.airflow_compat import dag_bag\n"
        f"bag = dag_bag({str(DAGS)!r})\n"
        "print(json.dumps({'dags': sorted(bag.dags), 'errors': list(bag.import_errors),"
        " 'heavy': sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'delta', 'py4j'))}))\n"
    )
    env = {**os.environ, "CONTRACT_GATE_HOME": str(gate.home), "CONTRACT_GATE_CONTRACTS_DIR": str(CONTRACTS)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    parsed = json.loads(done.stdout.strip().splitlines()[-1])
    assert parsed == {"dags": ALL_DAGS, "errors": [], "heavy": []}


def test_contract_text_in_the_dag_doc_is_literal():
    """A producer's Markdown in the contract shows as written in the DAG's doc_md: no link, no
    image, no HTML, and every rules-table row keeps its five cells (rendered as Airflow's UI
    does: CommonMark with tables)."""
    from types import SimpleNamespace

    from markdown_it import MarkdownIt

    from contract_gate.contract.compiler import compile_plan
    from contract_gate.dags.dag_doc import render_doc

    contract = REPO / "tests/contracts_hostile/page_markdown_in_dag_doc.yaml"
    plan = compile_plan(contract)
    description = SimpleNamespace(purpose="Read ![x](https://evil.example/pixel.png) and <b>this</b> &lt;now&gt;")
    html = MarkdownIt("commonmark").enable("table").render(render_doc(plan, contract, description))

    assert "<a " not in html and "<img" not in html and "<b>" not in html
    assert "[Fix your batch here](https://evil.example/login)" in html  # shown, as text
    assert "&amp;lt;now&amp;gt;" in html  # an entity stays its characters
    rules = html.split("<h2>Rules</h2>")[1]
    rows = [row for row in rules.split("<tr>")[2:]]
    assert len(rows) == len(plan.rules)
    assert all(row.count("<td>") == 5 for row in rows)
    assert "ok` | x | [click](https://evil.example) | `" in rules.replace("&quot;", '"')
