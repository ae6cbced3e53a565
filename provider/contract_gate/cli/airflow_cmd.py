"""``contract-gate airflow up|down|status``: a long-lived Airflow on this machine, without Docker
(:mod:`contract_gate.cli.deployment`; docs/deployment.md).

``up`` starts the api-server, scheduler, dag-processor and triggerer (LocalExecutor), and with
``--spark-connect`` a local Spark Connect server every gate runs on; it writes one DAG file per
contract first (``dags sync``) and returns once every component is healthy. ``down`` stops them.
``status`` prints each component's process. ``units`` prints (or writes, ``--output``) the same
components as systemd units, for a service manager to run instead. Exit codes: 0 done
(``status``: all running), 1 something is not running or did not start, 2 usage error.
"""

from __future__ import annotations

import json
import os
import pwd
import sys
from pathlib import Path

from contract_gate.cli.deployment import Deployment, Options, down, units, up


def register(subparsers) -> None:
    parser = subparsers.add_parser("airflow", help="run Airflow with the gates on this machine, without Docker")
    actions = parser.add_subparsers(dest="action", required=True)
    default_home = Path(os.environ.get("AIRFLOW_HOME") or Path.home() / "airflow")
    for name, help_text in (("up", "start what is not running (first time: write the settings)"),
                            ("down", "stop every component"), ("status", "each component's process and health"),
                            ("units", "the same components as systemd units (after a first `up`)")):
        action = actions.add_parser(name, help=help_text)
        action.add_argument("--airflow-home", type=Path, default=default_home,
                            help="the deployment's folder (default: $AIRFLOW_HOME, else ~/airflow)")
        action.set_defaults(func=run)
    start = actions.choices["up"]
    start.add_argument("--db-url", help="Airflow's metadata database, e.g. postgresql+psycopg2://... "
                                        "(default: SQLite in the deployment's folder)")
    start.add_argument("--dags", type=Path, help="the DAG folder (default: <airflow home>/dags)")
    start.add_argument("--contracts", type=Path, help="the contracts folder (default: <airflow home>/contracts)")
    start.add_argument("--gate-home", type=Path,
                       help="the gate's home ([contract_gate] home), where the contracts' relative server paths "
                            "resolve (default: the Airflow home)")
    start.add_argument("--port", type=int, default=8080, help="the api-server's port on 127.0.0.1 (default 8080)")
    start.add_argument("--spark-connect", action="store_true",
                       help="run a local Spark Connect server and gate every contract on it")
    start.add_argument("--paused", action="store_true", help="new gate DAGs start paused")
    start.add_argument("--timeout", type=float, default=300, help="seconds to wait for every component (300)")
    unit = actions.choices["units"]
    unit.add_argument("--output", type=Path, help="write one <name>.service file per unit into this folder "
                                                  "(default: print them)")
    unit.add_argument("--user", help="the user the units run as (default: the owner of the settings file)")


def run(args) -> int:
    try:
        if args.action == "up":
            up(Options(args.airflow_home, args.db_url, args.dags, args.contracts, args.gate_home, args.port,
                       args.spark_connect, args.paused), timeout=args.timeout)
            return 0
        if args.action == "down":
            down(args.airflow_home)
            return 0
        if args.action == "units":
            deployment = Deployment(args.airflow_home)
            user = args.user or pwd.getpwuid(deployment.settings_file.stat().st_uid).pw_name  # up's user
            written = units(deployment.settings(), Path(sys.executable).parent, user)
            for name, text in written.items():
                if args.output:
                    args.output.mkdir(parents=True, exist_ok=True)
                    (args.output / name).write_text(text, encoding="utf-8")
                    print(f"wrote {args.output / name}")
                else:
                    print(f"# {name}\n{text}")
            return 0
        deployment = Deployment(args.airflow_home)
        processes = deployment.status()
        for name, pid in processes.items():
            print(f"{name:14} {'running (pid ' + str(pid) + ')' if pid else 'stopped'}")
        health = deployment.health()
        print(json.dumps(health) if health is not None else "api-server: no answer")
        return 0 if all(processes.values()) else 1
    except (FileNotFoundError, RuntimeError, TimeoutError) as exc:
        print(f"contract-gate airflow {args.action}: {exc}", file=sys.stderr)
        return 1
