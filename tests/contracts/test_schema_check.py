"""The ODCS JSON-schema check (``jsonschema-rs`` in the loader): the example contracts pass; a
schema error names the YAML path and line of the value at fault, in the project's wording; and
on a few hundred randomly broken contracts every error points at a path that exists in the file."""

from __future__ import annotations

import copy
import random
from pathlib import Path

import pytest
import yaml

from _contract_texts import column, contract
from contract_gate.contract.errors import ContractError
from contract_gate.contract.loader import SUPPORTED_API_VERSIONS, load_contract, load_contract_text
from contract_gate.contract.yaml_source import YamlSyntaxError, parse_yaml

ROOT = Path(__file__).resolve().parents[2]


def issues(text: str) -> list[tuple[str, int | None, str]]:
    with pytest.raises(ContractError) as caught:
        load_contract_text(text, "c.yaml")
    return [(i.path, i.line, i.message) for i in caught.value.issues]


def test_the_example_contracts_pass():
    for path in sorted((ROOT / "contracts").glob("*.yaml")):
        assert load_contract(path).raw["apiVersion"] in SUPPORTED_API_VERSIONS


def test_a_quality_rule_without_an_operator_lists_the_operators():
    assert issues(contract(column("v", "int", "integer"), quality="- metric: rowCount\n  unit: rows")) == [
        ("schema[0].quality[0]", 14, "needs exactly one of: mustBe, mustNotBe, mustBeGreaterThan, "
                                     "mustBeGreaterOrEqualTo, mustBeLessThan, mustBeLessOrEqualTo, mustBeBetween, "
                                     "mustNotBeBetween")]


def test_the_operator_that_is_present_says_what_is_wrong_with_it():
    assert issues(contract(column("v", "int", "integer"), quality="- metric: rowCount\n  mustBeGreaterThan: many")) == [
        ("schema[0].quality[0].mustBeGreaterThan", 15, "'many' is not of type 'number'")]


def test_a_value_of_neither_allowed_type_names_both():
    text = contract(column("v", "int", "integer"),
                    quality="- type: custom\n  engine: spark-sql\n  implementation: 5\n  mustBe: 0")
    assert issues(text) == [("schema[0].quality[0].implementation", 16, "5 is not of type 'string', 'object'")]


def test_formats_are_annotations_as_in_odcs():
    # ODCS marks dateIn as format "date" without asserting it; the check must not refuse it.
    text = contract(column("v", "int", "integer"), extra="team:\n  name: t\n  members:\n    - username: a\n"
                                                         "      dateIn: next week\n")
    assert load_contract_text(text, "c.yaml").model.team.members[0].dateIn == "next week"


def test_keys_that_are_not_text_and_binary_values_are_errors_with_their_path():
    # The schema check takes JSON only: these would crash it (and ODCS's model) without a path.
    text = contract(column("v", "int", "integer", logicalTypeOptions="{1: a}", description="!!binary aGVsbG8="))
    assert issues(text) == [
        ("schema[0].properties[0].logicalTypeOptions.1", 13, "a key must be text, got 1: quote it"),
        ("schema[0].properties[0].description", 14,
         "a bytes value (a YAML tag such as !!binary) is not allowed: use text, a number, true/false or null")]
    assert issues(contract(column("v", "int", "integer")) + "true: yes\n") == [
        ("True", 1, "a key must be text, got True: quote it")]


# -- randomly broken contracts -------------------------------------------------------------
REPLACEMENTS = ["x", 3, 2.5, True, None, [], {}, ["a"], {"value": 1}, "table", "library", "sql", "custom", "text",
                "databricks", "local", "s3", "date", "timestamp", "integer", "number", "string", "map", "array",
                "object", "boolean", -1, 0, [1, 2], [2, 1]]
KEYS = ["colour", "type", "logicalType", "metric", "query", "engine", "implementation", "mustBe", "mustBeBetween",
        "unit", "catalog", "schema", "path", "format", "logicalTypeOptions", "minimum", "pattern", "required",
        "primaryKeyPosition", "enum", "customProperties", "quality", "name", "value", "id", "arguments"]


def documents() -> list:
    docs = []
    for path in sorted([*(ROOT / "contracts").glob("*.yaml"), *(ROOT / "tests" / "contracts_bad").glob("*.yaml")]):
        try:
            data = parse_yaml(path.read_text(encoding="utf-8")).data
        except YamlSyntaxError:
            continue
        if isinstance(data, dict) and data.get("apiVersion") in SUPPORTED_API_VERSIONS:
            docs.append(data)
    return docs


def containers(node, found=None) -> list:
    found = [] if found is None else found
    if isinstance(node, (dict, list)):
        found.append(node)
        for child in (node.values() if isinstance(node, dict) else node):
            containers(child, found)
    return found


def mutate(document, rng: random.Random):
    """1-3 random edits: a key set to another value or deleted, a list item replaced or added.
    ``apiVersion`` is left alone: the loader checks it before the schema."""
    document = copy.deepcopy(document)
    for _ in range(rng.randint(1, 3)):
        target = rng.choice(containers(document))
        if isinstance(target, dict):
            key = rng.choice([*KEYS, *target]) if target else rng.choice(KEYS)
            if key == "apiVersion" or target is document and key == "kind":
                continue
            if rng.random() < 0.3 and key in target:
                del target[key]
            else:
                target[key] = copy.deepcopy(rng.choice(REPLACEMENTS))
        elif target:
            index = rng.randrange(len(target))
            target[index] = copy.deepcopy(rng.choice([*REPLACEMENTS, target[index]]))
        else:
            target.append(copy.deepcopy(rng.choice(REPLACEMENTS)))
    return document


def exists(document, path: str) -> bool:
    """Whether a YAML path such as ``schema[0].properties[1].name`` names a value in ``document``."""
    node = document
    for part in path.replace("[", ".[").split(".") if path else []:
        if part.startswith("["):
            index = int(part[1:-1])
            if not isinstance(node, list) or index >= len(node):
                return False
            node = node[index]
        else:
            if not isinstance(node, dict) or part not in node:
                return False
            node = node[part]
    return True


@pytest.mark.parametrize("seed", range(3))
def test_every_error_on_a_broken_contract_names_a_path_in_the_file_and_its_line(seed):
    rng = random.Random(seed)
    bases = documents()
    rejected = 0
    for _ in range(100):
        document = mutate(rng.choice(bases), rng)
        text = yaml.safe_dump(document, sort_keys=False, allow_unicode=True)
        try:
            load_contract_text(text, "broken.yaml")
        except ContractError as error:
            rejected += 1
            for issue in error.issues:
                assert exists(document, issue.path), (issue, text)
                assert issue.line is not None, (issue, text)
                assert issue.message
    assert 0 < rejected < 100  # both outcomes are exercised
