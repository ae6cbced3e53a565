"""The malformed-contract corpus (tests/contracts_bad/): every file fails with exactly the
expected errors, each naming the YAML path, the line and what is wrong; and linting the whole
folder reports every file separately, so one bad file never hides another."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from contract_gate.contract.compiler import compile_plan
from contract_gate.contract.errors import ContractError

BAD = Path(__file__).resolve().parent.parent / "contracts_bad"

# (file, YAML path, line, message) of every expected error, in the order lint reports them.
EXPECTED = [
    ('01_yaml_syntax_error.yaml', '', 19, "YAML syntax error: did not find expected ',' or ']'"),
    ('02_unsupported_api_version.yaml', 'apiVersion', 2, "unsupported apiVersion 'v2.2.2'; supported: v3.0.0, v3.0.1, v3.0.2, v3.1.0, v3.2.0"),
    ('03_unknown_gate_key.yaml', 'customProperties[0].value.retryCount', 21, "unknown gate setting 'retryCount'"),
    ('04_unknown_physical_type.yaml', 'schema[0].properties[1].physicalType', 17, "physicalType 'decimal(50,2)' has no Spark type in the Spark dialect (no server type): precision 50 is above Spark's 38 digits (the type tables: docs/contracts.md#types)"),
    ('05_minimum_above_maximum.yaml', 'schema[0].properties[1].logicalTypeOptions.minimum', 20, 'minimum 100 and maximum 10 admit no value'),
    ('07_duplicate_property_name.yaml', 'schema[0].properties[2].name', 19, "duplicate property name 'amount'"),
    ('08_duplicate_yaml_key.yaml', 'schema[0].properties[1].logicalTypeOptions.minimum', 21, 'duplicate key'),
    ('09_unknown_dqx_function.yaml', 'schema[0].properties[1].quality[0].implementation.check.function', 25, "a DQX check (unknown DQX function 'is_positive'; supported: is_in_list, is_in_range, is_not_empty, is_not_greater_than, is_not_in_range, is_not_less_than, is_not_null, is_not_null_and_is_in_list, is_not_null_and_not_empty, is_unique, is_valid_date, is_valid_timestamp, regex_match, sql_expression) cannot be run by the gate; set unsupportedChecks: warn in the contractGate settings to list it as not evaluated instead"),
    ('10_unknown_dqx_argument.yaml', 'schema[0].properties[1].quality[0].implementation.check.arguments.min', 28, 'unknown argument(s) for DQX function is_not_less_than: min; it takes column, limit'),
    ('11_enum_wrong_type.yaml', 'schema[0].properties[1].enum[1].value', 21, "enum value of the wrong type: expected a number (column type bigint), got 'one'"),
    ('12_unsafe_identifier.yaml', 'schema[0].properties[1].name', 16, "unsafe column name 'amount\\tusd': it must be non-empty, with no control characters, no '${' and no leading or trailing spaces"),
    ('13_sql_query_drop_table.yaml', 'schema[0].quality[0].query', 18, 'unsafe or invalid query: exactly one statement is allowed'),
    ('14_sql_query_insert.yaml', 'schema[0].quality[0].query', 18, 'unsafe or invalid query: a query must be one SELECT (or WITH ... SELECT)'),
    ('15_sql_query_comment.yaml', 'schema[0].quality[0].query', 18, 'unsafe or invalid query: comments are not allowed'),
    ('16_sql_query_reflect.yaml', 'schema[0].quality[0].query', 18, 'unsafe or invalid query: function reflect() is not allowed'),
    ('17_spark_sql_subquery.yaml', 'schema[0].properties[1].quality[0].implementation', 22, 'unsafe or invalid expression: a subquery is not allowed in a row expression'),
    ('18_spark_sql_semicolon.yaml', 'schema[0].properties[1].quality[0].implementation', 22, 'unsafe or invalid expression: exactly one statement is allowed'),
    ('19_unknown_metric.yaml', 'schema[0].properties[1].quality[0].metric', 20, "'averageValue' is not one of ['nullValues', 'missingValues', 'invalidValues', 'duplicateValues', 'rowCount']"),
    ('20_percent_over_100.yaml', 'schema[0].properties[1].quality[0].mustBeLessThan', 21, 'a percent threshold must be between 0 and 100, got 150'),
    ('21_must_be_between_reversed.yaml', 'schema[0].quality[0].mustBeBetween', 18, 'mustBeBetween needs the smaller number first, got [1000, 1]'),
    ('22_bad_severity.yaml', 'schema[0].properties[1].quality[0].severity', 22, "severity 'fatal' contradicts the DQX criticality 'warn'"),
    ('23_bad_sla_unit.yaml', 'slaProperties[0].unit', 22, "unknown SLA unit 'fortnights'; use one of d, day, days, h, hour, hours, hr, min, minute, minutes, s, sec, second, seconds, w, week, weeks"),
    ('24_sla_element_not_a_column.yaml', 'slaProperties[0].element', 23, "element 'readings.loaded_at' is not a column of 'readings'"),
    ('25_unknown_custom_engine.yaml', 'schema[0].properties[1].quality[0].engine', 21,
     "a check of engine 'soda' (the gate runs custom checks of engines spark-sql and dqx) cannot be run by the gate; "
     "set unsupportedChecks: warn in the contractGate settings to list it as not evaluated instead"),
    ('26_missing_logical_type.yaml', 'schema[0].properties[1]', 16, 'logicalType is required (string, date, timestamp, time, number, integer, object, array, boolean, map)'),
    ('27_split_share_without_split_rows.yaml', 'customProperties[0].value.violations', 21, "maxInvalidShare only applies to policy 'split_rows'"),
    ('29_unknown_placeholder.yaml', 'schema[0].quality[0].query', 18, 'unsafe or invalid query: unknown placeholder {other}; allowed: {object}'),
    ('30_spark_sql_table_subquery.yaml', 'schema[0].properties[1].quality[0].implementation', 22, 'unsafe or invalid expression: does not parse as Spark SQL: Expecting ) (line 1, column 28)'),
    ('31_dqx_filter_injection.yaml', 'schema[0].properties[1].quality[0].implementation.filter', 24, 'unsafe or invalid expression: exactly one statement is allowed'),
    ('32_decimal_out_of_range.yaml', 'schema[0].properties[1].physicalType', 17, "physicalType 'decimal(40,2)' has no Spark type in the Spark dialect (no server type): precision 40 is above Spark's 38 digits (the type tables: docs/contracts.md#types)"),
    ('33_min_length_above_max_length.yaml', 'schema[0].properties[1].logicalTypeOptions.minLength', 20, 'minLength 5 is above maxLength 2'),
    ('34_not_blank_unknown_mode.yaml', 'schema[0].properties[1].customProperties[0].value', 21, "notBlank must be one of whitespace, spaces, true or false, got 'tabs'"),
    ('35_duplicate_rule_id.yaml', 'schema[0].quality[1].id', 20, "duplicate rule id 'enough_rows': also used by schema[0].quality[0]"),
    ('36_row_count_percent.yaml', 'schema[0].quality[0].unit', 19, 'unit percent needs a count of rows to divide; this rule measures a number: use rows'),
    ('37_pattern_on_number.yaml', 'schema[0].properties[1].quality[0].arguments.pattern', 22, 'pattern applies to string columns, not double'),
    ('38_dqx_unknown_column.yaml', 'schema[0].quality[0].implementation.check.arguments.columns[1]', 24, "DQX check refers to unknown column 'meter_id'"),
    ('40_misspelt_gate_property.yaml', 'customProperties[0].property', 17, "unknown custom property 'contractgate'; did you mean 'contractGate'?"),
    ('41_not_a_mapping.yaml', '', 1, 'a contract must be a YAML mapping'),
    ('42_several_errors.yaml', 'schema[0].properties[1].physicalType', 17, "physicalType 'decimal(50,2)' has no Spark type in the Spark dialect (no server type): precision 50 is above Spark's 38 digits (the type tables: docs/contracts.md#types)"),
    ('42_several_errors.yaml', 'schema[0].properties[2].logicalTypeOptions.minimum', 23, 'expected a whole number (column type int), got 0.5'),
    ('42_several_errors.yaml', 'schema[0].properties[2].quality[0].name', 28, "rule id 'reading_id.required' is the generated id of the rule from schema[0].properties[0].required; choose another"),
    ('43_timestamp_bound_not_iso.yaml', 'schema[0].properties[1].logicalTypeOptions.minimum', 20, "expected an ISO timestamp (YYYY-MM-DDTHH:MM:SS[+HH:MM]), got '01/02/2020 10:00'"),
    ('44_dqx_in_list_number_for_string.yaml', 'schema[0].properties[1].quality[0].implementation.check.arguments.allowed[1]', 27, 'allowed values of a string column must be strings, got 978'),
    ('45_unsafe_yaml_tag.yaml', 'schema[0].description', 10, "YAML error: unsupported YAML tag 'tag:yaml.org,2002:python/object/apply:os.system'"),
    ('46_missing_id_and_version.yaml', '', 2, "'id' is a required property"),
    ('46_missing_id_and_version.yaml', '', 2, "'version' is a required property"),
]


def by_file() -> dict[str, list[tuple]]:
    grouped = defaultdict(list)
    for file, path, line, message in EXPECTED:
        grouped[file].append((path, line, message))
    return grouped


def test_corpus_has_at_least_25_files_and_every_file_is_covered():
    files = sorted(p.name for p in BAD.glob("*.yaml"))
    assert len(files) >= 25
    assert files == sorted(by_file())


@pytest.mark.parametrize("file, expected", sorted(by_file().items()))
def test_bad_contract_reports_exact_path_line_and_message(file, expected):
    with pytest.raises(ContractError) as caught:
        compile_plan(BAD / file)
    assert caught.value.file == str(BAD / file)
    assert [(i.path, i.line, i.message) for i in caught.value.issues] == expected


def test_linting_the_folder_gives_one_error_set_per_file():
    result = subprocess.run([sys.executable, "-m", "contract_gate.cli.main", "lint", str(BAD), "--json"],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 1, result.stderr
    contracts = json.loads(result.stdout)["contracts"]
    assert [Path(c["file"]).name for c in contracts] == sorted(by_file())
    for entry in contracts:
        assert entry["ok"] is False
        expected = by_file()[Path(entry["file"]).name]
        assert [(e["path"], e["line"], e["message"]) for e in entry["errors"]] == expected
