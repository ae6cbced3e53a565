"""``contract-gate diff OLD NEW``: every change between two contract versions, classified.

OLD and NEW are files or ``path@gitref`` (``contracts/orders.yaml@HEAD~1``). A contract of several
schema objects is diffed object by object, or only ``--object NAME``. Exit code: 0 no
breaking change and a fitting version, 1 a breaking change or a version that does not fit the
changes, 2 usage error or a version that cannot be read or compiled.
"""

from __future__ import annotations

import sys

from contract_gate.contract.errors import ContractError
from contract_gate.evolution.diff import UnknownObject, diff_contracts
from contract_gate.evolution.render import FORMATS, render
from contract_gate.evolution.sources import SourceError, load_version


def register(subparsers) -> None:
    parser = subparsers.add_parser("diff", help="classify the changes between two contract versions "
                                                "(files or path@gitref)")
    parser.add_argument("old", help="the deployed version: a file or path@gitref")
    parser.add_argument("new", help="the new version: a file or path@gitref")
    parser.add_argument("--env", help="server name or environment to resolve addresses for")
    parser.add_argument("--object", dest="object_name", metavar="NAME",
                        help="diff only this schema object (default: every object of the contract)")
    parser.add_argument("--format", choices=FORMATS, default="text")
    parser.add_argument("--json", action="store_const", dest="format", const="json", help="the same as --format json")
    parser.set_defaults(func=run)


def run(args) -> int:
    try:
        diff = diff_contracts(load_version(args.old), load_version(args.new), env=args.env,
                              object_name=args.object_name)
    except (SourceError, UnknownObject) as exc:
        print(f"contract-gate diff: {exc}", file=sys.stderr)
        return 2
    except ContractError as exc:
        print(f"contract-gate diff: a version does not compile:\n{exc}", file=sys.stderr)
        return 2
    sys.stdout.write(render(diff, args.format))
    return 1 if diff.breaking or diff.version_problems else 0
