"""Fault-injection benchmark: ``.venv/bin/python benchmarks/reliability/run.py [--trials 24] [--modes ...]``.

Runs the fault-injection trials of the test suite (``tests/gate_steps/_fault_trials.py``, of
which the default test run runs three) round-robin over the four fault points and the publication
shapes (``--modes``; default ``append`` and ``replace_keys``), prints one line per trial and the totals, and exits 1 if any trial broke an invariant
(a duplicated or lost row, or a submission without exactly one final decision).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parents[2] / "tests"
sys.path[:0] = [str(TESTS / "gate_steps"), str(TESTS)]  # the trials and their wait helper live there

from _fault_trials import run_trial, summary  # noqa: E402
from _gate_once import POINTS  # noqa: E402

MODES = ("append", "replace_keys", "split")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=24)
    parser.add_argument("--modes", nargs="+", choices=MODES, default=["append", "replace_keys"],
                        help="publication shapes to cycle through (split: split_rows, valid rows then invalid)")
    parser.add_argument("--seed", type=int, default=20240301, help="random kill delays")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)

    from contract_gate_spark.runtime.session import get_session

    spark = get_session("contract-gate-reliability", {
        "spark.master": "local[2]", "spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"})
    rng = random.Random(args.seed)
    started = time.perf_counter()
    results = []
    with tempfile.TemporaryDirectory(prefix="contract-gate-reliability-") as folder:
        for number in range(args.trials):
            point, mode = POINTS[number % len(POINTS)], args.modes[(number // len(POINTS)) % len(args.modes)]
            result = run_trial(spark, Path(folder) / f"trial-{number}", number, point, mode, rng)
            results.append(result)
            print(f"trial {number:2d} {point:15s} {mode:12s} killed={result.killed!s:5s} "
                  f"committed_before_retry={result.committed_before_retry!s:5s} recovered={result.recovered!s:5s} "
                  f"commits={result.tagged_commits} dup={result.duplicated_rows} lost={result.lost_rows} "
                  f"finals={result.final_decisions} {'ok' if result.ok else 'BROKEN'} ({result.seconds}s)",
                  flush=True)
    figures = summary(results)
    figures["wall_seconds"] = round(time.perf_counter() - started, 1)
    totals = {k: v for k, v in figures.items() if k != "results"}
    print(json.dumps(totals, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0 if figures["passed"] == figures["trials"] else 1


if __name__ == "__main__":
    sys.exit(main())
