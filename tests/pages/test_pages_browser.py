"""The gate's pages in a real browser (Chromium, driven by Playwright) against a real ``airflow
api-server`` with the plugin, after three real gates: regional_daily_cases published, orders
split, meter_readings quarantined (``_pages_world.py``, a process of its own, its Spark work on
the session's Spark Connect server).

The api-server runs on 127.0.0.1 on a free port with the simple auth manager in multi-team mode:
``producer`` is in the team that owns the gate DAGs' bundle, ``outsider`` in another team, so
Airflow's own auth manager lets only the first read the gate DAGs. Every user signs in through
Airflow's login page. Screenshots of both pages go to a temporary folder, or to docs/img/ (shown
in the README) when ``CONTRACT_GATE_SCREENSHOTS=docs/img`` asks for them.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path
from urllib.error import URLError
from urllib.parse import quote

import pytest
from waiting import wait_until

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS_ENV = "CONTRACT_GATE_SCREENSHOTS"  # e.g. docs/img, to refresh the README's screenshots
REUSED_WORLD_ENV = "CONTRACT_GATE_PAGES_WORLD"
PASSWORDS = {"producer": "producer-pw-1", "outsider": "outsider-pw-2"}
STATES = {"regional_daily_cases": "fresh", "orders": "fresh", "meter_readings": "no SLA"}
OUTCOMES = {"regional_daily_cases": "published", "orders": "split", "meter_readings": "quarantined"}


@pytest.fixture(scope="module")
def world(tmp_path_factory, spark_connect_server) -> dict:
    """Three gates run in their own Airflow world; what they decided. ``CONTRACT_GATE_PAGES_WORLD``
    names the result file of a world built before (``python tests/pages/_pages_world.py FILE``,
    several minutes) to work on the pages without building it again."""
    if os.environ.get(REUSED_WORLD_ENV):
        return json.loads(Path(os.environ[REUSED_WORLD_ENV]).read_text())
    result = tmp_path_factory.mktemp("pages") / "world.json"
    log = result.with_name("world.log")
    env = {**os.environ, "AIRFLOW_CONN_SPARK_CONNECT_DEFAULT": spark_connect_server.connection(),
           "CONTRACT_GATE_TEST_WORLD_DIR": str(result.parent)}
    with log.open("w") as output:
        done = subprocess.run([sys.executable, str(Path(__file__).with_name("_pages_world.py")), str(result)],
                              stdout=output, stderr=subprocess.STDOUT, timeout=1800, cwd=REPO, env=env)
    assert done.returncode == 0, f"the gate world failed; see {log}:\n{log.read_text()[-4000:]}"
    built = json.loads(result.read_text())
    assert {run["contract_id"]: run["decision"]["outcome"] for run in built["runs"]} == OUTCOMES
    return built


@pytest.fixture(scope="module")
def server(world, tmp_path_factory):
    """``airflow api-server`` with the plugin (its entry point), on a free port; stopped after."""
    port = free_port()
    env = {**os.environ, **world["airflow_env"], "CONTRACT_GATE_HOME": world["home"],
           "CONTRACT_GATE_CONTRACTS_DIR": world["contracts"]}
    home = Path(world["airflow_env"]["AIRFLOW_HOME"])
    # the simple auth manager keeps its users' passwords here (it generates missing ones)
    (home / "simple_auth_manager_passwords.json.generated").write_text(json.dumps(PASSWORDS))
    log = tmp_path_factory.mktemp("api-server") / "api-server.log"
    with log.open("w") as output:
        process = subprocess.Popen([str(Path(sys.executable).with_name("airflow")), "api-server", "-H", "127.0.0.1",
                                    "-p", str(port), "-w", "1"], env=env, stdout=output, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: up(base, process, log), timeout=180, interval=0.5, message="the api-server answering")
        yield base
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@pytest.fixture(scope="module")
def images(tmp_path_factory) -> Path:
    """Where the screenshots go: the folder ``CONTRACT_GATE_SCREENSHOTS`` names (relative to the
    repository), else a temporary one, so that a test run leaves the checkout as it was."""
    if os.environ.get(SCREENSHOTS_ENV):
        folder = REPO / os.environ[SCREENSHOTS_ENV]
        folder.mkdir(parents=True, exist_ok=True)
        return folder
    return tmp_path_factory.mktemp("screenshots")


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium")
    assert chromium, "the browser tests need Debian's chromium (scripts/test.sh installs it)"
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
        yield launched
        launched.close()


class Session:
    """A signed-in browser context that keeps the body of every response it received."""

    def __init__(self, browser, base: str, user: str | None):
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.bodies: list[tuple[str, bytes]] = []
        self.context.on("response", self._keep)
        self.page = self.context.new_page()
        self.base = base
        if user is not None:
            self.page.goto(f"{base}/auth/login")
            self.page.get_by_label("Username").fill(user)
            self.page.get_by_label("Password").fill(PASSWORDS[user])
            self.page.get_by_role("button", name="Sign in").click()
            self.page.wait_for_url(lambda url: "/auth/login" not in url)

    def _keep(self, response) -> None:
        try:
            self.bodies.append((response.url, response.body()))
        except Exception:  # a redirect or an aborted request has no body
            self.bodies.append((response.url, b""))

    def report_via_extra_link(self, run: dict):
        """From the gate task's page in the Airflow UI, follow its "Gate report" link."""
        page = self.page
        page.goto(f"{self.base}/dags/{run['dag_id']}/runs/{quote(run['run_id'], safe='')}/tasks/stage_validate/details")
        page.get_by_role("link", name="Gate report").click()
        page.wait_for_url("**/contract-gate/contracts/**")
        return page

    def close(self) -> None:
        self.context.close()


def test_contracts_page_in_the_airflow_ui_lists_the_three_gates(server, world, browser, images):
    session = Session(browser, server, "producer")
    page = session.page
    page.goto(f"{server}/")
    page.get_by_text("Browse", exact=True).click()
    page.get_by_text("Data contracts", exact=True).click()
    page.wait_for_url("**/plugin/contract-gate")
    frame = page.frame_locator("iframe[title='Data contracts']")
    frame.locator("section.contract").first.wait_for()
    cards = {card.get_attribute("data-contract"): card for card in frame.locator("section.contract").all()}
    assert sorted(cards) == sorted(OUTCOMES)
    for contract_id, card in cards.items():
        assert card.locator(".freshness .badge").inner_text() == STATES[contract_id]
        counts = {c.get_attribute("data-outcome"): int(c.locator(".count").inner_text())
                  for c in card.locator(".counts [data-outcome]").all()}
        expected = {outcome: int(outcome == OUTCOMES[contract_id]) for outcome in counts}
        assert counts == expected and set(counts) == {"published", "split", "quarantined", "failed"}
        submission = next(r["decision"]["submission_id"] for r in world["runs"] if r["contract_id"] == contract_id)
        assert card.locator(f"tr[data-submission='{submission}']").count() == 1
        bars = {bar.get_attribute("data-rule"): (int(bar.get_attribute("data-submissions")), int(bar.get_attribute("data-rows")))
                for bar in card.locator("g.bar").all()}
        decision = next(r["decision"] for r in world["runs"] if r["contract_id"] == contract_id)
        assert bars == {rule: (1, rows) for rule, rows in decision["rule_failures"].items()}
    assert cards["orders"].locator("g.bar").count() == 2  # the chart is drawn, as SVG
    page.screenshot(path=str(images / "contracts-page.png"))
    # the DAG page's "Gate reports" tab: the contract whose gate DAG it is, only
    page.goto(f"{server}/dags/orders")
    page.get_by_role("link", name="Gate reports").click()
    page.wait_for_url("**/dags/orders/plugin/contract-gate-dag")
    tab = page.frame_locator("iframe[title='Gate reports']")
    tab.locator("section.contract").first.wait_for()
    assert [card.get_attribute("data-contract") for card in tab.locator("section.contract").all()] == ["orders"]
    session.close()


@pytest.mark.parametrize("contract_id", sorted(OUTCOMES))
def test_extra_link_of_the_gate_task_opens_its_report_with_exact_counts(server, world, browser, images, contract_id):
    run = next(r for r in world["runs"] if r["contract_id"] == contract_id)
    decision = run["decision"]
    session = Session(browser, server, "producer")
    page = session.report_via_extra_link(run)
    assert page.locator("#submission-id").inner_text() == decision["submission_id"]
    assert page.locator("#contract-id").inner_text() == contract_id
    assert page.locator("h1 .badge").inner_text() == OUTCOMES[contract_id]
    failing = {row.get_attribute("data-rule"): int(row.locator(".failed-rows").inner_text().replace(",", ""))
               for row in page.locator("#rules tr.failing").all()}
    assert failing == decision["rule_failures"]
    # failing rules come first
    first = [row.get_attribute("data-rule") for row in page.locator("#rules tbody tr").all()][:len(failing)]
    assert set(first) == set(failing)
    assert int(page.locator("#rows-published").inner_text()) == decision["rows_published"]
    assert int(page.locator("#rows-quarantined").inner_text()) == decision["rows_quarantined"]
    assert f"_submission_id = '{decision['submission_id']}'" in page.locator("#quarantine-query").inner_text()
    assert decision["submission_id"] in page.locator("#rerun-command").inner_text()
    if contract_id == "orders":
        page.screenshot(path=str(images / "report-page.png"), full_page=True)
    session.close()


def test_a_user_who_cannot_read_the_dag_is_refused(server, world, browser):
    session = Session(browser, server, "outsider")
    page = session.page
    # Airflow's own API refuses this user the gate DAG: the pages must agree
    assert page.goto(f"{server}/api/v2/dags/orders").status == 403
    listed = page.goto(f"{server}/contract-gate/")
    assert listed.status == 200 and page.locator("section.contract").count() == 0
    for run in world["runs"]:
        response = page.goto(f"{server}/contract-gate/contracts/{run['contract_id']}/submissions/"
                             f"{run['decision']['submission_id']}")
        assert response.status == 403
        assert run["decision"]["submission_id"] not in page.content()
    session.close()
    anonymous = Session(browser, server, None)
    assert anonymous.page.goto(f"{server}/contract-gate/").status == 401
    anonymous.page.get_by_role("link", name="Sign in to Airflow").click()
    anonymous.page.get_by_label("Username").wait_for()  # Airflow's own sign-in page
    anonymous.close()


def test_no_classified_value_in_any_response(server, world, browser):
    marker = world["marker"].encode()
    # the marker is in the data the gates judged, so the grep below could find it
    from deltalake import DeltaTable

    quarantined = DeltaTable(str(Path(world["home"]) / "lakehouse" / "orders_quarantine")).to_pyarrow_table()
    assert marker.decode() in quarantined.column("customer_id").to_pylist()
    session = Session(browser, server, "producer")
    page = session.page
    page.goto(f"{server}/contract-gate/?last=1000")
    for run in world["runs"]:
        session.report_via_extra_link(run)
        page.goto(f"{server}/dags/{run['dag_id']}/runs/{quote(run['run_id'], safe='')}/tasks/record_decision")
        page.wait_for_load_state("networkidle")
    page.goto(f"{server}/dags/regional_daily_cases/details")
    page.wait_for_load_state("networkidle")
    session.close()
    pages = [url for url, _ in session.bodies if "/contract-gate/" in url]
    assert len(pages) >= 4  # the contracts page and the three reports were fetched and grepped
    leaked = [url for url, body in session.bodies if marker in body]
    assert leaked == []


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def up(base: str, process: subprocess.Popen, log: Path) -> bool:
    if process.poll() is not None:
        raise RuntimeError(f"the api-server exited ({process.returncode}):\n{log.read_text()[-3000:]}")
    try:
        with urllib.request.urlopen(f"{base}/api/v2/version", timeout=2) as response:
            return response.status == 200
    except (URLError, OSError):
        return False
