"""``contract-gate rerun <contract> <submission_id>``: gate a corrected batch as a re-run.

The corrected batch is staged as a new candidate under a new submission id, linked to the
original by ``rerun_of`` in the decision log. Re-running a submission that was published is
refused (its rows would be published twice) unless ``--correction`` asks for key replacement
(``replace_keys``). A submission is one object's: a contract of several gated objects needs
``--object``. Exit codes as ``contract-gate run``.
"""

from __future__ import annotations

from contract_gate.cli.run_cmd import add_common_arguments, gate
from contract_gate.contract.compiler import compile_plan


def register(subparsers) -> None:
    parser = subparsers.add_parser("rerun", help="re-run a rejected submission from corrected landing data")
    add_common_arguments(parser)
    parser.add_argument("submission_id", help="the submission to re-run")
    parser.add_argument("--correction", action="store_true",
                        help="re-run a published submission, replacing its rows by business key")
    parser.set_defaults(func=rerun)


def rerun(args) -> int:
    return gate(args, {"rerun_of": args.submission_id, "correction": args.correction}, check=refusal)


def refusal(args) -> str | None:
    """Refuse before starting anything, with the same rule the DAG's submission task applies."""
    # Airflow (the operators import it) only after gate() has pointed it at this run's home and
    # DAG folder: Airflow reads its configuration once, when it is first imported
    from contract_gate.operators.submission import rerun_refusal

    plan = compile_plan(args.contract.resolve(), env=args.env, object_name=args.object_name)
    return rerun_refusal(plan, args.submission_id, args.correction)
