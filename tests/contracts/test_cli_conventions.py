"""What every ``contract-gate`` command shares, without Spark or Airflow: ``--version``, JUnit XML
from ``lint``, ``--json`` errors, ``--input-format`` with ``--format`` as a deprecated alias, and a
progress line only on a terminal."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from importlib.metadata import version
from pathlib import Path

import pytest

from contract_gate.cli.junit import Case, Suite, write_junit
from contract_gate.cli.main import build_parser, main
from contract_gate.cli.progress import progress

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "contracts"
BAD = ROOT / "tests" / "contracts_bad"


def cli(*args) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


def test_version_is_the_installed_distributions():
    expected = f"contract-gate {version('airflow-provider-contract-gate')}\n"
    assert cli("--version") == (0, expected, "")
    done = subprocess.run([str(Path(sys.executable).parent / "contract-gate"), "--version"],
                          capture_output=True, text=True, check=False)
    assert (done.returncode, done.stdout, done.stderr) == (0, expected, "")


def test_lint_junit_has_one_case_per_gated_object(tmp_path):
    report = tmp_path / "ci" / "lint.xml"
    code, out, _ = cli("lint", EXAMPLES, "--junit", report)

    assert code == 0 and "<?xml" not in out  # the XML goes to the file only
    root = ET.parse(report).getroot()
    cases = {(case.get("classname"), case.get("name")) for case in root.iter("testcase")}
    assert cases == {(str(EXAMPLES / f"{name}.yaml"), name) for name in ("meter_readings", "orders", "regional_daily_cases")}
    assert (root.get("tests"), root.get("failures")) == ("3", "0")
    assert not list(root.iter("failure"))


def test_lint_junit_fails_each_broken_contract_with_its_messages(tmp_path):
    report = tmp_path / "lint.xml"
    code, out, _ = cli("lint", BAD, "--junit", report, "--json")

    assert code == 1
    results = json.loads(out)["contracts"]
    suites = ET.parse(report).getroot().findall("testsuite")
    assert [suite.get("name") for suite in suites] == [result["file"] for result in results]
    for suite, result in zip(suites, results):
        failure = suite.find("testcase/failure")
        assert failure is not None and suite.get("failures") == "1", result["file"]
        first = result["errors"][0]
        assert failure.get("message") == f"line {first['line'] or '-'}: {first['path'] or '<document>'}: {first['message']}"
        assert len(failure.text.splitlines()) == len(result["errors"])


def test_lint_junit_skips_an_object_that_is_not_gated(tmp_path):
    report = tmp_path / "lint.xml"
    code, _, _ = cli("lint", ROOT / "tests" / "contracts_real" / "multi_one_gated_one_documented.yaml", "--junit", report)

    assert code == 0
    cases = {case.get("name"): case for case in ET.parse(report).getroot().iter("testcase")}
    assert set(cases) == {"stock_positions", "stock_positions_latest"}
    assert cases["stock_positions_latest"].find("skipped").get("message").startswith("not gated: ")
    assert cases["stock_positions"].find("skipped") is None


def test_junit_xml_holds_any_text_a_contract_carries(tmp_path):
    hostile = "rule \x00\x1b]0;title\x07 <&> \"' é 🙂"
    write_junit(tmp_path / "j.xml", [Suite(hostile, [Case(hostile, failure=f"{hostile}\nsecond line"),
                                                     Case("ok", output=hostile), Case("s", skipped=hostile)])])
    suite = ET.parse(tmp_path / "j.xml").getroot().find("testsuite")  # parses: no character XML forbids

    assert suite.get("name") == "rule \\x00\\x1b]0;title\\x07 <&> \"' é 🙂"
    assert suite.find("testcase/failure").get("message") == suite.get("name")
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("3", "1", "1")


@pytest.mark.parametrize("command", ["validate", "run", "rerun"])
def test_format_is_a_deprecated_alias_of_input_format(command, capsys):
    positional = {"validate": ["c.yaml", "--data", "d"], "run": ["c.yaml"], "rerun": ["c.yaml", "s1"]}[command]
    parser = build_parser(command)

    new = parser.parse_args([command, *positional, "--input-format", "parquet"])
    assert new.input_format == "parquet" and capsys.readouterr().err == ""
    old = parser.parse_args([command, *positional, "--format", "parquet"])
    assert old.input_format == "parquet"
    err = capsys.readouterr().err
    assert "--format is deprecated" in err and "use --input-format" in err
    with pytest.raises(SystemExit):
        parser.parse_args([command, *positional, "--format", "xlsx"])  # the alias checks choices too


def test_json_errors_are_one_json_document_on_stdout(tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text("apiVersion: v3.0.0\nkind: DataContract\n")
    for args in (["validate", broken, "--data", tmp_path, "--json"], ["run", tmp_path / "missing.yaml", "--json"],
                 ["rerun", tmp_path / "missing.yaml", "s1", "--json"]):
        code, out, err = cli(*args)
        assert code == 2, args
        assert set(json.loads(out)) == {"error"} and err == "", args


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_draws_on_a_terminal_and_clears_its_line():
    terminal = _Terminal()
    with progress("starting Spark", stream=terminal) as shown:
        shown.step("validating")
    written = terminal.getvalue()

    assert "contract-gate: starting Spark" in written and "contract-gate: validating" in written
    assert "0:00:0" in written  # the seconds waited
    assert written.endswith("\x1b[2K")  # the line is erased at the end


def test_no_progress_when_piped_or_verbose():
    piped, verbose = io.StringIO(), _Terminal()
    with progress("starting Spark", stream=piped) as shown:
        shown.step("validating")
    with progress("starting Spark", verbose=True, stream=verbose):
        pass
    assert piped.getvalue() == "" and verbose.getvalue() == ""
