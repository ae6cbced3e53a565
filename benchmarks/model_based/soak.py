"""Soak: a long seeded walk through the gate's whole life (tests/model_based/gate_walk.py), every
step type included (also those ``KNOWN_OPEN`` keeps out of the CI seed). Prints steps per minute,
the time per step type, and every disagreement with the step list that reproduces it.

    .venv/bin/python benchmarks/model_based/soak.py --steps 500 --seed 1 [--minutes M] [--skip-known-open]
        [--weight STEP=W ...]   (default 3 for a landing, 1 for every other step)

Steps that stop a run in the ``spark_connect`` mode start a Spark Connect server of the walk's own
(when first drawn) and stop it at the end; their lines print the seconds from the stop until the
server ran no job of the run. Exit 1 when the walk found a disagreement.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "model_based"))
sys.path.insert(0, str(ROOT / "tests"))  # the walk waits with the tests' own waiting.wait_until


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--minutes", type=float, default=None, help="stop after this long, however many steps")
    parser.add_argument("--skip-known-open", action="store_true", help="leave out the KNOWN_OPEN steps, as CI does")
    parser.add_argument("--weight", action="append", default=[], metavar="STEP=W",
                        help="draw STEP with weight W (a landing's default is 3, every other step's 1)")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="gate-soak-"))
    os.environ["CONTRACT_GATE_HOME"] = str(root)

    from gate_walk import KNOWN_OPEN, GateWorld  # after CONTRACT_GATE_HOME: the world resolves paths under it

    from contract_gate_spark.runtime.session import get_session

    spark = get_session("contract-gate-soak", {
        "spark.master": "local[2]", "spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2",
        "spark.default.parallelism": "2", "spark.databricks.delta.snapshotPartitions": "2",
        "spark.sql.warehouse.dir": str(root / "warehouse")})
    spark.sparkContext.setLogLevel("ERROR")
    world = GateWorld(root, spark, args.seed, skip=set(KNOWN_OPEN) if args.skip_known_open else None)
    weights = {name: float(weight) for name, weight in (each.split("=", 1) for each in args.weight)}
    # a soak stopped with SIGTERM (`timeout`, a CI job's end) still stops the walk's Connect server,
    # which runs in a session of its own and would outlive it
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    seconds: dict[str, list[float]] = defaultdict(list)
    started = time.perf_counter()
    try:
        for _ in range(args.steps):
            if args.minutes is not None and time.perf_counter() - started > args.minutes * 60:
                break
            before = time.perf_counter()
            world.walk(1, weights)
            seconds[world.steps[-1]].append(time.perf_counter() - before)
            done = len(world.steps)
            if done % 10 == 0:
                minutes = (time.perf_counter() - started) / 60
                print(f"{done} steps, {done / minutes:.1f} steps/min, {len(world.disagreements)} disagreement(s)",
                      flush=True)
    finally:
        world.close()
    minutes = (time.perf_counter() - started) / 60
    print(f"\nseed {args.seed}: {len(world.steps)} steps in {minutes:.1f} min = {len(world.steps) / minutes:.1f} "
          f"steps/min; {len(world.disagreements)} disagreement(s); root {root}")
    for name, times in sorted(seconds.items()):
        print(f"  {name:28s} {len(times):4d} x  mean {sum(times) / len(times):6.1f} s")
    for signal_name in sorted({name for name, _ in world.connect_stops}):
        delays = sorted(delay for name, delay in world.connect_stops if name == signal_name)
        print(f"  Connect client stopped with {signal_name}: no job of its run on the server after "
              f"{delays[len(delays) // 2]:.1f} s (median), {delays[-1]:.1f} s (max) of {len(delays)}")
    for what, stops in (("Databricks worker", world.databricks_stops), ("standalone cluster-mode worker",
                                                                         world.standalone_stops)):
        for signal_name in sorted({name for name, _ in stops}):
            going = [count for name, count in stops if name == signal_name]
            print(f"  {what} stopped with {signal_name}: {sum(1 for c in going if c)} of {len(going)} left a run "
                  "or driver going, which the decision's record ended first")
    for (branch, left), count in sorted(world.stop_effects.items()):
        print(f"  a run stopped in its {branch} step left: {left} ({count} x)")
    for outcome, count in sorted(world.record_stops.items()):
        print(f"  a record task stopped with SIGKILL: {outcome} ({count} x)")
    for found in world.disagreements:
        print(f"DISAGREEMENT step {found.step} {found.action}: {found.what}")
    if world.disagreements:
        print(f"reproduce: {world.reproduction()}")
    spark.stop()
    return 1 if world.disagreements else 0


if __name__ == "__main__":
    sys.exit(main())
