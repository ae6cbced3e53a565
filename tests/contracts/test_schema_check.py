"""The fast schema check gives the same verdict as jsonschema on the bundled ODCS schema: on
every contract in the repository and on a few hundred randomly mutated ones (unknown keys,
wrong types, other server/quality/logical types, dropped keys)."""

from __future__ import annotations

import copy
import random
from pathlib import Path

import pytest

from contract_gate.contract.loader import _fast_check, _validator
from contract_gate.contract.schema_check import SchemaChecker
from contract_gate.contract.yaml_source import YamlSyntaxError, parse_yaml

ROOT = Path(__file__).resolve().parents[2]


def documents() -> list:
    docs = []
    for path in sorted([*(ROOT / "contracts").glob("*.yaml"), *(ROOT / "tests" / "contracts_bad").glob("*.yaml")]):
        try:
            docs.append(parse_yaml(path.read_text(encoding="utf-8")).data)
        except YamlSyntaxError:
            continue
    return docs


def containers(node, found=None) -> list:
    found = [] if found is None else found
    if isinstance(node, (dict, list)):
        found.append(node)
        for child in (node.values() if isinstance(node, dict) else node):
            containers(child, found)
    return found


REPLACEMENTS = ["x", 3, 2.5, True, None, [], {}, ["a"], {"value": 1}, "table", "library", "sql", "custom", "text",
                "databricks", "local", "s3", "date", "timestamp", "integer", "number", "string", "map", "array",
                "object", "boolean", -1, 0, [1, 2], [2, 1]]
KEYS = ["colour", "type", "logicalType", "metric", "query", "engine", "implementation", "mustBe", "mustBeBetween",
        "unit", "catalog", "schema", "path", "format", "logicalTypeOptions", "minimum", "pattern", "required",
        "primaryKeyPosition", "enum", "customProperties", "quality", "name", "value", "id", "arguments"]


def mutate(document, rng: random.Random):
    document = copy.deepcopy(document)
    for _ in range(rng.randint(1, 3)):
        target = rng.choice(containers(document))
        if isinstance(target, dict):
            action = rng.choice(["set", "set", "delete"])
            if action == "delete" and target:
                del target[rng.choice(sorted(target))]
            else:
                key = rng.choice([*KEYS, *target]) if target else rng.choice(KEYS)
                target[key] = copy.deepcopy(rng.choice(REPLACEMENTS))
        elif target:
            index = rng.randrange(len(target))
            target[index] = copy.deepcopy(rng.choice([*REPLACEMENTS, target[index]]))
        else:
            target.append(copy.deepcopy(rng.choice(REPLACEMENTS)))
    return document


def test_same_verdict_on_every_repository_contract():
    for document in documents():
        assert _fast_check()(document) == _validator().is_valid(document)


@pytest.mark.parametrize("seed", range(6))
def test_same_verdict_on_mutated_contracts(seed):
    rng = random.Random(seed)
    bases = documents()
    verdicts = []
    for _ in range(100):
        document = mutate(rng.choice(bases), rng)
        fast, full = _fast_check()(document), _validator().is_valid(document)
        assert fast == full, document
        verdicts.append(fast)
    assert True in verdicts and False in verdicts  # both outcomes are exercised


def test_unsupported_keywords_are_refused_not_ignored():
    with pytest.raises(ValueError, match="patternProperties"):
        SchemaChecker({"type": "object", "patternProperties": {"^x": {}}})
    with pytest.raises(ValueError, match="'dependentRequired' is not supported"):
        SchemaChecker({"dependentRequired": {"a": ["b"]}})
