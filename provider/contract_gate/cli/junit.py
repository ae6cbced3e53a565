"""JUnit XML for CI systems (``--junit FILE`` on ``lint`` and ``validate``).

One ``<testsuite>`` per contract file or validated dataset, one ``<testcase>`` per checked
thing. A failure carries a message the command already prints (rule ids, counts, YAML paths),
never a value from the data.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

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
    root = ET.Element("testsuites", name="contract-gate")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for suite in suites:
        counts = {"tests": len(suite.cases), "failures": sum(c.failure is not None for c in suite.cases),
                  "errors": 0, "skipped": sum(c.skipped is not None for c in suite.cases)}
        element = ET.SubElement(root, "testsuite", {"name": _xml(suite.name), **{k: str(v) for k, v in counts.items()}})
        for case in suite.cases:
            _case(element, suite.name, case)
        totals = {k: totals[k] + counts[k] for k in totals}
    root.attrib.update({k: str(v) for k, v in totals.items()})
    ET.indent(root)
    write_page(path, ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n")


def _case(suite: ET.Element, classname: str, case: Case) -> None:
    element = ET.SubElement(suite, "testcase", classname=_xml(classname), name=_xml(case.name), time="0")
    if case.failure is not None:
        ET.SubElement(element, "failure", message=_xml(case.failure.split("\n")[0]),
                      type="contract-gate").text = _xml(case.failure)
    if case.skipped is not None:
        ET.SubElement(element, "skipped", message=_xml(case.skipped))
    if case.output is not None:
        ET.SubElement(element, "system-out").text = _xml(case.output)


def _xml(text: str) -> str:
    return _NOT_XML.sub(lambda match: f"\\x{ord(match.group()):02x}", text)
