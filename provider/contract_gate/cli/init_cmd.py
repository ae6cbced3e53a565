"""``contract-gate init <sample>``: draft a contract from a Delta table, a Parquet, CSV or JSON
sample, or a catalog table.

The draft (``contract_gate.contract.draft``) has the sample's exact Spark types, ``required``
where the sample has no NULL and a suggested key; suggested rules are commented out, and no
value of the sample is written unless ``--with-examples`` is given. Its landing is the sample,
so gating the sample against its own draft publishes it. Exit codes: 0 written, 2 error.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

from contract_gate import config
from contract_gate.cli.options import add_verbose
from contract_gate.cli.errors import one_line
from contract_gate.cli.progress import progress
from contract_gate.cli.quiet import log_path, logged
from contract_gate.contract.draft import Landing, draft_contract
from contract_gate.contract.environments import DEFAULT_ROOT
from contract_gate_plan.addresses import looks_like_path

INPUT_FORMATS = ("delta", "parquet", "csv", "json", "table")
_NOT_IDENTIFIER = re.compile(r"[^A-Za-z0-9_]+")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("init", help="draft a contract from a sample (Delta, Parquet, CSV, JSON or a table)")
    parser.add_argument("sample", help="a path (Delta table folder or files) or a catalog table name")
    parser.add_argument("--input-format", choices=INPUT_FORMATS,
                        help="the sample's format (default: table for a name, delta for a Delta folder, else by "
                             "file extension)")
    parser.add_argument("--id", help="the contract id (default: the object name)")
    parser.add_argument("--object", help="the schema object's name, which names the target (default: from the sample)")
    parser.add_argument("--output", "-o", type=Path, help="write the draft here (default: print it)")
    parser.add_argument("--with-examples", action="store_true",
                        help="write the sample's ranges and values into the suggested rules (comments)")
    parser.add_argument("--remote", metavar="sc://HOST:PORT", help="read the sample on this Spark Connect server")
    add_verbose(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    input_format = args.input_format or guess_format(args.sample)
    home = config.gate_home()
    landing, name = landing_of(args.sample, input_format, home)
    object_name = args.object or name
    if args.output and args.output.exists():
        print(f"contract-gate init: {args.output} exists; not overwritten", file=sys.stderr)
        return 2
    log = log_path("init")
    try:
        with progress(f"reading {args.sample} ({input_format}) on Spark", args.verbose, log=log):
            profile = profile_of(args.sample, input_format, args.remote)
    except Exception as exc:  # unreadable sample or a crashed engine: nothing to draft from
        if args.verbose:
            raise
        print(f"contract-gate init: could not read {args.sample}: {one_line(exc)}{logged(log)}", file=sys.stderr)
        return 2
    text = draft_contract(profile, contract_id=args.id or object_name, object_name=object_name,
                          landing=Landing(input_format if input_format != "table" else "delta", **landing),
                          with_examples=args.with_examples, source=args.sample)
    if args.output:
        args.output.write_text(text, encoding="utf-8")
        print(f"contract-gate init: wrote {args.output}; check it with `contract-gate lint {args.output}`",
              file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def guess_format(sample: str) -> str:
    path = Path(sample)
    if not looks_like_path(sample):
        return "table"
    if (path / "_delta_log").is_dir():
        return "delta"
    suffix = (path.suffix or next((p.suffix for p in path.glob("*.*") if not p.name.startswith(("_", "."))), "")).lower()
    return {".parquet": "parquet", ".csv": "csv", ".json": "json", ".jsonl": "json", ".ndjson": "json"}.get(suffix, "delta")


def landing_of(sample: str, input_format: str, home: Path) -> tuple[dict, str]:
    """(landing address fields, default object name). A path under the gate's lakehouse root is
    written relative to it (where a contract's landing belongs), one under a deployment's
    landing root as it is; a sample anywhere else cannot be a landing (the draft would fail its
    own lint), so the landing is ``landing/<name>`` in the root and the draft says where the
    sample was. The default object name comes from the sample's name, made an identifier; when
    the target it would name already exists (the sample is a published table), ``_gated`` is
    appended."""
    if input_format == "table":
        return {"table": sample}, _identifier(sample.split(".")[-1])
    path = Path(sample).resolve()
    root = home / DEFAULT_ROOT
    name = _identifier(path.stem if path.is_file() else path.name)
    if (root / name).exists():
        name += "_gated"
    if path.is_relative_to(root):
        return {"path": path.relative_to(root).as_posix()}, name
    if any(path.is_relative_to(Path(folder).resolve()) for folder in config.get_list("landing_roots")
           if "://" not in folder):
        return {"path": str(path)}, name
    return {"path": f"landing/{name}", "sample": sample}, name


def _identifier(text: str) -> str:
    name = _NOT_IDENTIFIER.sub("_", text).strip("_") or "dataset"
    return name if not name[0].isdigit() else f"t_{name}"


def profile_of(sample: str, input_format: str, remote: str | None):
    # pyspark loads only when a sample is read: the other commands start without it
    from contract_gate_spark.runtime import job_start
    from contract_gate_spark.runtime.session import active_session, is_connect

    if not (remote or os.environ.get("SPARK_REMOTE")) and active_session() is None:
        job_start.prepare()  # the local gate job's start-up aids, as `validate` uses them
    from contract_gate.dataframe import spark_session  # pyspark, as above
    from contract_gate.sample_profile import profile_sample, read_sample

    spark = spark_session(remote)
    try:
        return profile_sample(read_sample(spark, sample, input_format))
    finally:
        if is_connect(spark):
            spark.stop()
