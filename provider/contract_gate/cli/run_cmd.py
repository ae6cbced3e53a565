"""``contract-gate run <contract>``: gate one batch through the contract's generated DAG.

The DAG is the one the DAG factory generates for the contract, run with ``dag.test()`` on a
local Airflow (SQLite, migrated on first use) and the local Spark default, so the CLI
exercises exactly what a scheduler would run. Tables land under ``lakehouse/`` in the gate's
home (``CONTRACT_GATE_HOME``, else ``[contract_gate] home``, else the working directory). A
contract of several gated objects gates each of them (one decision each), or only ``--object``:
the other objects' tasks are marked done without running.

Exit codes: 0 published (fully or split), 1 rejected (quarantined), 2 error; with several
objects, the worst of their decisions. ``--json`` prints ``{"decisions": [...]}``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

from contract_gate.cli.options import add_input_format, add_json, add_verbose, print_json, report_error
from contract_gate.cli.errors import one_line
from contract_gate.cli.progress import progress
from contract_gate.cli.quiet import log_path, logged
from contract_gate.contract.errors import ContractError

from contract_gate import config
from contract_gate.contract_folder import compiled
from contract_gate_plan.addresses import HOME_ENV
from contract_gate_plan.model import Plan
from contract_gate.dags.stub_files import STUB_FOLDER, stub_name, sync_dag_files

PUBLISHED = ("published", "split")
REJECTED = ("quarantined",)
RUN_DAGS = "contract_gate_cli_dags"


def register(subparsers) -> None:
    parser = subparsers.add_parser("run", help="gate one batch through the contract's DAG (local Airflow + Spark)")
    add_common_arguments(parser)
    parser.add_argument("--submission-id", help="default: derived from the landed batch's content")
    parser.set_defaults(func=run)


def add_common_arguments(parser) -> None:
    parser.add_argument("contract", type=Path)
    parser.add_argument("--landing", help="read the batch from this path instead of the contract's landing")
    add_input_format(parser, ("csv", "json", "parquet", "delta"), None, "format of --landing")
    parser.add_argument("--env", help="the contract server/environment (default: [contract_gate] env, else the first)")
    parser.add_argument("--object", dest="object_name", metavar="NAME",
                        help="the schema object to gate (default: every gated object of the contract)")
    add_json(parser)
    add_verbose(parser)


def run(args) -> int:
    conf = {"submission_id": args.submission_id}
    return gate(args, conf)


def gate(args, conf: dict, check=None) -> int:
    """Run the contract's DAG once with ``conf``; print the decision; return the exit code.

    ``check(args)`` may return a reason to refuse before anything runs (exit 2)."""
    contract = args.contract.resolve()
    if not contract.is_file():
        report_error(args, f"contract-gate: no such contract file: {args.contract}")
        return 2
    try:  # a broken contract is named here, in one line, not in the DAG processor's import error
        gated = compiled(contract, args.env or config.get("env")).gated
    except ContractError as exc:
        report_error(args, f"contract-gate {args.command}: {one_line(exc)}")
        return 2
    if args.landing:
        conf["landing"] = str(Path(args.landing).resolve())
        conf["landing_format"] = args.input_format
    unclear = unnamed_object(gated, args.object_name, {k for k, v in conf.items() if v not in (None, "")})
    missing = unclear or missing_landing(args.landing, [plan for name, plan in gated.items()
                                                         if args.object_name in (None, name)])
    if missing:
        report_error(args, f"contract-gate {args.command}: {missing}")
        return 2
    prepare_environment(contract, args.env)
    log = log_path(args.command)
    try:
        # Airflow logs the DAG run on stdout, which carries only the command's result; the check
        # imports Airflow, whose first import writes too
        with progress("running the gate DAG", args.verbose, log=log), contextlib.redirect_stdout(sys.stderr):
            refused = check(args) if check else None
            with landing_root_of_this_run(args.landing):
                decisions = [] if refused else run_dag(contract, {k: v for k, v in conf.items() if v not in (None, "")},
                                                       args.object_name)
        if refused:
            report_error(args, f"contract-gate: refused: {refused}")
            return 2
    except Exception as exc:  # noqa: BLE001 - the CLI's job is to turn any failure into exit 2
        if args.verbose:
            raise
        report_error(args, f"contract-gate {args.command}: {one_line(exc)}{logged(log)}")
        return 2
    if args.json:
        print_json({"decisions": decisions})
    else:
        print("\n".join(format_decision(decision) for decision in decisions))
    outcomes = [decision.get("outcome") for decision in decisions]
    if all(outcome in PUBLISHED for outcome in outcomes):
        return 0
    return 1 if all(outcome in PUBLISHED + REJECTED for outcome in outcomes) else 2


def unnamed_object(gated: dict[str, Plan], object_name: str | None, given: set[str]) -> str | None:
    """Why the run cannot tell which object to gate: ``--object`` names none of the contract's, or
    one object's batch (``given``: the run's landing, submission id...) is given for several."""
    names = ", ".join(map(repr, gated))
    if object_name is not None and object_name not in gated:
        return f"the contract gates no object {object_name!r}; it gates {names}: give one of them to --object"
    if len(gated) > 1 and object_name is None and given:
        return f"the run's {', '.join(sorted(given))} are for one object's batch, and the contract gates {names}: give --object"
    return None


def missing_landing(landing: str | None, plans: list[Plan]) -> str | None:
    """Why there is no batch to gate, when a local landing path does not exist (an object-store
    or catalog landing is the gate's to read)."""
    if landing is not None:
        if "://" not in landing and not Path(landing).exists():  # gate() reads --landing as a path
            return f"no batch at {landing}: give --landing the path of a landed file or folder"
        return None
    for plan in plans:
        address = plan.tables.landing if plan.tables else None
        if address and address.is_path and "://" not in address.location and not Path(address.location).exists():
            return (f"nothing has landed at {address.location} (the landing of {plan.object}): land a batch there, "
                    "or give --landing PATH")
    return None


@contextlib.contextmanager
def landing_root_of_this_run(landing: str | None) -> Iterator[None]:
    """The gate reads a run's landing override only under a landing root
    (``contract_gate.contract.landing_override``): whoever runs the CLI names a file they may read
    themselves, so its folder is a landing root of this run, and of no other."""
    if landing is None or "://" in landing:
        yield
        return
    name = config.environment_variable("landing_roots")
    before = os.environ.get(name)
    os.environ[name] = ",".join([*config.get_list("landing_roots"), str(Path(landing).resolve().parent)])
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before


def prepare_environment(contract: Path, env: str | None) -> Path:
    """Point Airflow at a private DAG folder holding only this contract's DAG (set before
    Airflow is imported: it reads its configuration once)."""
    home = config.gate_home()
    os.environ.setdefault(HOME_ENV, str(home))  # the run's Spark drivers resolve against it too
    airflow_home = Path(os.environ.setdefault("AIRFLOW_HOME", str(home / ".airflow")))
    dags = airflow_home / RUN_DAGS
    dags.mkdir(parents=True, exist_ok=True)
    os.environ["AIRFLOW__CORE__DAGS_FOLDER"] = str(dags)
    os.environ.setdefault("AIRFLOW__CORE__LOAD_EXAMPLES", "False")
    if env:
        os.environ[config.environment_variable("env")] = env
    os.environ[config.environment_variable("contracts_dir")] = str(contract.parent)
    return dags


def run_dag(contract: Path, conf: dict, object_name: str | None = None) -> list[dict]:
    """Build the contract's DAG from its generated stub, ``dag.test()`` it (only ``object_name``'s
    gate, when given), return the decision of each gated object it ran."""
    # Airflow only after prepare_environment() has pointed it at this run's DAG folder: it reads
    # its configuration once, when it is first imported
    from airflow.utils import db
    from contract_gate.airflow_compat import dag_bag

    try:
        db.check_migrations(timeout=1)
    except TimeoutError:
        db.upgradedb()
    dags = Path(os.environ["AIRFLOW__CORE__DAGS_FOLDER"])
    sync_dag_files(dags / "contract_gates.py", contract.parent)
    for other in (dags / STUB_FOLDER).glob("*.py"):
        if other.name != stub_name(contract):
            other.unlink()  # only this contract's DAG is parsed and synced by dag.test()
    bag = dag_bag(dags / STUB_FOLDER)
    if bag.import_errors:
        raise RuntimeError("\n".join(bag.import_errors.values()))
    gated = compiled(contract, config.get("env")).gated
    unclear = unnamed_object(gated, object_name, set(conf))
    if unclear:
        raise LookupError(unclear)
    plans = [plan for name, plan in gated.items() if object_name in (None, name)]
    dag = bag.dags[plans[0].names.dag_id]
    several = len(gated) > 1  # then each object's tasks are in its task group
    others = f"(?!{re.escape(plans[0].names.group)}\\.).*" if several and object_name else None
    if several and object_name:
        conf = {**conf, "object": object_name}  # the DAG's overrides are for this object
    run = dag.test(run_conf=conf, mark_success_pattern=others)
    return [decision_of(run, f"{plan.names.group}.record_decision" if several else "record_decision")
            for plan in plans]


def decision_of(run, record_task: str = "record_decision") -> dict:
    """The record task's XCom (the decision) of a finished DAG run; a failure summary without one."""
    # Airflow, as in run_dag(): never imported before prepare_environment() has configured it
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session

    with create_session() as session:
        found = session.scalars(XComModel.get_many(run_id=run.run_id, dag_ids=run.dag_id, key="return_value",
                                                   task_ids=record_task)).first()
        value = XComModel.deserialize_value(found) if found is not None else None
        states = {ti.task_id: str(ti.state) for ti in run.get_task_instances(session=session)}
    if value:
        return value
    return {"outcome": "error", "reason": f"no decision recorded; task states: {json.dumps(states, sort_keys=True)}"}


def format_decision(decision: dict) -> str:
    """A short, value-free summary for the terminal."""
    lines = [f"decision: {decision.get('outcome')}"]
    for key in ("contract_id", "object", "submission_id", "rerun_of", "rows_landed", "rows_published", "rows_quarantined",
                "target_version_before", "target_version_after", "reason", "report_path"):
        if decision.get(key) not in (None, ""):
            lines.append(f"  {key}: {decision[key]}")
    rules = _report_rules(decision.get("report_path"))
    if rules is None:  # no report to read (a remote work dir): the decision's ids and counts
        counts = decision.get("rule_failures") or {}
        lines += [f"  did not pass {rule}" + (f": {counts[rule]} rows" if rule in counts else "")
                  for rule in decision.get("failed_rules") or []]
    else:
        lines += [line for rule in rules if (line := rule_line(rule))]
    return "\n".join(lines)


def rule_line(rule: dict) -> str | None:
    """A rule that did not pass, by its state in the report: ``failed`` (judged, with its failed
    rows), ``not_evaluated`` (could not run on the batch, which fails it) or ``stopped`` (no
    verdict); ``None`` for a rule that passed or was left to another step."""
    status = rule.get("status")
    if status == "evaluated" and rule.get("passed") is False:
        rows = rule.get("failed_rows")
        warning = " (warning)" if rule.get("severity") == "warning" else ""
        return f"  failed        {rule['id']}{warning}" + (f": {rows} rows" if rows is not None else "")
    if status in ("not_evaluated", "stopped"):
        return f"  {status:<13} {rule['id']}: {rule.get('reason') or 'no reason given'}"
    return None


def _report_rules(report_path: str | None) -> list[dict] | None:
    """The rule entries of the submission's report, when it is a file here."""
    if not report_path or "://" in report_path:
        return None
    try:
        return list(json.loads(Path(report_path).read_text(encoding="utf-8")).get("rules") or [])
    except (OSError, ValueError, AttributeError):
        return None
