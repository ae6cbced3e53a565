"""Golden files: each example contract's plan JSON and target DDL, byte for byte.

A change to the compiler or to an example shows up here as a reviewable diff. After an
intended change, regenerate with:

    UPDATE_GOLDEN=1 .venv/bin/pytest tests/contracts/test_golden.py
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from contract_gate.contract.compiler import compile_plan
from contract_gate_plan.document import render_plan
from contract_gate_plan.table_ddl import render_ddl

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"
EXAMPLES = sorted(p.stem for p in (ROOT / "contracts").glob("*.yaml"))


def check(path: Path, text: str) -> None:
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"{path} is missing; run with UPDATE_GOLDEN=1 to create it"
    assert path.read_bytes() == text.encode("utf-8"), f"{path.name} differs; if intended, run with UPDATE_GOLDEN=1"


@pytest.mark.parametrize("name", EXAMPLES)
def test_plan_matches_golden(name):
    check(GOLDEN / f"{name}.plan.json", render_plan(compile_plan(ROOT / "contracts" / f"{name}.yaml").document))


@pytest.mark.parametrize("name", EXAMPLES)
def test_ddl_matches_golden(name):
    check(GOLDEN / f"{name}.ddl.sql", render_ddl(compile_plan(ROOT / "contracts" / f"{name}.yaml")))


def test_every_golden_file_belongs_to_an_example():
    expected = {f"{name}.plan.json" for name in EXAMPLES} | {f"{name}.ddl.sql" for name in EXAMPLES}
    assert {p.name for p in GOLDEN.iterdir()} == expected


def test_the_documented_example_contract_is_this_file_and_compiles():
    """tests/contracts/data/annotated_example.yaml is, byte for byte, the annotated example of
    docs/contracts.md, so the example a reader copies is one the compiler accepts."""
    example = ROOT / "tests" / "contracts" / "data" / "annotated_example.yaml"
    doc = (ROOT / "docs" / "contracts.md").read_text(encoding="utf-8")
    block = re.search(r"^## An annotated example\n\n```yaml\n(.*?)^```$", doc, re.S | re.M)
    assert block, "docs/contracts.md has no annotated example (## An annotated example, then a yaml block)"
    assert block.group(1) == example.read_text(encoding="utf-8"), f"docs/contracts.md's example differs from {example}"
    plan = compile_plan(example).document
    assert plan["key"] == ["shipment_id", "line_no"]
    assert len(plan["rules"]) == 21  # with key.unique_across_batches: the gate appends, with a key
