"""``contract-gate diff``: each change between two contract versions, classified breaking,
non-breaking or informational; the version bump it needs; ``path@gitref``; the three formats
and the exit codes. No Spark: the diff compares compiled plans and the YAML."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
from pathlib import Path

import pytest

from contract_gate.cli.main import main
from contract_gate.contract.loader import load_contract_text
from contract_gate.evolution.diff import diff_contracts
from contract_gate_plan.spark_types import type_change

BASE = (Path(__file__).parent / "data" / "evolving_orders.yaml").read_text()


def cli(*args) -> subprocess.CompletedProcess:
    """``contract-gate`` in-process: (returncode, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def edited(text: str, *replacements: tuple[str, str]) -> str:
    for old, new in replacements:
        assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times"
        text = text.replace(old, new)
    return text


def diff_of(old: str, new: str):
    return diff_contracts(load_contract_text(old, "old.yaml"), load_contract_text(new, "new.yaml"))


NOTE = """      - name: placed_on
"""
ADDED_COLUMN = """      - name: note
        physicalType: string
        logicalType: string
      - name: placed_on
"""
ADDED_REQUIRED = ADDED_COLUMN.replace("logicalType: string\n", "logicalType: string\n        required: true\n")
ADDED_WITH_ENUM = ADDED_COLUMN.replace("logicalType: string\n", "logicalType: string\n        enum:\n          - value: a\n")
PRICE = "      - name: price\n        physicalType: decimal(10,2)\n        logicalType: number\n"
CHANNEL_QUALITY = """        quality:
          - id: channel_known
            type: custom
            engine: spark-sql
            implementation: "channel IN ('web', 'app')"
            severity: warning
"""
GATE = "      violations:\n        policy: split_rows\n        maxInvalidShare: 0.2\n"

# (case, replacements making NEW from the base, expected worst impact, a word of the change)
MATRIX = [
    ("nullable column added", [(NOTE, ADDED_COLUMN)], "non-breaking", 'column "note"'),
    ("required column added", [(NOTE, ADDED_REQUIRED)], "breaking", "added as required"),
    ("column with a rule added", [(NOTE, ADDED_WITH_ENUM)], "non-breaking", "new column only"),
    ("column removed", [(PRICE, "")], "breaking", 'column "price"'),
    ("column renamed", [("name: channel\n", "name: source\n"),
                        ("implementation: \"channel IN", "implementation: \"source IN")], "breaking", "renamed to"),
    ("type narrowed int to smallint", [("physicalType: int\n", "physicalType: smallint\n")], "breaking", "narrowed"),
    ("type widened int to bigint", [("physicalType: int\n", "physicalType: bigint\n")], "non-breaking", "widened"),
    ("decimal widened", [("decimal(10,2)", "decimal(12,3)")], "non-breaking", "widened"),
    ("decimal scale up, integer digits down", [("decimal(10,2)", "decimal(10,3)")], "breaking", "neither holds"),
    ("decimal to string", [("decimal(10,2)", "string")], "non-breaking", "widened"),
    ("string to int", [(CHANNEL_QUALITY, ""), ("name: channel\n        physicalType: string",
                                               "name: channel\n        physicalType: int")], "breaking", "narrowed"),
    ("made required", [(PRICE, PRICE + "        required: true\n")], "breaking", "made required"),
    ("no longer required", [("        required: true\n        logicalTypeOptions:\n          minimum: 0",
                             "        logicalTypeOptions:\n          minimum: 0")], "non-breaking", "no longer required"),
    ("enum widened", [("          - value: EUR\n", "          - value: EUR\n          - value: GBP\n")],
     "non-breaking", "values added: 'GBP'"),
    ("enum narrowed", [("          - value: EUR\n", "")], "breaking", "values removed: 'EUR'"),
    ("enum value swapped", [("          - value: EUR\n", "          - value: GBP\n")], "breaking", "tightened and relaxed"),
    ("minimum raised", [("minimum: 0\n", "minimum: 10\n")], "breaking", "tightened"),
    ("minimum lowered", [("minimum: 0\n", "minimum: -10\n")], "non-breaking", "relaxed"),
    ("maximum lowered", [("maximum: 1000", "maximum: 500")], "breaking", "upper bound"),
    ("maximum raised", [("maximum: 1000", "maximum: 5000")], "non-breaking", "relaxed"),
    ("maximum removed", [("          maximum: 1000\n", "")], "non-breaking", "removed"),
    ("minimum added on a column", [(PRICE, PRICE + "        logicalTypeOptions:\n          minimum: 0\n")],
     "breaking", "new error rule"),
    ("date minimum earlier", [('minimum: "2020-01-01"', 'minimum: "2019-01-01"')], "non-breaking", "relaxed"),
    ("date minimum later", [('minimum: "2020-01-01"', 'minimum: "2021-06-01"')], "breaking", "tightened"),
    ("maxLength shorter", [("maxLength: 12", "maxLength: 8")], "breaking", "length upper bound"),
    ("maxLength longer", [("maxLength: 12", "maxLength: 20")], "non-breaking", "relaxed"),
    ("minLength raised", [("minLength: 4", "minLength: 6")], "breaking", "length lower bound"),
    ("pattern changed", [('pattern: "^O[0-9]+$"', 'pattern: "^O[0-9]{4,}$"')], "breaking", "regular expressions"),
    ("warning SQL changed", [("'web', 'app'", "'web'")], "non-breaking", "(a warning)"),
    ("error SQL changed", [("'web', 'app')\"\n            severity: warning", "'web')\"\n            severity: error")],
     "breaking", "now an error"),
    ("error custom SQL changed", [("implementation: \"channel IN ('web', 'app')\"\n            severity: warning",
                                   "implementation: \"upper(channel) IN ('WEB', 'APP')\"\n            severity: error")],
     "breaking", "two different SQL expressions"),
    ("query changed", [("placed_on > current_date()", "placed_on > date_add(current_date(), 1)")],
     "breaking", "two different SQL checks"),
    ("threshold loosened", [("mustBeLessThan: 5", "mustBeLessThan: 10")], "non-breaking", "loosened"),
    ("threshold tightened", [("mustBeLessThan: 5", "mustBeLessThan: 1")], "breaking", "tightened"),
    ("threshold unit changed", [("            unit: percent\n", "            unit: rows\n")], "breaking",
     "cannot be compared"),
    ("row count raised", [("mustBeGreaterThan: 0", "mustBeGreaterThan: 10")], "breaking", "tightened"),
    ("error rule made a warning", [("        mustBe: 0\n", "        mustBe: 0\n        severity: warning\n")],
     "non-breaking", "now a warning"),
    ("warning rule made an error", [("severity: warning", "severity: error")], "breaking", "now an error"),
    ("warning rule removed", [(CHANNEL_QUALITY, "")], "non-breaking", "removed"),
    ("error rule added", [(PRICE, PRICE + "        quality:\n          - type: library\n            metric: nullValues\n"
                                          "            mustBe: 0\n")], "breaking", "new error rule"),
    ("warning rule added", [(PRICE, PRICE + "        quality:\n          - type: library\n            metric: nullValues\n"
                                            "            mustBe: 0\n            severity: warning\n")],
     "non-breaking", "warning"),
    ("key changed", [("        description: Order number.\n", "        description: Order number.\n"
                                                               "        primaryKeyPosition: 1\n"),
                     ('          minimum: "2020-01-01"\n', '          minimum: "2020-01-01"\n'
                                                          "        primaryKey: true\n        primaryKeyPosition: 2\n")],
     "breaking", "business key"),
    ("publication mode changed", [(GATE, GATE + "      publication: {mode: replace_keys}\n")], "breaking",
     "publication.mode"),
    ("violations policy now rejects batches", [(GATE, "      violations:\n        policy: reject_batch\n")],
     "breaking", "rejected whole"),
    ("maxInvalidShare raised", [("maxInvalidShare: 0.2", "maxInvalidShare: 0.5")], "non-breaking", "fewer batches"),
    ("maxInvalidShare lowered", [("maxInvalidShare: 0.2", "maxInvalidShare: 0.1")], "breaking", "more batches"),
    ("schema policy additive", [(GATE, GATE + "      schemaPolicy: additive\n")], "non-breaking", "additive"),
    ("description only", [("Order number.", "The order number.")], "informational", "description"),
    ("purpose only", [("purpose: Orders placed at checkout.", "purpose: Checkout orders.")], "informational",
     "description.purpose"),
    ("tags only", [("tags: [sales]", "tags: [sales, checkout]")], "informational", "tags"),
    ("owner changed", [("username: ana", "username: bo")], "informational", 'team.members["ana"]'),
    ("SLA text changed", [("    value: 6\n", "    value: 12\n")], "informational", 'slaProperties["latency"].value'),
    ("classification added", [(PRICE, PRICE + "        classification: confidential\n")], "informational",
     "classification"),
    ("contract id changed", [("id: orders\n", "id: orders_v2\n")], "breaking", "another contract"),
]


@pytest.mark.parametrize(("replacements", "impact", "word"), [case[1:] for case in MATRIX],
                         ids=[case[0] for case in MATRIX])
def test_each_change_is_classified(replacements, impact, word):
    new = edited(BASE, ("version: 1.0.0", "version: 2.0.0"), *replacements)
    diff = diff_of(BASE, new)
    assert diff.changes, "no change found"
    worst = diff.changes[0]  # breaking first, then non-breaking, then informational
    assert worst.impact.value == impact, diff.changes
    assert any(word in f"{c.subject}: {c.message}" for c in diff.changes), diff.changes
    assert diff.version_problems == ()


def test_the_matrix_is_at_least_forty_pairs():
    assert len(MATRIX) >= 40


def test_no_change_no_problem():
    diff = diff_of(BASE, BASE)
    assert (diff.changes, diff.version_problems, diff.breaking) == ((), (), False)


@pytest.mark.parametrize(("old", "new", "type_", "expected"), [
    ("int", "bigint", "", "widened"), ("bigint", "int", "", "narrowed"), ("tinyint", "smallint", "", "widened"),
    ("decimal(10,2)", "decimal(12,3)", "", "widened"), ("decimal(12,3)", "decimal(10,2)", "", "narrowed"),
    ("decimal(10,2)", "decimal(12,1)", "", "changed"), ("string", "int", "", "narrowed"),
    ("int", "string", "", "widened"), ("int", "decimal(10,0)", "", "widened"), ("bigint", "decimal(10,0)", "", "narrowed"),
    ("date", "timestamp", "", "widened"), ("boolean", "date", "", "changed"), ("array<int>", "array<bigint>", "", "widened"),
    ("struct<a:int,b:string>", "struct<a:bigint,b:string>", "", "widened"),
    ("struct<a:int>", "struct<b:int>", "", "changed"), ("map<string,int>", "map<string,smallint>", "", "narrowed"),
    ("float", "double", "", "widened"), ("decimal(10,2)", "double", "", "changed"), ("binary", "string", "", "changed"),
])
def test_spark_type_lattice(old, new, type_, expected):
    assert type_change(old, new) == expected


# -- the version bump ---------------------------------------------------------------------------

def test_any_change_needs_a_new_version():
    new = edited(BASE, ("Order number.", "The order number."))
    assert diff_of(BASE, new).version_problems == (
        "the contract changed, so its version must go up: 1.0.0 -> 1.0.0",)
    assert diff_of(BASE, edited(new, ("version: 1.0.0", "version: 1.0.1"))).version_problems == ()
    assert diff_of(BASE, edited(new, ("version: 1.0.0", "version: 0.9.0"))).version_problems == (
        "the contract changed, so its version must go up: 1.0.0 -> 0.9.0",)


def test_a_breaking_change_needs_a_new_major_version():
    new = edited(BASE, (PRICE, ""), ("version: 1.0.0", "version: 1.1.0"))
    assert diff_of(BASE, new).version_problems == (
        "a breaking change needs a new major version: 1.0.0 -> 1.1.0 (e.g. 2.0.0)",)
    assert diff_of(BASE, edited(new, ("version: 1.1.0", "version: 2.0.0-rc.1"))).version_problems == ()


def test_a_version_that_is_not_semantic_only_has_to_differ():
    old = edited(BASE, ("version: 1.0.0", "version: 2024-03"))
    new = edited(old, (PRICE, ""))
    assert diff_of(old, new).version_problems == (
        "the contract changed but its version did not (2024-03); give it a new version",)
    assert diff_of(old, edited(new, ("version: 2024-03", "version: 2024-04"))).version_problems == ()


# -- the command --------------------------------------------------------------------------------

@pytest.fixture
def versions(tmp_path):
    """(old file, new file with a nullable column and an enum value, new file with a column removed)."""
    old = tmp_path / "old.yaml"
    old.write_text(BASE)
    harmless = tmp_path / "harmless.yaml"
    harmless.write_text(edited(BASE, ("version: 1.0.0", "version: 1.1.0"), (NOTE, ADDED_COLUMN),
                               ("          - value: EUR\n", "          - value: EUR\n          - value: JPY\n")))
    breaking = tmp_path / "breaking.yaml"
    breaking.write_text(edited(BASE, ("version: 1.0.0", "version: 2.0.0"), (PRICE, "")))
    return old, harmless, breaking


def test_exit_codes(versions, tmp_path):
    old, harmless, breaking = versions
    assert cli("diff", old, harmless).returncode == 0
    assert cli("diff", old, breaking).returncode == 1
    same_version = tmp_path / "same.yaml"
    same_version.write_text(edited(BASE, (NOTE, ADDED_COLUMN)))
    assert cli("diff", old, same_version).returncode == 1  # a change without a new version
    assert cli("diff", old, tmp_path / "missing.yaml").returncode == 2
    unparsable = tmp_path / "bad.yaml"
    unparsable.write_text(edited(BASE, ("physicalType: int\n", "physicalType: decimal(50,2)\n")))
    result = cli("diff", old, unparsable)
    assert (result.returncode, "does not compile" in result.stderr) == (2, True)
    assert cli("diff", old).returncode == 2


def test_text_format(versions):
    old, harmless, _ = versions
    result = cli("diff", old, harmless)
    lines = result.stdout.splitlines()
    assert lines[0] == f"{old} (orders 1.0.0) -> {harmless} (orders 1.1.0)"
    assert '  NON-BREAKING  orders: column "note": added, nullable, type string' in lines
    assert "  NON-BREAKING  orders: rule \"currency.enum\": relaxed: values added: 'JPY'" in lines
    assert lines[-2:] == ["version: ok", "0 breaking, 2 non-breaking, 0 informational"]


def test_json_format(versions):
    old, _, breaking = versions
    result = cli("diff", old, breaking, "--format", "json")
    document = json.loads(result.stdout)
    assert document["breaking"] is True
    assert document["counts"] == {"breaking": 1, "non-breaking": 0, "informational": 0}
    assert document["changes"] == [{"impact": "breaking", "object": "orders", "subject": 'column "price"',
                                    "message": "removed: consumers reading it break"}]
    assert (document["old"]["version"], document["new"]["version"], document["version_problems"]) == ("1.0.0", "2.0.0", [])


def test_markdown_format_is_a_table_and_keeps_contract_text_inert(versions, tmp_path):
    old, _, _ = versions
    hostile = tmp_path / "hostile.yaml"
    hostile.write_text(edited(BASE, ("version: 1.0.0", "version: 1.0.1"),
                              ("Order number.", '"| ![x](http://evil.example/x.png) <b>hi</b> `tick` \\u202e"')))
    result = cli("diff", old, hostile, "--format", "markdown")
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[0] == "### Contract ` orders `: ` 1.0.0 ` → ` 1.0.1 ` (no breaking change)"
    assert "| impact | object | what | change |" in lines
    row = next(line for line in lines if "description" in line)
    # the contract's text sits in a code span (no image, link or HTML), its pipe escaped, U+202E written out
    assert row.startswith("| informational | ` orders ` | ` schema[\"orders\"].properties[\"order_id\"].description ` | ``")
    assert "\\| ![x](http://evil.example/x.png) <b>hi</b> `tick` \\u202e" in row
    assert "\u202e" not in result.stdout


# -- path@gitref ---------------------------------------------------------------------------------

def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                   check=True, capture_output=True)


def test_path_at_git_ref(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    (repo / "contracts").mkdir(parents=True)
    git(repo, "init", "-q")
    contract = repo / "contracts" / "orders.yaml"
    contract.write_text(BASE)
    git(repo, "add", "contracts/orders.yaml")
    git(repo, "commit", "-q", "-m", "v1")
    contract.write_text(edited(BASE, ("version: 1.0.0", "version: 2.0.0"), (PRICE, "")))
    result = cli("diff", f"{contract}@HEAD", contract, "--format", "json")
    assert result.returncode == 1, result.stderr
    document = json.loads(result.stdout)
    assert document["old"] == {"file": f"{contract}@HEAD", "id": "orders", "version": "1.0.0"}
    assert [c["subject"] for c in document["changes"]] == ['column "price"']
    git(repo, "commit", "-q", "-am", "v2")
    monkeypatch.chdir(repo / "contracts")  # a relative path, from inside the repository
    assert json.loads(cli("diff", "orders.yaml@HEAD~1", "orders.yaml@HEAD", "--format", "json").stdout)["changes"]
    missing_ref = cli("diff", "orders.yaml@no-such-ref", "orders.yaml")
    assert (missing_ref.returncode, "no commit 'no-such-ref'" in missing_ref.stderr) == (2, True)
    missing_path = cli("diff", "gone.yaml@HEAD", "orders.yaml")
    assert (missing_path.returncode, "has no file gone.yaml" in missing_path.stderr) == (2, True)
    assert cli("diff", "orders.yaml@--output=x", "orders.yaml").returncode == 2
    outside = cli("diff", f"{tmp_path / 'elsewhere.yaml'}@HEAD", "orders.yaml")
    assert (outside.returncode, "not inside a git repository" in outside.stderr) == (2, True)
