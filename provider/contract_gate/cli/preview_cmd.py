"""``contract-gate preview NEW --last N [--object NAME]``: what a new contract version would have decided
about the last N batches the gate accepted, before it is deployed (of a contract with several gated
objects, the batches of the one ``--object`` names).

The accepted batches are the newest ``published`` and ``split`` decisions of NEW's contract and
object in the decision log (read without Spark); each is re-validated against NEW on Spark,
read from its retained candidate or by time travel on the target (``contract_gate_spark.steps.preview``).
Nothing is written to any table. ``--deployed`` names the deployed contract file when its tables
are not NEW's (NEW publishes to a new versioned target). Prints per batch what the gate
recorded and what it would decide under NEW (published, split N of M, quarantined) and NEW's
failing rules, and per rule the rows and batches it would have rejected (counts, no values);
``--json`` the same as one document. Exit 0 when NEW decides every batch as recorded or
publishes more of it, 1 when it would publish fewer rows of any (``contract_gate.evolution.preview``),
2 when it could not preview.
"""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Any

from contract_gate.cli.options import add_json, add_verbose, print_json, report_error
from contract_gate.cli.errors import one_line
from contract_gate.cli.progress import progress
from contract_gate.cli.quiet import log_path, logged
from contract_gate.contract.compiler import compile_plan
from contract_gate.contract.errors import ContractError
from contract_gate.evolution.preview import accepted_batches, empty_result, judge, render

if TYPE_CHECKING:
    from contract_gate_plan.addresses import Address
    from contract_gate_plan.model import Plan


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("preview", help="re-validate the last N accepted batches against a new contract version")
    parser.add_argument("contract", help="the new contract version (YAML)")
    parser.add_argument("--last", type=int, default=5, metavar="N", help="how many accepted batches (default 5)")
    parser.add_argument("--deployed", help="the deployed contract, when its target and decision log are not NEW's")
    parser.add_argument("--env", help="servers entry of the contract to compile for")
    parser.add_argument("--object", dest="object_name", metavar="NAME",
                        help="the schema object whose batches to preview (a contract of several gated objects)")
    parser.add_argument("--remote", metavar="sc://HOST:PORT",
                        help="run on this Spark Connect server (default: $SPARK_REMOTE; without either, local Spark)")
    add_json(parser)
    add_verbose(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.last < 1:
        report_error(args, "error: --last must be 1 or more")
        return 2
    try:
        plan = compile_plan(args.contract, env=args.env, object_name=args.object_name)
        deployed = compile_plan(args.deployed, env=args.env, object_name=args.object_name) if args.deployed else plan
    except (ContractError, OSError) as exc:
        report_error(args, f"error: {one_line(exc)}")
        return 2
    if not deployed.gated:
        report_error(args, "error: the contract has no contractGate settings, so no target and no decision log")
        return 2
    batches = accepted_batches(deployed, args.last)
    if not batches:
        result = empty_result(plan)
    else:
        log = log_path("preview")
        try:
            with progress("starting Spark", args.verbose, log=log) as shown:
                result = _preview(plan, batches, deployed.require_tables().require_target(), args, shown)
        except Exception as exc:  # unreadable history or a crashed engine: no verdict
            if args.verbose:
                raise
            report_error(args, f"error: could not preview: {one_line(exc)}{logged(log)}")
            return 2
    if args.json:
        print_json(result)
    else:
        print(render(result))
    return 1 if result["rejected_batches"] else 0


def _preview(plan: Plan, batches: list[dict], target: Address, args: argparse.Namespace, shown: Any) -> dict:
    # pyspark: only when the command runs
    from contract_gate_spark.runtime import job_start
    from contract_gate_spark.runtime.session import active_session, is_connect

    if not (args.remote or os.environ.get("SPARK_REMOTE")) and active_session() is None:
        job_start.prepare()  # as `contract-gate validate` starts local Spark
    from contract_gate.dataframe import spark_session
    from contract_gate_spark.steps.preview import preview

    from contract_gate.operators.branch import decide  # Airflow (the branch task's module): only when preview runs

    spark = spark_session(args.remote)
    shown.step("validating")
    try:
        return judge(plan, preview(spark, plan, batches, target), batches, decide)
    finally:
        if is_connect(spark):
            spark.stop()
