"""A catalog-table landing whose storage location the catalog gives is known by the version of its
own Delta log, read with ``deltalake``, without a SQL warehouse: the location (and, for cloud
storage, temporary credentials) come from Unity Catalog's tables API through the gate's
``DatabricksWorkspaceHook`` (``databricks-sdk``).

The catalog is a local emulation of the two Unity Catalog endpoints on 127.0.0.1, at the paths the
installed SDK calls, reading each request with the SDK's own models (``jobs_api_emulator.sdk_request``),
over real Delta tables: one in a local folder, one in a bucket of the moto S3
server whose temporary credentials are the server's keys.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

import pyarrow as pa
import pytest
from jobs_api_emulator import sdk_request
from _s3_server import KEY, REGION, SECRET
from databricks.sdk.service.catalog import TablesAPI, TemporaryTableCredentialsAPI
from deltalake import write_deltalake

from contract_gate.landing_batches import Watch, landed_batch
from contract_gate.landing_tables import TableStorage, catalog_version, delta_rs_options, table_storage
from contract_gate.submission import delta_digest, submission_id_of

CONNECTION = "uc_catalog_emulator"
ROWS = pa.table({"region": ["R1", "R2"], "cases": [3, 4]})


class UnityCatalogEmulator:
    """``GET /api/2.1/unity-catalog/tables/<full_name>`` and ``POST
    /api/2.0/unity-catalog/temporary-table-credentials`` over registered tables (the SDK's
    probe of the host's configuration is answered 404, as by a workspace without one)."""

    def __init__(self) -> None:
        self.tables: dict[str, dict] = {}
        self.credentials: dict[str, dict] = {}  # table_id -> the temporary credentials response
        self.requests: list[str] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.port = self._server.server_address[1]

    def register(self, full_name: str, location: str | None, credentials: dict | None = None) -> None:
        table_id = f"id-{len(self.tables)}"
        self.tables[full_name] = {"full_name": full_name, "table_id": table_id, "data_source_format": "DELTA",
                                  "table_type": "EXTERNAL", **({"storage_location": location} if location else {})}
        if credentials is not None:
            self.credentials[table_id] = credentials

    def connection(self) -> str:
        return json.dumps({"conn_type": "databricks", "host": "127.0.0.1", "port": self.port, "schema": "http",
                           "extra": {"token": "emulated"}})

    def __enter__(self) -> UnityCatalogEmulator:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()

    def _handler(self):
        emulator = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def _reply(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                path = urlsplit(self.path).path
                if not path.startswith("/api/"):
                    self._reply(404, {"error_code": "NOT_FOUND", "message": path})
                    return
                emulator.requests.append(f"GET {path}")
                prefix = "/api/2.1/unity-catalog/tables/"
                name = unquote(path.removeprefix(prefix))
                query = {key: values[0] for key, values in parse_qs(urlsplit(self.path).query).items()}
                sdk_request(TablesAPI.get, {"full_name": name, **query})
                if not path.startswith(prefix):
                    self._reply(404, {"error_code": "ENDPOINT_NOT_FOUND", "message": path})
                elif name in emulator.tables:
                    self._reply(200, emulator.tables[name])
                else:
                    self._reply(404, {"error_code": "TABLE_DOES_NOT_EXIST", "message": f"Table '{name}' does not exist."})

            def do_POST(self):
                path = urlsplit(self.path).path
                emulator.requests.append(f"POST {path}")
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                sdk_request(TemporaryTableCredentialsAPI.generate_temporary_table_credentials, body)
                granted = emulator.credentials.get(body.get("table_id"))
                if path == "/api/2.0/unity-catalog/temporary-table-credentials" and body.get("operation") == "READ" and granted:
                    self._reply(200, granted)
                else:
                    self._reply(403, {"error_code": "PERMISSION_DENIED", "message": "no credentials"})

        return Handler


@pytest.fixture
def catalog(monkeypatch):
    with UnityCatalogEmulator() as emulator:
        monkeypatch.setenv(f"AIRFLOW_CONN_{CONNECTION.upper()}", emulator.connection())
        yield emulator


def landing(name: str) -> dict:
    return {"kind": "table", "name": name, "format": "delta", "connection": CONNECTION}


def test_a_catalog_landing_with_a_location_is_known_by_its_delta_log(catalog, tmp_path):
    folder = tmp_path / "drops_cases"
    catalog.register("main.drops.cases", f"file://{folder}")
    write_deltalake(str(folder), ROWS)
    assert catalog_version(landing("main.drops.cases")) == 0
    write_deltalake(str(folder), ROWS, mode="append")
    assert catalog_version(landing("main.drops.cases")) == 1
    assert catalog_version(landing("main.drops.missing")) is None  # nothing has landed
    # the catalog's API only: no statement for a warehouse, no credentials for a local table
    assert set(catalog.requests) == {"GET /api/2.1/unity-catalog/tables/main.drops.cases",
                                     "GET /api/2.1/unity-catalog/tables/main.drops.missing"}

    # the landing watch (sensor and trigger) sees the version as the batch
    watch = Watch(contract_id="cases", landing=landing("main.drops.cases"),
                  decisions={"kind": "path", "path": str(tmp_path / "decisions"), "format": "delta"})
    batch = landed_batch(watch)
    assert batch.delta_version == 1 and batch.kind == "delta"
    assert batch.submission_id == submission_id_of("cases", delta_digest(1))


def test_temporary_table_credentials_reach_delta_rs_for_a_table_in_s3(catalog, s3_server, monkeypatch):
    bucket = "cg-uc-landing"
    s3_server.client().create_bucket(Bucket=bucket)
    # the S3-compatible server's address; the keys come from the catalog's temporary credentials only
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_server.endpoint)
    monkeypatch.setenv("AWS_REGION", REGION)
    monkeypatch.setenv("AWS_ALLOW_HTTP", "true")
    location = f"s3://{bucket}/drops/cases"
    write_deltalake(location, ROWS, storage_options={"AWS_ACCESS_KEY_ID": KEY, "AWS_SECRET_ACCESS_KEY": SECRET})
    catalog.register("main.drops.cases_s3", location,
                     {"aws_temp_credentials": {"access_key_id": KEY, "secret_access_key": SECRET,
                                               "session_token": "temporary"},
                      "expiration_time": 4102444800000, "url": location})
    assert catalog_version(landing("main.drops.cases_s3")) == 0
    assert catalog.requests[-1] == "POST /api/2.0/unity-catalog/temporary-table-credentials"
    storage = table_storage(landing_address("main.drops.cases_s3"), _hook())
    assert SECRET not in repr(storage)  # the short-lived keys are never printed


def landing_address(name: str):
    from contract_gate_plan.addresses import Address

    return Address.of(landing(name))


def _hook():
    from contract_gate.hooks.databricks import DatabricksWorkspaceHook

    return DatabricksWorkspaceHook(CONNECTION)


def test_a_table_without_a_location_the_catalog_gives_is_left_to_the_warehouse(catalog):
    catalog.register("main.drops.cases_view", None)
    assert table_storage(landing_address("main.drops.cases_view"), _hook()) is None
    for name in ("hive_metastore.drops.cases", "drops.cases"):  # no Unity Catalog location to ask for
        assert table_storage(landing_address(name), _hook()) is None
    assert catalog.requests == ["GET /api/2.1/unity-catalog/tables/main.drops.cases_view"]


def test_unity_catalogs_credential_kinds_as_delta_rs_options():
    assert delta_rs_options({"azure_user_delegation_sas": {"sas_token": "sv=1&sig=x"}}) == {
        "AZURE_STORAGE_SAS_TOKEN": "sv=1&sig=x"}
    assert delta_rs_options({"aws_temp_credentials": {"access_key_id": "a", "secret_access_key": "s"}}) == {
        "AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "s"}
    assert delta_rs_options({"gcp_oauth_token": {"oauth_token": "t"}}) is None  # the warehouse is asked
    assert TableStorage("s3://b/t", {"AWS_SECRET_ACCESS_KEY": "s"}).__repr__() == "TableStorage(location='s3://b/t')"
