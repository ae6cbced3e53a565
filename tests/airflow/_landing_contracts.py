"""Contracts for the sensor and event-driven gate tests: the example ``regional_daily_cases``
under another id, with tables of its own (so its runs share nothing with the other tests) and
the gate settings a test needs, written to a folder of its own and compiled by the real compiler."""

from __future__ import annotations

import csv
from pathlib import Path

import yaml
from _airflow_gate import HOME, REPO

LAKEHOUSE = HOME / "lakehouse"


def write_contract(folder: Path, contract_id: str, *, landing_format: str = "csv", schedule=None) -> Path:
    document = yaml.safe_load((REPO / "contracts" / "regional_daily_cases.yaml").read_text())
    document["id"] = contract_id
    gate = next(p for p in document["customProperties"] if p["property"] == "contractGate")["value"]
    gate["landing"] = {"path": f"landing/{contract_id}", "format": landing_format,
                       **({"options": {"header": "true"}} if landing_format == "csv" else {})}
    gate["target"] = {"path": contract_id}
    gate["quarantine"] = {"path": f"{contract_id}_quarantine"}
    if schedule is None:
        gate.pop("schedule", None)
    else:
        gate["schedule"] = schedule
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{contract_id}.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


def land_csv(contract_id: str, rows: list[dict], *, marker: str | None = None) -> Path:
    """Write ``rows`` as the only data file of the contract's landing folder (and the marker)."""
    folder = LAKEHOUSE / "landing" / contract_id
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.iterdir():
        old.unlink()
    with (folder / "part-0.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    if marker:
        (folder / marker).write_text("")
    return folder


def case_rows(day: str, *, region: str = "L", bad: bool = False, count: int = 3) -> list[dict]:
    rows = [{"region_code": f"{region}{i}", "report_date": day, "reporting_org": "Org-A",
             "case_count": 10 + i, "status": "final"} for i in range(count)]
    if bad:
        rows[0].update(case_count=-5, status="unknown")
    return rows
