"""Several objects in one contract: the ODCS standard's own full example runs as one DAG with one
gate per object, each object with its own batch, tables and decision (its ``tbl`` asks for more
than a million rows, so a generated batch is quarantined there while ``receivers`` publishes);
and two contracts whose ids
derive one DAG id are refused by lint and by the DAG factory, while a third still loads."""

from __future__ import annotations

import json
import shutil
import sys

import pytest
import yaml

from _airflow_gate import REPO


FULL_EXAMPLE = REPO / "tests" / "airflow" / "odcs_full_example.odcs.yaml"  # the published file, vendored
sys.path.insert(0, str(REPO / "tests" / "contracts_real"))
ROWS = {"tbl": 4, "receivers": 3}


def full_example_text() -> str:
    """The canonical example as published, on a local server and with contract-level gate settings
    (it has none): each object lands at ``landing/<object>``."""
    data = yaml.safe_load(FULL_EXAMPLE.read_text(encoding="utf-8"))
    assert [o["name"] for o in data["schema"]] == ["tbl", "receivers"]
    # Its SLAs name the table "tab1", which is no object of the example (its first object is "tbl",
    # physically "tbl_1"); lint refuses that element, so the copy names the object it means.
    for sla in data["slaProperties"]:
        if sla.get("element"):
            sla["element"] = sla["element"].replace("tab1.", "tbl.")
    # One property references "receiver_types", no object of the example: a foreign key that names
    # no gated object is a lint error, so the copy drops that one reference (the others stay rules).
    for obj in data["schema"]:
        for prop in obj["properties"]:
            kept = [r for r in prop.get("relationships", []) if not str(r.get("to", "")).startswith("receiver_types.")]
            if "relationships" in prop:
                prop["relationships"] = kept
    data["servers"] = [{"server": "local", "type": "local", "environment": "dev", "path": "lakehouse",
                        "format": "delta"}]
    data.setdefault("customProperties", []).append(
        {"property": "contractGate", "value": {"landing": {"path": "landing/{object}", "format": "json"}}})
    return yaml.safe_dump(data, sort_keys=False)


@pytest.mark.slow  # two gates' Spark jobs in one dag.test()
@pytest.mark.usefixtures("gates_over_connect")  # what the gate decides, not where Spark runs
def test_the_odcs_full_example_runs_as_one_dag_with_a_gate_per_object(gate):
    from generate import write_landing

    from contract_gate.contract.compiler import compile_plans
    from contract_gate.dag_factory import sync_dag_files

    contract = gate.contracts / "odcs_full_example.yaml"
    contract.write_text(full_example_text(), encoding="utf-8")
    try:
        sync_dag_files(gate.dags / "contract_gates.py", gate.contracts)
        gate.reset_bag()
        compiled = compile_plans(contract)
        plans = compiled.gated
        assert list(plans) == ["tbl", "receivers"] and compiled.not_gated == {}
        dag_id = plans["tbl"].names.dag_id
        assert {p.names.dag_id for p in plans.values()} == {dag_id}
        assert {p.names.gate for p in plans.values()} == {f"{dag_id}.tbl", f"{dag_id}.receivers"}
        country = {"tbl": {"rcvr_cntry_code": ["NL", "DE"]}, "receivers": {"country_code": ["NL", "BE", "FR"]}}
        for name, plan in plans.items():  # varchar(2) country codes: the generated values must fit
            write_landing(gate.landing(name), plan.document["columns"], count=ROWS[name], fmt="json", values=country[name])

        run = gate.run(dag_id)

        failed = {task: state for task, state in run.states.items() if state not in ("success", "skipped")}
        assert failed == {}
        decisions = {name: run.xcoms[f"{name}.record_decision"] for name in plans}
        outcomes = {"tbl": "quarantined", "receivers": "published"}
        for name, plan in plans.items():
            decision = decisions[name]
            assert (decision["contract_id"], decision["object"], decision["outcome"]) == (
                "53581432-6c55-4ba2-a65f-72344a91553a", name, outcomes[name])
            published = ROWS[name] if outcomes[name] == "published" else 0
            assert len(gate.rows(plan.document["tables"]["target"]["path"])) == published
            assert (decision["rows_published"], decision["rows_quarantined"]) == (published, ROWS[name] - published)
        # generated receiver keys are no published receiver's: the example's foreign keys fail too
        assert sorted(decisions["tbl"]["failed_rules"]) == [
            "dataset.rowCount", "rcvr_id.rcvr_cntry_code.references", "rcvr_id.references"]
        assert decisions["tbl"]["submission_id"] != decisions["receivers"]["submission_id"]
        stored = gate.rows(plans["tbl"].document["tables"]["decisions"]["path"])
        assert sorted((row["object"], row["outcome"]) for row in stored
                      if row["contract_id"] == "53581432-6c55-4ba2-a65f-72344a91553a") == [
            ("receivers", "published"), ("tbl", "quarantined")]
    finally:
        contract.unlink()
        sync_dag_files(gate.dags / "contract_gates.py", gate.contracts)
        gate.reset_bag()


SMALL = """\
apiVersion: v3.0.2
kind: DataContract
id: {id}
version: 1.0.0
status: active
servers:
  - server: local
    type: local
    path: lakehouse
    format: delta
schema:
  - name: {name}
    properties:
      - name: amount
        physicalType: bigint
        logicalType: integer
customProperties:
  - property: contractGate
    value:
      landing: {{path: landing/{name}, format: json}}
"""


def test_two_contracts_deriving_one_dag_id_are_refused_and_a_third_still_loads(tmp_path, capsys):
    from airflow.dag_processing.dagbag import DagBag

    from contract_gate.cli.main import main
    from contract_gate_plan.names import safe_name

    derived = safe_name("my payments")
    assert derived != "my payments"
    contracts, dags = tmp_path / "contracts", tmp_path / "dags"
    contracts.mkdir()
    (contracts / "spaced.yaml").write_text(SMALL.format(id='"my payments"', name="payments"), encoding="utf-8")
    (contracts / "derived.yaml").write_text(SMALL.format(id=derived, name="refunds"), encoding="utf-8")
    (contracts / "other.yaml").write_text(SMALL.format(id="other", name="other"), encoding="utf-8")

    assert main(["lint", str(contracts), "--json"]) == 1
    results = {r["file"].rsplit("/", 1)[1]: r for r in json.loads(capsys.readouterr().out)["contracts"]}
    assert results["other.yaml"]["ok"] is True
    for file, other in (("spaced.yaml", "derived.yaml"), ("derived.yaml", "spaced.yaml")):
        [issue] = results[file]["errors"]
        assert issue["path"] == "id" and str(contracts / other) in issue["message"] and derived in issue["message"]

    dags.mkdir()
    shutil.copy(REPO / "dags" / "contract_gates.py", dags / "contract_gates.py")
    from contract_gate.dag_factory import sync_dag_files

    sync_dag_files(dags / "contract_gates.py", contracts)
    bag = DagBag(str(dags))

    assert sorted(bag.dags) == ["other", "other__retention"]
    errors = {path.rsplit("/", 1)[1]: text for path, text in bag.import_errors.items()}
    assert sorted(errors) == ["derived.py", "spaced.py"]
    assert str(contracts / "derived.yaml") in errors["spaced.py"]
    assert str(contracts / "spaced.yaml") in errors["derived.py"]


TWO_OBJECTS = """\
apiVersion: v3.0.2
kind: DataContract
id: two_objects
version: 1.0.0
status: active
servers:
  - server: local
    type: local
    path: lakehouse
    format: delta
schema:
  - name: first
    properties: [{name: amount, logicalType: integer, physicalType: bigint}]
  - name: second
    properties: [{name: amount, logicalType: integer, physicalType: bigint}]
customProperties:
  - property: contractGate
    value:
      landing: {path: "landing/{object}", format: json}
"""
NOT_SUBMISSION = r".*\.(stage_validate|branch|publish|quarantine|split|record_decision)$"


@pytest.fixture
def two_objects(gate):
    from contract_gate.dag_factory import sync_dag_files

    contract = gate.contracts / "two_objects.yaml"
    contract.write_text(TWO_OBJECTS, encoding="utf-8")
    for name in ("first", "second"):
        gate.land(name, [{"amount": 1}], "json")
    try:
        sync_dag_files(gate.dags / "contract_gates.py", gate.contracts)
        gate.reset_bag()
        yield gate
    finally:
        contract.unlink()
        sync_dag_files(gate.dags / "contract_gates.py", gate.contracts)
        gate.reset_bag()


def test_a_run_override_on_a_contract_of_several_objects_must_name_its_object(two_objects):
    """A run's override (``submission_id``, ``rerun_of``...) names one object's batch: without the
    ``object`` param no group takes it; with it, only that object's group does, the other gates
    its landing as usual."""
    dag = two_objects.bag().dags["two_objects"]
    assert dag.params.get_param("object").schema["enum"] == [None, "first", "second"]

    unnamed = two_objects.run("two_objects", mark_success=NOT_SUBMISSION, submission_id="sub-1")
    assert unnamed.states["first.submission"] == unnamed.states["second.submission"] == "failed"
    assert "first.submission" not in unnamed.xcoms and "second.submission" not in unnamed.xcoms

    named = two_objects.run("two_objects", mark_success=NOT_SUBMISSION, rerun_of="sub-1", object="first")
    # the named object takes the override (and refuses it: sub-1 has no decision); the other ignores it
    assert named.states["first.submission"] == "failed" and "first.submission" not in named.xcoms
    assert named.states["second.submission"] == "success"
    assert named.xcoms["second.submission"]["rerun_of"] is None
    assert named.xcoms["second.submission"]["landing"]["path"].endswith("landing/second")


@pytest.mark.slow  # one gate's Spark jobs
@pytest.mark.usefixtures("gates_over_connect")  # what the gate decides, not where Spark runs
def test_the_cli_gates_one_named_object_with_its_overrides(two_objects, cli_env, capsys):
    from contract_gate.cli.main import main

    contract = str(two_objects.contracts / "two_objects.yaml")
    assert main(["run", contract, "--submission-id", "s-2", "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["error"].endswith("the contract gates 'first', 'second': give --object")

    assert main(["run", contract, "--object", "second", "--submission-id", "s-2", "--json"]) == 0
    [decision] = json.loads(capsys.readouterr().out)["decisions"]
    assert (decision["object"], decision["submission_id"], decision["outcome"]) == ("second", "s-2", "published")
    assert two_objects.version("lakehouse/second") is not None
    assert two_objects.version("lakehouse/first") is None  # the other object was not gated
