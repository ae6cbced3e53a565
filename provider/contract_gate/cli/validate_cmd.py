"""``contract-gate validate <contract> --data <path|table>``: run a contract on Spark.

Prints one line per rule with its failed-row count (``--json``: the report), and writes the
report (``--report``) and JUnit XML, one test case per rule (``--junit``). Exit 0 pass or warn,
1 fail, 2 when it could not validate (bad contract, unreadable data, crashed engine).
Spark is imported only when the command runs, so ``lint``/``plan`` never pay for it.

``--target`` validates the contract's own target tables as they are now instead of ``--data``
(a backfill check: does today's table meet this contract version?): each gated object's
target, or the one ``--object`` names, read at its latest Delta version pinned once (the report
names it), all in one Spark session, writing nothing. ``--json`` then prints one report per
object (a JSON array when there are several); the exit code is the worst object's. The table
is judged as the gate would after its non-breaking migration: a column this version adds
(nullable, not in the table yet) is read as NULL, as ``ADD COLUMNS`` leaves it, and reported
as a pending migration (``pending_migration``), not as a missing column. A rule whose
threshold counts rows (a ``rowCount`` bound, "at most 5 failing rows") bounds one batch, not the
table the batches add up to: it is reported not executed.

``--remote sc://host:port`` (else ``SPARK_REMOTE``) makes the command a thin Spark Connect
client: the server reads the data and validates it, no JVM starts here. Without one, local
Spark starts as the local runner starts a gate job (``contract_gate.dataframe.spark_session``).
"""

from __future__ import annotations

import argparse
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from contract_gate.cli.junit import Case, Suite, write_junit
from contract_gate.cli.options import add_input_format, add_json, add_verbose, print_json, report_error
from contract_gate.cli.errors import one_line
from contract_gate.cli.progress import progress
from contract_gate.cli.quiet import log_path, logged
from contract_gate.cli.tables import render_table
from contract_gate.contract.compiler import compile_plan, compile_plans
from contract_gate.contract.errors import ContractError
from contract_gate_plan.addresses import looks_like_path
from contract_gate_plan.model import Plan, load_plan

FORMATS = ("delta", "parquet", "csv", "json")  # contract_gate_spark.validation.candidate.FORMATS, without pyspark
EXIT = {"pass": 0, "warn": 0, "fail": 1}


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "validate", help="validate a file or table against a contract on local Spark or a Spark Connect server"
    )
    parser.add_argument("contract", help="ODCS contract YAML")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--data", help="path or catalog table to validate")
    source.add_argument("--target", action="store_true",
                        help="validate the contract's target tables as they are now (at a pinned Delta version); "
                             "writes nothing")
    parser.add_argument("--object", metavar="NAME", help="with --target: only this schema object's target")
    add_input_format(parser, FORMATS, "delta", "format of --data (default: delta)")
    parser.add_argument("--version", type=int, help="Delta version (default: latest, pinned)")
    parser.add_argument("--env", help="servers entry of the contract to compile for")
    parser.add_argument("--report", type=Path, help="write the report JSON here")
    parser.add_argument("--junit", type=Path, metavar="FILE", help="write JUnit XML here: one test case per rule")
    add_json(parser)
    add_verbose(parser)
    parser.add_argument("--sample", type=int, default=0, help="failing values to show per rule")
    parser.add_argument("--remote", metavar="sc://HOST:PORT",
                        help="validate on this Spark Connect server, which reads --data (default: $SPARK_REMOTE;"
                             " without either, local Spark)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.object and not args.target:
        report_error(args, "error: --object names the target to validate; give it with --target")
        return 2
    try:
        plans = _target_plans(args) if args.target else [compile_plan(args.contract, env=args.env)]
    except (ContractError, OSError, ValueError) as exc:
        report_error(args, f"error: {one_line(exc)}")
        return 2
    if args.report and len(plans) > 1:
        report_error(args, f"error: --report writes one report; the contract gates {len(plans)} objects: "
                           "name one with --object")
        return 2
    what = "the target" if args.target else args.data
    if not args.target and _missing_local_path(args.data, args):
        report_error(args, f"error: no data at {args.data}: give --data the path of a file or folder, "
                           "or a catalog table name")
        return 2
    log = log_path("validate")
    try:
        with progress("starting Spark", args.verbose, log=log) as shown:
            reports = _validate(plans, args, shown)
    except Exception as exc:  # unreadable data or a crashed engine: not a verdict on the data
        if args.verbose:
            raise
        report_error(args, f"error: could not validate {what}: {one_line(exc)}{logged(log)}")
        return 2
    code = max(EXIT[report["outcome"]] for report in reports)
    if args.report:
        from contract_gate_spark.validation.report import write_report  # pyspark: only when the command runs

        write_report(reports[0], args.report)
    if args.junit:
        write_junit(args.junit, [junit_suite(report) for report in reports])
    if args.json:
        print_json(reports[0] if len(reports) == 1 else reports)
        return code
    print("\n\n".join(render(report) for report in reports))
    for kind, path in (("report", args.report), ("JUnit XML", args.junit)):
        if path:
            print(f"{kind} written to {path}")
    return code


def _missing_local_path(data: str, args: argparse.Namespace) -> bool:
    """A path on this machine that does not exist (a Spark Connect server reads its own files)."""
    remote = args.remote or os.environ.get("SPARK_REMOTE")
    return not remote and looks_like_path(data) and "://" not in data and not Path(data).exists()


def _target_plans(args: argparse.Namespace) -> list[Plan]:
    """The plans whose targets ``--target`` validates: the one ``--object`` names, else every
    gated object's."""
    compiled = compile_plans(args.contract, env=args.env)
    plans = [compiled.plan(args.object)] if args.object else list(compiled.gated.values())
    ungated = [plan.object for plan in plans if not plan.gated]
    if not plans or ungated:
        raise ValueError(f"{args.contract}: {', '.join(ungated) or 'no schema object'} has no contractGate "
                         "settings, so no target table to validate")
    return plans


def _validate(plans: list[Plan], args: argparse.Namespace, shown: Any) -> list[dict[str, Any]]:
    """One report per plan, all in one Spark session: of ``--data``, or of each plan's target."""
    # pyspark: only when the command runs, so lint and plan never pay for it
    from contract_gate_spark.runtime import job_start
    from contract_gate_spark.runtime.session import active_session, is_connect

    if not (args.remote or os.environ.get("SPARK_REMOTE")) and active_session() is None:
        # this process starts local Spark for itself, as a local gate job does: the same start-up
        # aids (CONTRACT_GATE_LOCAL_START); never in a process that has a session of its own
        job_start.prepare()
    # pyspark as above; imported after the start-up aids are in place
    from contract_gate.dataframe import spark_session
    from contract_gate_spark.steps.history import exists
    from contract_gate_spark.steps.target import as_migrated
    from contract_gate_spark.validation.candidate import read_candidate
    from contract_gate_spark.validation.engine import run_validation
    from contract_gate_spark.validation.report import log_summary

    spark = spark_session(args.remote)
    shown.step("validating")
    reports = []
    try:
        for plan in map(load_plan, plans):
            if args.target:
                target = plan.require_tables().require_target()
                if not exists(spark, target):
                    raise ValueError(f"the target of {plan.object}, {target.location}, holds no Delta table yet")
                candidate = read_candidate(spark, target.location, version=args.version)
                migrated, added = as_migrated(plan, candidate.df)
                report = run_validation(spark, plan, replace(candidate, df=migrated, many_batches=True),
                                        sample_size=args.sample)
                reports.append({**report, "pending_migration": {"adds_columns": added}} if added else report)
                continue
            candidate = read_candidate(
                spark, args.data, format=args.input_format, version=args.version, columns=plan.columns
            )
            reports.append(run_validation(spark, plan, candidate, sample_size=args.sample))
    finally:
        if is_connect(spark):  # the server keeps a session until it is released
            spark.stop()
    for report in reports:
        log_summary(report)
    return reports


def render(report: dict[str, Any]) -> str:
    """The report as a table a person reads at a terminal."""
    candidate = report["candidate"]
    version = f" @ version {candidate['version']}" if candidate["version"] is not None else ""
    lines = [
        f"contract {report['contract']['id']} {report['contract']['version']} — "
        f"{candidate['table']}{version}: {candidate['row_count']} rows",
    ]
    pending = (report.get("pending_migration") or {}).get("adds_columns")
    if pending:
        lines.append(f"pending migration: the gate's next publish adds column(s) {', '.join(pending)} "
                     "(read as NULL here, as the migration leaves them; `contract-gate plan --migrate` prints it)")
    schema = report["schema"]
    if schema["missing"] or schema["unexpected"] or schema["type_mismatches"]:
        lines.append(f"schema ({schema['policy']}): {'ok' if schema['ok'] else 'FAILED'}")
        lines += [f"  missing column     {name}" for name in schema["missing"]]
        lines += [f"  unexpected column  {name}" for name in schema["unexpected"]]
        lines += [
            f"  wrong type         {m['column']}: {m['actual']}, expected {m['expected']}"
            for m in schema["type_mismatches"]
        ]
    rows = []
    for rule in report["rules"]:
        rows.append(
            (
                rule["id"],
                rule["severity"],
                "" if rule["failed_rows"] is None else str(rule["failed_rows"]),
                _threshold(rule),
                _result(rule),
            )
        )
        for column, values in rule.get("sample", {}).items():
            rows.append((f"  sample {column}", "", "", "", ", ".join(map(repr, values))))
    lines += render_table(("RULE", "SEVERITY", "FAILED ROWS", "THRESHOLD", "RESULT"), rows)
    lines.append(
        f"rows: {report['rows']['valid']} valid, {report['rows']['invalid']} invalid — "
        f"outcome: {report['outcome'].upper()}"
    )
    return "\n".join(lines)


def junit_suite(report: dict[str, Any]) -> Suite:
    """One test case for the schema check and one per rule: a failing error rule fails, a failing
    warning passes with a note, a rule that could not run is skipped. Counts only, no values."""
    schema = report["schema"]
    problems = [f"missing column {name}" for name in schema["missing"]]
    problems += [f"unexpected column {name}" for name in schema["unexpected"]]
    problems += [f"{m['column']}: {m['actual']}, expected {m['expected']}" for m in schema["type_mismatches"]]
    cases = [Case("schema", failure=None if schema["ok"] else f"schema ({schema['policy']}): " + "; ".join(problems))]
    for rule in report["rules"]:
        if rule["status"] != "evaluated":
            cases.append(Case(rule["id"], skipped=f"{rule['status']}: {rule['reason']}"))
            continue
        detail = _result(rule) if rule["failed_rows"] is None else f"{rule['failed_rows']} failed rows; {_result(rule)}"
        if rule["passed"]:
            cases.append(Case(rule["id"]))
        elif rule["severity"] == "warning":
            cases.append(Case(rule["id"], output=f"warning: {detail}"))
        else:
            cases.append(Case(rule["id"], failure=f"{rule['id']}: {detail}"))
    candidate = report["candidate"]
    return Suite(f"{report['contract']['id']} {report['contract']['version']}: {candidate['table']}", cases)


def _threshold(rule: dict[str, Any]) -> str:
    threshold = rule["threshold"]
    if not threshold:
        return ""
    unit = "%" if threshold.get("unit") == "percent" else ""
    return f"{threshold['operator']} {threshold['value']}{unit}"


def _result(rule: dict[str, Any]) -> str:
    if rule["status"] != "evaluated":
        return f"{rule['status']}: {rule['reason']}"
    verdict = "ok" if rule["passed"] else ("WARN" if rule["severity"] == "warning" else "FAIL")
    if rule["kind"] in ("row_count", "sql") or rule["threshold"]:
        return f"{verdict} (measured {rule['measured']})"
    return verdict
