"""The hostile-contract corpus (tests/contracts_hostile/README.md): every file is refused by
``contract-gate lint`` with its file, line and YAML path, or is shown inert on real Spark.

Adding a file adds a test: each ``*.yaml`` there is read, whatever its area.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from contract_gate.cli.main import main
from contract_gate.contract.compiler import compile_plan
from contract_gate.contract.errors import ContractError

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = ROOT / "tests" / "contracts_hostile"
_ERROR = re.compile(r"^# expect-error: (?P<path>\S+) @ (?P<line>\d+) :: (?P<message>.+)$")


def _headers(path: Path) -> dict:
    """The comment lines at the top of a corpus file, by kind."""
    headers = {"attack": [], "expect-error": [], "expect": [], "proven-by": []}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        kind = line[2:].split(":", 1)[0]
        if kind == "expect-error":
            match = _ERROR.match(line)
            assert match, f"{path.name}: malformed header {line!r}"
            headers[kind].append((match["path"], int(match["line"]), match["message"].strip()))
        elif kind in headers:
            headers[kind].append(line.split(":", 1)[1].strip())
    return headers


FILES = sorted(HOSTILE.glob("*.yaml"))
REFUSED = [f for f in FILES if _headers(f)["expect-error"]]
INERT = [f for f in FILES if _headers(f)["expect"] == ["inert"]]


def test_the_corpus_is_complete_and_every_file_says_what_it_expects():
    assert len([f for f in FILES if f.name.startswith("sql_")]) >= 30
    for path in FILES:
        headers = _headers(path)
        assert headers["attack"], f"{path.name} says not what it attacks"
        assert bool(headers["expect-error"]) != (headers["expect"] == ["inert"]), \
            f"{path.name} must expect errors or be inert, not both or neither"
        if headers["expect"] == ["inert"]:
            assert headers["proven-by"], f"{path.name} is inert but names no test proving it"
            test_file, _, test_name = headers["proven-by"][0].partition("::")
            assert f"def {test_name}(" in (ROOT / test_file).read_text(encoding="utf-8"), \
                f"{path.name}: {headers['proven-by'][0]} does not exist"


@pytest.mark.parametrize("path", REFUSED, ids=[p.name for p in REFUSED])
def test_lint_refuses_with_file_line_and_yaml_path(path, capsys):
    expected = _headers(path)["expect-error"]
    with pytest.raises(ContractError) as caught:
        compile_plan(path)
    assert caught.value.file == str(path)
    found = [(issue.path, issue.line, issue.message) for issue in caught.value.issues]
    for yaml_path, line, message in expected:
        assert any(p == yaml_path and n == line and message in m for p, n, m in found), \
            f"{path.name}: no issue at {yaml_path} line {line} containing {message!r}; got {found}"
    assert main(["lint", str(path)]) == 1
    out = capsys.readouterr().out
    assert str(path) in out
    for yaml_path, line, _ in expected:
        assert f"line {line}: {yaml_path}:" in out


SQL_INERT = [p for p in INERT if p.name.startswith("sql_")]
SECRET = "CUST-SECRET-7731"


@pytest.mark.parametrize("path", SQL_INERT, ids=[p.name for p in SQL_INERT])
def test_inert_sql_contracts_run_on_spark(path, spark, tmp_path, caplog):
    """The contract compiles; on a real batch it creates no file, reads nothing but the batch,
    and no value of the batch reaches the report or the log."""
    from contract_gate_spark.validation.engine import run_validation
    from contract_gate_spark.validation.report import write_report
    from contract_gate_plan.sql_allowlist import query_counts

    plan = compile_plan(path).document
    rows = [("O-1", SECRET, 10.0), ("O-2", SECRET, -1.0)]
    df = spark.createDataFrame(rows, "order_id string, customer_id string, amount double")
    before = set(Path("/tmp").iterdir())
    report = run_validation(spark, plan, df)
    write_report(report, tmp_path / "report.json")
    text = (tmp_path / "report.json").read_text(encoding="utf-8")
    assert SECRET not in text and SECRET not in caplog.text
    assert "O-1" not in text and "O-2" not in text
    assert not any("pwned" in p.name for p in set(Path("/tmp").iterdir()) - before)
    assert report["candidate"]["row_count"] == 2
    contract_rules = [r for r in report["rules"] if r["kind"] in ("sql", "custom_sql")]
    assert contract_rules and all(r["status"] in ("evaluated", "not_evaluated") for r in contract_rules)
    queries = {r["id"]: r["query"] for r in plan["rules"] if r["kind"] == "sql"}
    for rule in contract_rules:
        if rule["kind"] == "sql":  # a count of rows, or no number at all: never a value
            assert rule["measured"] is None or query_counts(queries[rule["id"]], ["object"])

