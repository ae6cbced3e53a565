"""The contract form of history rules: a ``contractGate`` custom property of a rowCount or a
nullValues (``unit: percent``) quality entry, ``{history: {batches, within}}``. Its bounds come
from a hostile contract: out of range, they are lint errors naming the YAML path; a plan edited
after compilation is refused by the plan check."""

from __future__ import annotations

from pathlib import Path

import pytest

from contract_gate.contract.compiler import compile_plans
from contract_gate.contract.errors import ContractError
from contract_gate_plan.document import PlanError, check_document

CONTRACT = """\
apiVersion: v3.1.0
kind: DataContract
id: history_lint
version: 1.0.0
status: active
schema:
  - name: orders
    physicalType: table
    quality:
      - metric: rowCount
        mustBeGreaterThan: 0
        customProperties:
          - {{property: contractGate, value: {{history: {rows}}}}}
    properties:
      - {{name: order_id, physicalType: bigint, logicalType: integer, primaryKey: true}}
      - name: note
        physicalType: string
        logicalType: string
        quality:
          - {note}
customProperties:
  - property: contractGate
    value:
      landing: {{path: landing/orders}}
"""
GOOD_ROWS = "{batches: 5, within: 10}"
GOOD_NOTE = ("{metric: nullValues, unit: percent, mustBeLessThan: 50, severity: warning, "
             "customProperties: [{property: contractGate, value: {history: {batches: 3, within: 1.5}}}]}")
ROWS_PATH = "schema[0].quality[0].customProperties[0].value.history"
NOTE_PATH = "schema[0].properties[1].quality[0]"


def compiled(tmp_path: Path, rows: str = GOOD_ROWS, note: str = GOOD_NOTE):
    path = tmp_path / "history.yaml"
    path.write_text(CONTRACT.format(rows=rows, note=note), encoding="utf-8")
    return compile_plans(path)


def issues(tmp_path: Path, **given: str) -> list[tuple[str, str]]:
    with pytest.raises(ContractError) as caught:
        compiled(tmp_path, **given)
    return [(issue.path, issue.message) for issue in caught.value.issues]


def test_the_form_validates_as_odcs_and_compiles_to_rules_with_their_history(tmp_path):
    rules = {rule["id"]: rule for rule in compiled(tmp_path).plan().document["rules"]}

    assert rules["dataset.rowCount"]["history"] == {"batches": 5, "within": 10}
    assert rules["dataset.rowCount"]["threshold"] == {"operator": "mustBeGreaterThan", "value": 0, "unit": "rows"}
    note = rules["note.nullValues"]
    assert (note["history"], note["scope"], note["severity"]) == ({"batches": 3, "within": 1.5}, "dataset", "warning")


@pytest.mark.parametrize(("rows", "key", "words"), [
    ("{batches: 0, within: 10}", "batches", "history.batches must be a whole number from 1 to 100, not 0"),
    ("{batches: 101, within: 10}", "batches", "from 1 to 100, not 101"),
    ("{batches: '5', within: 10}", "batches", "not '5'"),
    ("{batches: true, within: 10}", "batches", "not True"),
    ("{batches: 2.5, within: 10}", "batches", "not 2.5"),
    ("{batches: 5, within: 1}", "within", "history.within must be a finite factor above 1, not 1"),
    ("{batches: 5, within: 0.5}", "within", "not 0.5"),
    ("{batches: 5, within: .inf}", "within", ".inf is not a finite number"),  # the loader's: JSON has none
    ("{batches: 5, within: .nan}", "within", ".nan is not a finite number"),
    ("{batches: 5}", "within", "not None"),
    ("{batches: 5, within: 10, since: 2024}", "since", "unknown history setting 'since'"),
])
def test_bounds_out_of_range_are_lint_errors_at_their_yaml_path(tmp_path, rows, key, words):
    assert [path for path, message in issues(tmp_path, rows=rows) if words in message] == [f"{ROWS_PATH}.{key}"]


@pytest.mark.parametrize(("note", "path", "words"), [
    ("{metric: missingValues, mustBeLessThan: 5, customProperties: "
     "[{property: contractGate, value: {history: {batches: 3, within: 2}}}]}",
     f"{NOTE_PATH}.customProperties[0].value.history", "a history bounds a rowCount or a nullValues metric only"),
    ("{metric: nullValues, mustBeLessThan: 5, customProperties: "
     "[{property: contractGate, value: {history: {batches: 3, within: 2}}}]}",
     f"{NOTE_PATH}.unit", "a history of nullValues compares null shares: give unit: percent"),
    ("{metric: nullValues, unit: percent, mustBe: 0, customProperties: "
     "[{property: contractGate, value: {history: {batches: 3, within: 2}}}]}",
     f"{NOTE_PATH}.metric", "a history of nullValues needs a threshold that allows some nulls"),
    ("{metric: nullValues, unit: percent, mustBeLessThan: 5, customProperties: "
     "[{property: contractGate, value: {batches: 3, within: 2}}]}",
     f"{NOTE_PATH}.customProperties[0].value", "a quality entry's contractGate entry is {history:"),
])
def test_a_history_where_it_cannot_be_judged_is_a_lint_error(tmp_path, note, path, words):
    found = issues(tmp_path, note=note)
    assert [p for p, message in found if message.startswith(words)] == [path]


@pytest.mark.parametrize("history", [{"batches": 1000, "within": 10}, {"batches": 5, "within": 1},
                                     {"batches": 5, "within": 10, "days": 3}])
def test_a_plan_edited_after_compilation_is_refused(tmp_path, history):
    document = compiled(tmp_path).plan().document
    next(rule for rule in document["rules"] if rule["id"] == "dataset.rowCount")["history"] = history

    with pytest.raises(PlanError, match="rule 'dataset.rowCount': "):
        check_document(document)


def test_a_plan_with_a_history_on_another_rule_is_refused(tmp_path):
    document = compiled(tmp_path).plan().document
    next(rule for rule in document["rules"] if rule["id"] == "order_id.required")["history"] = {
        "batches": 5, "within": 10}

    with pytest.raises(PlanError, match="a history is given with a rowCount or nullValues rule"):
        check_document(document)
