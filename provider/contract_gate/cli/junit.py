"""JUnit XML for CI systems (``--junit FILE`` on ``lint`` and ``validate``).

Written with junitparser. One ``<testsuite>`` per contract file or validated dataset, one ``<testcase>`` per checked
thing. A failure carries a message the command already prints (rule ids, counts, YAML paths),
never a value from the data.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from junitparser import Failure, JUnitXml, Skipped, TestCase, TestSuite

from contract_gate.cli.report_cmd import write_page


# Characters XML 1.0 cannot hold at all, even escaped; a contract may put them in a name or message.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


@dataclass(frozen=True)
class Case:
    name: str
    failure: str | None = None  # why it failed
    skipped: str | None = None  # why it was not checked
    output: str | None = None  # a note on a case that passed (a warning)


@dataclass
class Suite:
    name: str
    cases: list[Case] = field(default_factory=list)


def write_junit(path: Path, suites: list[Suite]) -> None:
    """Write ``suites`` as one JUnit XML document."""
    document = JUnitXml("contract-gate")
    for suite in suites:
        written = TestSuite(_xml(suite.name))
        written.add_testcases([_case(suite.name, case) for case in suite.cases])
        document.add_testsuite(written)
    document.update_statistics()
    write_page(path, "<?xml version='1.0' encoding='utf-8'?>\n" + document.tostring().decode("utf-8") + "\n")


def _case(classname: str, case: Case) -> TestCase:
    written = TestCase(_xml(case.name), _xml(classname), 0)
    if case.failure is not None:
        failure = Failure(_xml(case.failure.split("\n")[0]), "contract-gate")
        failure.text = _xml(case.failure)
        written.result = [failure]
    if case.skipped is not None:
        written.result = [Skipped(_xml(case.skipped))]
    if case.output is not None:
        written.system_out = _xml(case.output)
    return written


def _xml(text: str) -> str:
    return _NOT_XML.sub(lambda match: f"\\x{ord(match.group()):02x}", text)
