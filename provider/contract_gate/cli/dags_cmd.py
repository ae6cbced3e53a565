"""``contract-gate dags sync [--check]``: write (or check) one gate DAG file per contract.

Run at deploy time and in CI, and commit its output: Airflow parses the DAG folder as it is and
writes nothing into it (a read-only mount or a git bundle works), so every gate appears on the
first parse. ``--check`` changes nothing and exits 1 when a DAG file is missing, differs or has
lost its contract; CI runs it so the committed files cannot drift from the contracts folder.
Exit codes: 0 in sync (or synced), 1 out of sync (``--check``), 2 usage error.
"""

from __future__ import annotations

import sys
from pathlib import Path

from contract_gate import config
from contract_gate.contract.errors import ContractError
from contract_gate.dags.stub_files import STUB_FOLDER, sync_dag_files, unsynced_dag_files

DAG_FILE = "contract_gates.py"


def register(subparsers) -> None:
    parser = subparsers.add_parser("dags", help="generated gate DAG files (one per contract)")
    actions = parser.add_subparsers(dest="action", required=True)
    sync = actions.add_parser("sync", help=f"write one DAG file per contract into <dags>/{STUB_FOLDER}/")
    sync.add_argument("--dags", type=Path, default=Path("dags"), help="the DAG folder (default: ./dags)")
    sync.add_argument("--contracts", type=Path, default=None,
                      help=f"the contracts folder (default: {config.describe('contracts_dir')}, else $AIRFLOW_HOME/contracts "
                           "when it exists, else contracts/ next to the DAG folder)")
    sync.add_argument("--check", action="store_true", help="change nothing; exit 1 when out of sync")
    sync.set_defaults(func=run)


def run(args) -> int:
    if not args.dags.is_dir():
        print(f"contract-gate dags sync: no such DAG folder: {args.dags}", file=sys.stderr)
        return 2
    dag_file = args.dags / DAG_FILE
    try:
        if args.check:
            changes = unsynced_dag_files(dag_file, args.contracts)
            for change in changes:
                print(change)
            if changes:
                print(f"contract-gate dags sync --check: {len(changes)} DAG file(s) out of sync; "
                      "run `contract-gate dags sync` and commit the result", file=sys.stderr)
            return 1 if changes else 0
        stubs = sync_dag_files(dag_file, args.contracts)
    except (FileNotFoundError, ContractError) as exc:
        print(f"contract-gate dags sync: {exc}", file=sys.stderr)
        return 2
    print(f"{len(stubs)} contract DAG file(s) in {args.dags / STUB_FOLDER}")
    return 0
