"""How many public ODCS contracts ``contract-gate lint`` accepts, and why it refuses the others.

    .venv/bin/python benchmarks/odcs_public/accept_rate.py [folder ...]   (default: contracts/)

Each file is linted on its own by the installed ``contract-gate lint --json`` (a fresh process,
as a user runs it), so the measure does not depend on the linter's Python API: accepted means
exit code 0. A refusal is grouped by its first error into a reason (the rows of the table in
RESULTS.md); an error no reason matches is grouped by its message with quoted names blanked.
Reasons marked fair are the refusals the gate should keep: nothing to gate, SQL that reads
other tables, files or another version of the batch or uses a function Spark lacks, another
engine's check.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
LINT = [str(ROOT / ".venv" / "bin" / "contract-gate"), "lint", "--json"]

OWN_TABLE = "SQL names the object's own table"
# (reason, pattern on the first error's YAML path and message); the first match names the refusal.
REASONS = [
    ("SQL check uses `{model}` / `{table}`", r"placeholder \{(model|table)\}"),
    ("SQL reads another table or a file", r"table '.*' is not allowed|not allowed as a table"),
    ("SQL reads another version of the batch (time travel)", r"table version options are not allowed"),
    ("SQL uses a function the gate does not allow", r"function \S+ is not allowed"),
    ("physicalType is not a Spark type", r"unknown physicalType|unexpected '.*' in type"),
    ("no physicalType (only logicalType)", r"physicalType is required"),
    ("more than one schema object", r"schema objects|exactly one dataset"),
    ("nested properties / items", r"nested properties"),
    ("contract id not usable as a name", r"\bid\b.*(DAG id|cannot become)"),
    ("no schema object (nothing to gate)", r"no schema object"),
    ("physicalName differs from name", r"physicalName .* differs"),
    ("null in validValues / invalidValues", r"(validValues|invalidValues).*got None"),
    ("composite key without primaryKeyPosition", r"primaryKeyPosition is required"),
    ("check for another engine", r"unsupported custom engine|engine '"),
    ("DQX function not supported", r"unknown DQX function"),
]
FAIR = {"no schema object (nothing to gate)", "SQL reads another table or a file", "check for another engine",
        "SQL uses a function the gate does not allow", "SQL reads another version of the batch (time travel)"}


def first_error(completed: subprocess.CompletedProcess) -> str:
    """The first error message lint gave, from its JSON (or its text when that is not JSON)."""
    try:
        contracts = json.loads(completed.stdout)["contracts"]
        errors = [error for contract in contracts for error in contract.get("errors", [])]
        if errors:
            path = errors[0].get("path") or "<document>"
            return f"{path}: {errors[0].get('message', errors[0])}"
    except (ValueError, KeyError, TypeError):
        pass
    lines = [line.strip() for line in (completed.stdout + completed.stderr).splitlines() if line.strip()]
    details = [line for line in lines if not line.startswith(("FAIL", "ok "))]
    return details[0] if details else f"exit {completed.returncode} without a message"


def reason_of(message: str, file: Path) -> str:
    table = re.search(r"table '([^']*)' is not allowed", message)
    if table and names_own_table(table.group(1), file):
        return OWN_TABLE
    for reason, pattern in REASONS:
        if re.search(pattern, message):
            return reason
    return "other: " + re.sub(r"'[^']*'", "'…'", message.split(": ", 1)[-1])[:120]


def names_own_table(table: str, file: Path) -> bool:
    """The refused table is one of the contract's own objects (by name or physicalName) or its
    ``{model}`` under another tool's dialect (``${project}.${dataset}.${model}``)."""
    if "{model}" in table or "{table}" in table:
        return True
    document = yaml.safe_load(file.read_text(encoding="utf-8"))
    objects = (document.get("schema") or []) if isinstance(document, dict) else []
    own = {str(o.get(key)).lower() for o in objects if isinstance(o, dict) for key in ("name", "physicalName")}
    return table.strip("`\"[]").split(".")[-1].lower() in own


def lint(file: Path) -> dict:
    started = time.perf_counter()
    completed = subprocess.run([*LINT, str(file)], capture_output=True, text=True, cwd=ROOT)
    seconds = time.perf_counter() - started
    accepted = completed.returncode == 0
    message = "" if accepted else first_error(completed)
    return {"file": file, "exit": completed.returncode, "seconds": seconds,
            "message": message, "reason": "" if accepted else reason_of(message, file)}


def report(results: list[dict], root: Path) -> str:
    accepted = [r for r in results if r["exit"] == 0]
    crashed = [r for r in results if r["exit"] not in (0, 1)]
    total = len(results)
    lines = [f"{len(accepted)} of {total} accepted ({100 * len(accepted) / total:.0f} %), "
             f"{total - len(accepted)} refused ({len(crashed)} of them with exit code 2: a crash or usage error)",
             "", "| source | files | accepted |", "|---|---:|---:|"]
    by_source = Counter(r["file"].relative_to(root).parts[0] for r in results)
    ok_by_source = Counter(r["file"].relative_to(root).parts[0] for r in accepted)
    lines += [f"| {source} | {count} | {ok_by_source[source]} |" for source, count in sorted(by_source.items())]
    lines += ["", "| first error of a refused file | contracts | fair refusal |", "|---|---:|---|"]
    reasons = Counter(r["reason"] for r in results if r["exit"] != 0)
    lines += [f"| {reason} | {count} | {'yes' if reason in FAIR else 'no'} |"
              for reason, count in reasons.most_common()]
    fair = sum(count for reason, count in reasons.items() if reason in FAIR)
    lines += ["", f"fair refusals: {fair}; accepted or fairly refused: {len(accepted) + fair} of {total}"]
    times = sorted(r["seconds"] for r in results)
    lines += ["", f"lint per file (a process each): median {statistics.median(times):.2f} s, "
                  f"max {times[-1]:.2f} s, total {sum(times):.0f} s"]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="*", type=Path, default=[HERE / "contracts"])
    parser.add_argument("--verbose", action="store_true", help="print each refused file and its first error")
    args = parser.parse_args()
    files = sorted(f for folder in args.folders for f in folder.rglob("*.y*ml"))
    if not files:
        print(f"no contracts under {', '.join(map(str, args.folders))}: run collect.py first (see SOURCES.md)")
        return 2
    results = [lint(file) for file in files]
    if args.verbose:
        for r in results:
            if r["exit"] != 0:
                print(f"REFUSED {r['file'].relative_to(args.folders[0])}: {r['message']}")
        print()
    print(report(results, args.folders[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
