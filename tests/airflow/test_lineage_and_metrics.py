"""OpenLineage events and StatsD metrics of real gate runs: a published regional batch, a rejected
one and its fixed re-run (and an orders batch split, whose events and metrics carry its own
contract), with the OpenLineage provider's file transport and a real StatsD UDP listener on
127.0.0.1. The runs are the session's ``connect_gate_world`` (tests/connect_gate_world.py: an
Airflow process of their own, the Spark work on the suite's Spark Connect server).

Every batch carries a marker value in its contract's classified column (``reporting_org`` and
``customer_id``): it must appear in no event and no metric.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # four gates in an Airflow process of their own

REGIONAL = "regional_daily_cases"
RULES_BROKEN_BY_BAD_ROWS = ["case_count.minimum", "status.enum"]  # regional_rows(bad=True)


@pytest.fixture(scope="module")
def gated(connect_gate_world):
    return connect_gate_world


def decision(gated, name):
    return gated["runs"][name]["decision"]


def metric(gated, name: str, contract: str = REGIONAL) -> list[tuple[dict, float, str]]:
    """(tags, value, type) of each packet of ``airflow.<name>`` tagged with ``contract``."""
    found = []
    for line in gated["metrics"]:
        head, _, rest = line.partition(":")
        stat, *tags = head.split(",")
        if stat != f"airflow.{name}":
            continue
        tagged = dict(tag.split("=", 1) for tag in tags)
        if tagged.get("contract") == contract:
            value, kind = rest.split("|")[:2]
            found.append((tagged, float(value), kind))
    return found


def seconds_between(later: str, earlier: str) -> float:
    return (datetime.fromisoformat(later) - datetime.fromisoformat(earlier)).total_seconds()


def test_the_runs_are_a_publication_a_rejection_and_a_published_rerun(gated):
    assert decision(gated, "published")["outcome"] == "published"
    assert decision(gated, "rejected")["outcome"] == "quarantined"
    assert sorted(decision(gated, "rejected")["failed_rules"]) == RULES_BROKEN_BY_BAD_ROWS
    assert decision(gated, "rerun")["outcome"] == "published"
    assert decision(gated, "rerun")["rerun_of"] == decision(gated, "rejected")["submission_id"]


def test_rejections_count_by_contract_and_rule(gated):
    assert sorted((tags["contract"], tags["rule"], value, kind)
                  for tags, value, kind in metric(gated, "contract_gate.rejections")) == [
        (REGIONAL, rule, 1.0, "c") for rule in RULES_BROKEN_BY_BAD_ROWS]
    # the split orders batch: its rows split off count under its own contract
    assert sorted((tags["rule"], value) for tags, value, _ in metric(gated, "contract_gate.rejections", "orders")) == [
        ("currency_allowed", 1.0), ("order_total_not_negative", 1.0)]


def test_receipt_to_publication_is_timed_for_each_publication(gated):
    timings = metric(gated, "contract_gate.receipt_to_publication")
    expected = [seconds_between(decision(gated, name)["decided_at"], gated["runs"][name]["submission"]["received_at"])
                for name in ("published", "rerun")]  # the rejected batch was never published
    assert [(tags, kind) for tags, _, kind in timings] == [({"contract": REGIONAL}, "ms")] * 2
    assert [value for _, value, _ in timings] == pytest.approx([1000 * s for s in expected], abs=1)
    assert all(value > 0 for _, value, _ in timings)


def test_time_to_resolve_runs_from_the_rejection_to_its_published_rerun(gated):
    (tags, value, kind), = metric(gated, "contract_gate.time_to_resolve")
    assert (tags, kind) == ({"contract": REGIONAL}, "ms")
    expected = seconds_between(decision(gated, "rerun")["decided_at"], decision(gated, "rejected")["decided_at"])
    assert value == pytest.approx(1000 * expected, abs=1)


def test_accepted_data_age_is_sent_at_each_publication(gated):
    ages = metric(gated, "contract_gate.accepted_data_age")
    assert [(tags, kind) for tags, _, kind in ages] == [({"contract": REGIONAL}, "g")] * 2
    # regional_rows report 2025-03-01..03; the data is as of the end of its latest day (freshness rules)
    as_of = datetime.fromisoformat("2025-03-04T00:00:00+00:00")
    for (_, value, _), name in zip(ages, ("published", "rerun")):
        decided = datetime.fromisoformat(decision(gated, name)["decided_at"])
        # measured just after the decision, in whole seconds (freshness ages are truncated)
        assert -1 < value - (decided - as_of).total_seconds() <= 120


def events_of(gated, task_id: str, event_type: str = "COMPLETE") -> list[dict]:
    return [e for e in gated["events"] if e["job"]["name"] == f"{REGIONAL}.{task_id}" and e["eventType"] == event_type]


def tags_of(facet_owner: dict) -> dict:
    return {tag["key"]: tag["value"] for tag in facet_owner["facets"]["tags"]["tags"]}


def test_lineage_of_a_published_gate(gated):
    home = Path(gated["home"])
    published = decision(gated, "published")
    validate, publish = (next(e for e in events_of(gated, task)
                              if tags_of(e["run"]).get("submission_id") == published["submission_id"])
                         for task in ("stage_validate", "publish"))
    (landing,) = validate["inputs"]
    assert (landing["namespace"], landing["name"]) == ("file", str(home / "lakehouse/landing/regional_daily_cases"))
    (candidate,) = validate["outputs"]
    assert candidate["name"] == published["candidate"]
    assert candidate["facets"]["version"]["datasetVersion"] == str(published["candidate_version"])

    (read,) = publish["inputs"]
    assert read["name"] == published["candidate"]
    schema = [(f["name"], f["type"]) for f in read["facets"]["schema"]["fields"]]
    assert schema == [("region_code", "string"), ("report_date", "date"), ("reporting_org", "string"),
                      ("case_count", "bigint"), ("status", "string")]
    assertions = read["inputFacets"]["dataQualityAssertions"]["assertions"]
    assert assertions and all(a["success"] is True for a in assertions)
    assert {"case_count.minimum", "status.enum", "region_code.required"} <= {a["name"] for a in assertions}
    (target,) = publish["outputs"]
    assert (target["namespace"], target["name"]) == ("file", str(home / "lakehouse/regional_daily_cases"))
    assert target["facets"]["version"]["datasetVersion"] == str(published["target_version_after"])
    assert tags_of(target) == {"contract": REGIONAL, "contract_version": "1.0.0",
                               "plan_fingerprint": published["plan_fingerprint"]}
    assert tags_of(publish["run"])["gate_outcome"] == "published"


def test_lineage_of_a_rejected_gate(gated):
    home = Path(gated["home"])
    rejected = decision(gated, "rejected")
    (quarantine,) = [e for e in events_of(gated, "quarantine")
                     if tags_of(e["run"]).get("submission_id") == rejected["submission_id"]]
    (read,) = quarantine["inputs"]
    results = {a["name"]: a["success"] for a in read["inputFacets"]["dataQualityAssertions"]["assertions"]}
    assert sorted(rule for rule, passed in results.items() if not passed) == RULES_BROKEN_BY_BAD_ROWS
    assert results["region_code.required"] is True
    for assertion in read["inputFacets"]["dataQualityAssertions"]["assertions"]:  # no expected/actual values
        assert set(assertion) <= {"assertion", "success", "column", "severity", "name", "params"}, assertion
        assert not assertion.get("params"), assertion
    (written,) = quarantine["outputs"]
    assert (written["namespace"], written["name"]) == ("file", str(home / "lakehouse/regional_daily_cases_quarantine"))
    assert tags_of(quarantine["run"])["gate_outcome"] == "quarantined"
    # the target was not written by the rejected run: no publish event carries its submission
    assert not [e for e in events_of(gated, "publish") if tags_of(e["run"]).get("submission_id")
                == rejected["submission_id"]]


def test_no_classified_value_reaches_an_event_or_a_metric(gated):
    assert gated["events"] and gated["metrics"]
    assert gated["marker"] not in gated["events_text"]
    assert not [line for line in gated["metrics"] if gated["marker"] in line]
