"""A contract whose ``type: sql`` query would run for hours, and the batch that makes it so, for
the end-to-end tests of the time budgets in each execution mode.

The query is an equality self-join on ``status`` (one value in the batch) that hashes every pair
of rows: on ROWS rows, 1.6e9 pairs, many minutes on two cores, yet a batch that stages in seconds. The allow-list accepts it: two reads of
``{object}``, a join on an equality between two columns, no builder sized by a literal.
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ROWS = 40_000
RULE_ID = "pairs_hash"
SLOW_QUERY = ("SELECT count(*) FROM {object} AS a JOIN {object} AS b ON a.status = b.status "
              "WHERE sha2(concat(a.region_code, b.region_code), 256) = 'x'")


def slow_contract(name: str, mode: str, *, query_seconds: int, validation_seconds: int = 600,
                  connection_id: str | None = None) -> str:
    """The regional contract as contract ``name``, gated in ``mode``, with the slow query and
    the given limits."""
    text = (REPO / "contracts" / "regional_daily_cases.yaml").read_text()
    text = text.replace("id: regional_daily_cases", f"id: {name}")
    text = text.replace("  - name: regional_daily_cases\n", f"  - name: {name}\n")
    text = text.replace("element: regional_daily_cases.report_date", f"element: {name}.report_date")
    text = text.replace("path: landing/regional_daily_cases", f"path: landing/{name}")
    quality = (f"      - id: {RULE_ID}\n        type: sql\n        query: \"{SLOW_QUERY}\"\n        mustBe: 0\n"
               "      - id: submission_not_empty\n")
    text = text.replace("      - id: submission_not_empty\n", quality)
    execution = f"        mode: {mode}\n" + (f"        connectionId: {connection_id}\n" if connection_id else "")
    limits = f"      limits:\n        validationSeconds: {validation_seconds}\n        querySeconds: {query_seconds}\n"
    return text.replace("        mode: local\n", execution + limits)


def many_rows(rows: int = ROWS) -> list[dict]:
    """Valid regional rows: distinct regions, one day, one status (every pair joins)."""
    return [{"region_code": f"R{i}", "report_date": "2025-03-01", "reporting_org": "Org-A",
             "case_count": i, "status": "final"} for i in range(rows)]
