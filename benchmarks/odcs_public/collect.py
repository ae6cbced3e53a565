"""Copy the public ODCS contracts listed in SOURCES.md out of fetched repository snapshots.

The contracts themselves are not committed (they belong to their authors' repositories); this
re-creates ``contracts/<source>/<file>.yaml`` from bare git snapshots of the listed repositories:

    .venv/bin/python benchmarks/odcs_public/collect.py <folder holding owner+name/repo snapshots>

Each file is taken at the commit SOURCES.md names and checked against the ODCS JSON schema that
ships with ``open_data_contract_standard``; a file that no longer validates is reported, not kept.
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources
from pathlib import Path

import jsonschema_rs
import yaml

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "SOURCES.md"
CONTRACTS = HERE / "contracts"


def listed_files() -> list[dict]:
    """The rows of the table in SOURCES.md: source folder, repository, commit, path, file name."""
    rows = []
    for line in SOURCES.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip().strip("`") for cell in line.strip().strip("|").split("|")]
        if len(cells) == 5 and len(cells[2]) == 40:
            rows.append(dict(zip(("file", "repo", "commit", "path", "license"), cells)))
    return rows


def main(mirrors: Path) -> int:
    schema = json.loads(resources.files("open_data_contract_standard").joinpath("schema.json").read_text("utf-8"))
    validator = jsonschema_rs.validator_for(schema, validate_formats=False)
    missing = 0
    for row in listed_files():
        git_dir = mirrors / row["repo"].replace("/", "+") / "repo"
        shown = subprocess.run(["git", "-C", str(git_dir), "show", f"{row['commit']}:{row['path']}"],
                               capture_output=True, text=True)
        document = yaml.safe_load(shown.stdout) if shown.returncode == 0 else None
        if document is None or not validator.is_valid(json.loads(json.dumps(document, default=str))):
            print(f"not kept: {row['repo']} {row['path']} ({shown.stderr.strip() or 'not valid ODCS'})")
            missing += 1
            continue
        target = CONTRACTS / row["file"]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(shown.stdout, encoding="utf-8")
    print(f"{len(listed_files()) - missing} contracts in {CONTRACTS}, {missing} not kept")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "/work/.mirror")))
