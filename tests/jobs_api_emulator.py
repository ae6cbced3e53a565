"""A local emulation of the Databricks REST endpoints the ``databricks`` mode uses, on 127.0.0.1,
speaking the installed ``databricks-sdk``'s own request and response models.

Every request is read against the SDK: its fields must be parameters of the SDK method that
sends it (``JobsAPI.submit``, ``JobsAPI.cancel_run``, ``JobsAPI.get_run``, ``JobsAPI.list_runs``,
``JobsAPI.get_run_output``, ``FilesAPI.upload``, ``StatementExecutionAPI.execute_statement``),
and every structured value is parsed with the SDK's dataclass for it (``jobs.SubmitTask``,
``jobs.JobEnvironment``, ``compute.Library``, ``compute.ClusterSpec`` inside them, SQL enums...)
and must read back unchanged (``from_dict(x).as_dict() == x``), so a field the SDK does not know
is refused (400) and recorded in ``rejected``, and leaving the emulator with a rejected request
fails the test. Responses are built with the SDK's models too (``jobs.Run``, ``jobs.RunOutput``,
``sql.StatementResponse``). This installed SDK has no dataclass for a whole request body, hence
the method signatures. The SDK's optional probes (the host's ``/.well-known`` configuration, the
Files API's transfer endpoints and download URLs) are answered 404, as by a workspace without them.

Emulated: the Files API on Unity Catalog volumes (``PUT``/``GET``/``HEAD``/``DELETE
/api/2.0/fs/files/Volumes/...``; ``GET`` (list) and ``DELETE`` (only when empty, as Databricks
refuses a non-empty one) ``/api/2.0/fs/directories/Volumes/...``; a volume must be registered in
``volumes`` first, as it exists in a metastore), one-time runs of
a ``python_wheel_task`` (the wheel, a task library on a cluster or a dependency of a serverless
environment, is read from the volume, unpacked, and its entry point run: on an existing or a job
cluster as a local-mode spark-submit, as a single-node cluster would; on serverless as a Spark
Connect client of ``connect_url``, the only Spark serverless has), ``/Volumes/...`` parameters
mapped to the emulated volumes' folder, a run's ``timeout_seconds`` (from submission: the run
ends ``TIMEDOUT``), ``runs/cancel``, ``runs/list`` (the one-time runs, all or the active ones,
paged), and the SQL warehouse's Unity Catalog statements (``GRANT``, ``REVOKE``, ``SHOW GRANTS``,
parsed with Databricks' identifier quoting and kept in an emulated grant table; objects must be
registered in ``catalog_objects`` first).
Not emulated: authentication (any bearer token is accepted), cluster sizes, repairs.
"""

from __future__ import annotations

import enum
import itertools
import json
import os
import re
import subprocess
import sys
import threading
import time
import typing
import zipfile
from collections import deque
from dataclasses import is_dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from databricks.sdk.service import files, jobs, sql

from contract_gate.runners.local import LocalRunner

FILES = "/api/2.0/fs/files"
DIRECTORIES = "/api/2.0/fs/directories"


class RequestRejected(Exception):
    """A request the SDK's models do not read as it was sent."""


def sdk_request(method: typing.Callable, body: dict) -> dict:
    """``body`` read as the arguments of the SDK ``method`` that sends it (see the module doc)."""
    hints = typing.get_type_hints(method)
    hints.pop("return", None)
    unknown = sorted(set(body) - set(hints))
    if unknown:
        raise RequestRejected(f"{method.__qualname__} has no field(s) {unknown}")
    return {name: _read(hints[name], value, f"{method.__qualname__}.{name}") for name, value in body.items()}


def _read(hint: typing.Any, value: typing.Any, where: str) -> typing.Any:
    args = [arg for arg in typing.get_args(hint) if arg is not type(None)]
    if typing.get_origin(hint) is typing.Union:
        return _read(args[0], value, where)
    if typing.get_origin(hint) is list:
        if not isinstance(value, list):
            raise RequestRejected(f"{where}: {value!r} is not a list")
        return [_read(args[0], item, where) for item in value]
    if isinstance(hint, type) and is_dataclass(hint):
        model = hint.from_dict(value)
        if model.as_dict() != value:
            raise RequestRejected(f"{where}: {value!r} is not a {hint.__name__} (read back: {model.as_dict()!r})")
        return model
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        try:
            return hint(value)
        except ValueError as exc:
            raise RequestRejected(f"{where}: {value!r} is not a {hint.__name__}") from exc
    if hint is bool and isinstance(value, str):  # a query string's boolean
        return value == "true"
    if hint is int and isinstance(value, str):
        return int(value)
    return value


class JobsApiEmulator:
    """:param root: the folder that holds the emulated volumes (``root/Volumes/<catalog>/...``).
    :param cwd: the working folder of the runs' processes.
    :param connect_url: the Spark Connect server serverless runs use (``sc://...``); without it a
        serverless run fails, as in a workspace without serverless compute."""

    def __init__(self, root: Path, cwd: Path, connect_url: str | None = None) -> None:
        self.root = root
        self.cwd = cwd
        self.connect_url = connect_url
        self.volumes: set[str] = set()  # "/Volumes/<catalog>/<schema>/<volume>"
        self.clusters: set[str] = set()  # the existing all-purpose clusters' ids
        self.cluster_start_seconds = 0.0  # how long a run waits for its compute (PENDING)
        self.runs: dict[int, dict] = {}
        self.submitted: list[dict] = []  # the runs/submit bodies, as sent
        self.uploads: list[str] = []  # the volume paths written, in order
        self.deletions: list[str] = []  # the volume files and folders deleted, in order
        self.refuse_deletes = False  # every DELETE answered 403, as after WRITE VOLUME was revoked
        self.cancelled: list[int] = []
        self.installed: list[tuple[str, str]] = []  # (wheel, "library" | "environment"), per run
        self.rejected: list[str] = []
        self.statements: list[str] = []
        self.catalog_objects: set[tuple[str, str]] = set()  # (TABLE | SCHEMA | CATALOG, lower-case name)
        self.grants: dict[tuple[str, str], dict[str, set[str]]] = {}  # object -> principal -> privileges
        self._ids = itertools.count(1000, 2)  # a run's id; its task's is the next one
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.port = self._server.server_address[1]

    def connection(self, **settings) -> str:
        """An Airflow connection (``AIRFLOW_CONN_...`` JSON) to this workspace with a token, and
        ``settings`` as its ``contract_gate`` extra."""
        return json.dumps({"conn_type": "databricks", "host": "127.0.0.1", "port": self.port, "schema": "http",
                           "password": "emulated-token", "extra": {"contract_gate": settings}})

    def __enter__(self) -> JobsApiEmulator:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        for run in self.runs.values():
            run["ended"].set()
            if run["process"] and run["process"].poll() is None:
                run["process"].kill()
        self._server.shutdown()
        self._server.server_close()
        if self.rejected and exc[0] is None:
            raise AssertionError("requests the SDK's models refuse:\n" + "\n".join(self.rejected))

    # -- the emulated volumes ---------------------------------------------------------------
    def local(self, path: str) -> Path:
        """The local file of a ``/Volumes/...`` path in a registered volume."""
        parts = path.split("/")
        if len(parts) < 6 or parts[1] != "Volumes" or ".." in parts or "/".join(parts[:5]) not in self.volumes:
            raise FileNotFoundError(path)
        return self.root.joinpath(*parts[1:])

    # -- the emulated compute ----------------------------------------------------------------
    def launch(self, run_id: int, task: jobs.SubmitTask, environments: dict[str, jobs.JobEnvironment]) -> None:
        run = self.runs[run_id]
        if run["ended"].wait(self.cluster_start_seconds):  # cancelled or timed out while its compute started
            return
        scratch = self.root / "_compute" / str(run_id)
        scratch.mkdir(parents=True)
        try:
            launcher = self.install(task, environments, scratch)
        except (FileNotFoundError, KeyError, zipfile.BadZipFile) as exc:
            run["failure"] = f"Library installation failed: {exc}"
            run["ended"].set()
            return
        wheel_task = task.python_wheel_task
        parameters = [str(self.local(p)) if p.startswith("/Volumes/") else p for p in wheel_task.parameters or []]
        if task.environment_key:  # serverless: Spark Connect only
            if not self.connect_url:
                run["failure"] = "serverless compute is not enabled in this workspace"
                run["ended"].set()
                return
            argv = [sys.executable, str(launcher), *parameters]
            env = {**os.environ, "SPARK_REMOTE": self.connect_url}
            for name in ("PYSPARK_GATEWAY_PORT", "PYSPARK_GATEWAY_SECRET", "SPARK_HOME"):
                env.pop(name, None)
            run["compute"] = "serverless"
        else:
            runner = LocalRunner(cores=2)
            argv = runner.submit_argv(launcher, parameters, scratch, f"run-{run_id}")
            env = runner.environment()
            run["compute"] = "existing cluster" if task.existing_cluster_id else "job cluster"
        with run["lock"]:
            if run["ended"].is_set():
                return
            run["process"] = subprocess.Popen(argv, cwd=self.cwd, env=env, stdout=subprocess.PIPE,
                                              stderr=subprocess.STDOUT, text=True)
        run["start_time"] = int(time.time() * 1000)
        for line in run["process"].stdout:
            run["output"].append(line.rstrip())
        run["process"].wait()
        run["ended"].set()

    def install(self, task: jobs.SubmitTask, environments: dict[str, jobs.JobEnvironment], scratch: Path) -> Path:
        """Unpack the task's wheel (a library, or its environment's dependency) and write the script
        that calls its entry point, as Databricks runs a ``python_wheel_task``."""
        if task.environment_key:
            spec = environments[task.environment_key].spec
            wheels = [dependency for dependency in spec.dependencies or [] if dependency.endswith(".whl")]
        else:
            wheels = [library.whl for library in task.libraries or [] if library.whl]
        site = scratch / "site"
        for wheel in wheels:
            with zipfile.ZipFile(self.local(wheel)) as archive:
                archive.extractall(site)
            self.installed.append((wheel, "environment" if task.environment_key else "library"))
        wheel_task = task.python_wheel_task
        target = None
        for entry_points in site.glob("*.dist-info/entry_points.txt"):
            metadata = (entry_points.parent / "METADATA").read_text()
            if f"\nName: {wheel_task.package_name}\n" not in metadata:
                continue
            for line in entry_points.read_text().splitlines():
                name, _, value = line.partition("=")
                if name.strip() == wheel_task.entry_point:
                    target = value.strip()
        if target is None:
            raise KeyError(f"no entry point {wheel_task.entry_point} in package {wheel_task.package_name}")
        module, _, function = target.partition(":")
        launcher = scratch / "entry_point.py"
        launcher.write_text(f"import sys\nsys.path.insert(0, {str(site)!r})\n"
                            f"from {module} import {function}\n{function}()\n")
        return launcher

    def time_out(self, run: dict) -> None:
        with run["lock"]:
            if run["ended"].is_set():
                return
            run["timed_out"] = True
            run["ended"].set()
            if run["process"] and run["process"].poll() is None:
                run["process"].terminate()

    def state(self, run: dict) -> jobs.RunState:
        process = run["process"]
        if not run["ended"].is_set():
            if process is None:
                return jobs.RunState(life_cycle_state=jobs.RunLifeCycleState.PENDING, state_message="Waiting for compute")
            return jobs.RunState(life_cycle_state=jobs.RunLifeCycleState.RUNNING, state_message="In run")
        if process is not None and process.poll() is None:
            return jobs.RunState(life_cycle_state=jobs.RunLifeCycleState.TERMINATING, state_message="Stopping")
        ended = jobs.RunLifeCycleState.TERMINATED
        if run.get("timed_out"):
            return jobs.RunState(life_cycle_state=ended, result_state=jobs.RunResultState.TIMEDOUT,
                                 state_message="Run timed out")
        if run.get("cancelled"):
            return jobs.RunState(life_cycle_state=ended, result_state=jobs.RunResultState.CANCELED,
                                 state_message="Run cancelled")
        if run.get("failure"):
            return jobs.RunState(life_cycle_state=jobs.RunLifeCycleState.INTERNAL_ERROR,
                                 result_state=jobs.RunResultState.FAILED, state_message=run["failure"])
        if process.returncode == 0:
            return jobs.RunState(life_cycle_state=ended, result_state=jobs.RunResultState.SUCCESS, state_message="")
        return jobs.RunState(life_cycle_state=ended, result_state=jobs.RunResultState.FAILED,
                             state_message=f"Task contract_gate failed with exit code {process.returncode}")

    # -- the emulated SQL warehouse -------------------------------------------------------
    def sql(self, text: str) -> sql.StatementResponse:
        """Run one statement on the emulated warehouse (Unity Catalog grants only)."""
        statement = _Statement(text)
        verb = statement.next().upper()
        succeeded = sql.StatementStatus(state=sql.StatementState.SUCCEEDED)
        if verb == "SHOW":
            statement.expect("GRANTS", "ON")
            securable = self._securable(statement)
            statement.end()
            rows = [[principal, privilege, securable[0], securable[1]]
                    for principal, privileges in sorted(self.grants.get(securable, {}).items())
                    for privilege in sorted(privileges)]
            columns = [sql.ColumnInfo(name=name, position=index, type_name=sql.ColumnInfoTypeName.STRING,
                                      type_text="STRING")
                       for index, name in enumerate(("Principal", "ActionType", "ObjectType", "ObjectKey"))]
            return sql.StatementResponse(status=succeeded, manifest=sql.ResultManifest(
                format=sql.Format.JSON_ARRAY, schema=sql.ResultSchema(column_count=len(columns), columns=columns)),
                result=sql.ResultData(data_array=rows, row_count=len(rows)))
        if verb not in ("GRANT", "REVOKE"):
            raise SqlError("UNSUPPORTED_STATEMENT", f"the emulated warehouse runs GRANT, REVOKE, SHOW GRANTS: {verb}")
        words, privileges = [], []
        while (token := statement.next()).upper() != "ON":
            if token == ",":
                privileges.append(" ".join(words).upper())
                words = []
            else:
                words.append(_identifier(token))
        privileges.append(" ".join(words).upper())
        securable = self._securable(statement)
        statement.expect("TO" if verb == "GRANT" else "FROM")
        principal = _identifier(statement.next())
        statement.end()
        held = self.grants.setdefault(securable, {})
        if verb == "GRANT":
            held.setdefault(principal, set()).update(privileges)
        elif privileges == ["ALL PRIVILEGES"]:
            held.pop(principal, None)
        else:
            held.get(principal, set()).difference_update(privileges)
            if not held.get(principal, True):
                del held[principal]
        return sql.StatementResponse(status=succeeded)

    def _securable(self, statement: _Statement) -> tuple[str, str]:
        kind = statement.next().upper()
        if kind not in _SECURABLES:
            raise SqlError("PARSE_SYNTAX_ERROR", f"unknown securable type {kind}")
        securable = (kind, statement.name().lower())
        if securable not in self.catalog_objects:
            code = {"TABLE": "TABLE_OR_VIEW_NOT_FOUND", "SCHEMA": "SCHEMA_NOT_FOUND"}.get(kind, "NO_SUCH_CATALOG_EXCEPTION")
            raise SqlError(code, f"{kind.lower()} {securable[1]} cannot be found")
        return securable

    # -- HTTP -----------------------------------------------------------------------------
    def _handler(self):
        emulator = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as the SDK's requests session expects

            def log_message(self, *args) -> None:
                pass

            def reply(self, body: dict | bytes, status: int = 200, head: bool = False) -> None:
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/octet-stream" if isinstance(body, bytes)
                                 else "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if not head:
                    self.wfile.write(data)

            def body(self) -> bytes:
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            def handle_call(self, method: str) -> None:
                url = urlsplit(self.path)
                query = {key: values[0] for key, values in parse_qs(url.query).items()}
                payload = self.body()
                try:
                    self.reply(*emulator.call(method, url.path, query, payload), head=method == "HEAD")
                except RequestRejected as exc:
                    emulator.rejected.append(f"{method} {url.path}: {exc}")
                    self.reply({"error_code": "INVALID_PARAMETER_VALUE", "message": str(exc)}, 400)

            def do_GET(self) -> None:
                self.handle_call("GET")

            def do_HEAD(self) -> None:
                self.handle_call("HEAD")

            def do_PUT(self) -> None:
                self.handle_call("PUT")

            def do_POST(self) -> None:
                self.handle_call("POST")

            def do_DELETE(self) -> None:
                self.handle_call("DELETE")

        return Handler

    def call(self, method: str, path: str, query: dict, payload: bytes) -> tuple[dict | bytes, int]:
        if path.startswith(FILES + "/"):
            return self.files(method, unquote(path.removeprefix(FILES)), query, payload)
        if path.startswith(DIRECTORIES + "/"):
            return self.directories(method, unquote(path.removeprefix(DIRECTORIES)), query)
        body = json.loads(payload or b"{}")
        if method == "POST" and path == "/api/2.2/jobs/runs/submit":
            return self.submit(body), 200
        if method == "GET" and path == "/api/2.2/jobs/runs/get":
            request = sdk_request(jobs.JobsAPI.get_run, query)
            return self.run_info(request["run_id"]).as_dict(), 200
        if method == "GET" and path == "/api/2.2/jobs/runs/get-output":
            request = sdk_request(jobs.JobsAPI.get_run_output, query)
            run = self.runs[request["run_id"] - 1]
            logs = "\n".join(run["output"])
            failed = self.state(run).result_state == jobs.RunResultState.FAILED
            output = jobs.RunOutput(logs=logs, error=(run.get("failure") or logs[-2000:]) if failed else None)
            return output.as_dict(), 200
        if method == "GET" and path == "/api/2.2/jobs/runs/list":
            return self.list_runs(sdk_request(jobs.JobsAPI.list_runs, query)).as_dict(), 200
        if method == "POST" and path == "/api/2.2/jobs/runs/cancel":
            request = sdk_request(jobs.JobsAPI.cancel_run, body)
            run = self.runs[request["run_id"]]
            self.cancelled.append(request["run_id"])
            with run["lock"]:
                if not run["ended"].is_set():
                    run["cancelled"] = True
                    run["ended"].set()
                    if run["process"] and run["process"].poll() is None:
                        run["process"].terminate()
            return {}, 200
        if method == "POST" and path == "/api/2.0/sql/statements":
            request = sdk_request(sql.StatementExecutionAPI.execute_statement, body)
            self.statements.append(request["statement"])
            statement_id = str(len(self.statements))
            try:
                response = self.sql(request["statement"])
            except SqlError as exc:
                response = sql.StatementResponse(status=sql.StatementStatus(
                    state=sql.StatementState.FAILED,
                    error=sql.ServiceError(error_code=sql.ServiceErrorCode.BAD_REQUEST, message=f"[{exc.code}] {exc}")))
            response.statement_id = statement_id
            return response.as_dict(), 200
        return {"error_code": "ENDPOINT_NOT_FOUND", "message": f"{method} {path}"}, 404

    def files(self, method: str, path: str, query: dict, payload: bytes) -> tuple[dict | bytes, int]:
        if method == "DELETE" and self.refuse_deletes:
            return {"error_code": "PERMISSION_DENIED", "message": f"no WRITE VOLUME privilege on {path}"}, 403
        try:
            target = self.local(path)
        except FileNotFoundError:
            return {"error_code": "NOT_FOUND", "message": f"The volume of {path} does not exist"}, 404
        if method == "PUT":
            request = sdk_request(files.FilesAPI.upload, query)
            if target.exists() and not request.get("overwrite", False):
                return {"error_code": "ALREADY_EXISTS", "message": path}, 409
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(payload)
            self.uploads.append(path)
            return b"", 204
        if query:
            raise RequestRejected(f"{method} {path} takes no query parameters: {sorted(query)}")
        if not target.is_file():
            return {"error_code": "NOT_FOUND", "message": f"No such file: {path}"}, 404
        if method == "DELETE":
            target.unlink()
            self.deletions.append(path)
            return b"", 204
        return target.read_bytes(), 200

    def directories(self, method: str, path: str, query: dict) -> tuple[dict | bytes, int]:
        """List a volume folder (one page) or delete it when it is empty."""
        try:
            target = self.local(path)
        except FileNotFoundError:
            return {"error_code": "NOT_FOUND", "message": f"The volume of {path} does not exist"}, 404
        if not target.is_dir():
            return {"error_code": "NOT_FOUND", "message": f"No such directory: {path}"}, 404
        if method == "GET":
            sdk_request(files.FilesAPI.list_directory_contents, query)
            # a file's size and time of its last write; a folder has neither, as on Databricks
            entries = [files.DirectoryEntry(path=f"{path.rstrip('/')}/{child.name}", name=child.name,
                                            is_directory=child.is_dir(),
                                            file_size=None if child.is_dir() else child.stat().st_size,
                                            last_modified=None if child.is_dir() else
                                            int(child.stat().st_mtime * 1000))
                       for child in sorted(target.iterdir())]
            return {"contents": [entry.as_dict() for entry in entries]}, 200
        if method != "DELETE" or query:
            raise RequestRejected(f"{method} {DIRECTORIES}{path} is not a Files API call")
        if any(target.iterdir()):
            return {"error_code": "DIRECTORY_NOT_EMPTY", "message": f"{path} is not empty"}, 400
        target.rmdir()
        self.deletions.append(path)
        return b"", 204

    def submit(self, body: dict) -> dict:
        request = sdk_request(jobs.JobsAPI.submit, body)
        (task,) = request["tasks"]
        environments = {environment.environment_key: environment for environment in request.get("environments") or []}
        if task.python_wheel_task is None:
            raise RequestRejected("the emulated workspace runs python_wheel_task runs")
        kinds = [kind for kind in (task.existing_cluster_id, task.new_cluster, task.environment_key) if kind]
        if len(kinds) != 1:
            raise RequestRejected("a task runs on one compute: existing_cluster_id, new_cluster or environment_key")
        if task.existing_cluster_id and task.existing_cluster_id not in self.clusters:
            raise RequestRejected(f"Cluster {task.existing_cluster_id} does not exist")
        if task.new_cluster and not task.new_cluster.spark_version:
            raise RequestRejected("a new cluster needs spark_version")
        if task.environment_key and (task.environment_key not in environments or task.libraries):
            raise RequestRejected("a serverless task takes its libraries from its environment")
        run_id = next(self._ids)
        self.submitted.append(body)
        run = {"process": None, "output": deque(maxlen=400), "ended": threading.Event(), "lock": threading.Lock(),
               "name": request.get("run_name"), "timeout": request.get("timeout_seconds")}
        self.runs[run_id] = run
        if run["timeout"]:
            timer = threading.Timer(run["timeout"], self.time_out, args=(run,))
            timer.daemon = True
            timer.start()
        threading.Thread(target=self.launch, args=(run_id, task, environments), daemon=True).start()
        return jobs.SubmitRunResponse(run_id=run_id).as_dict()

    def list_runs(self, request: dict) -> jobs.ListRunsResponse:
        """A page of the one-time runs, newest first (``limit`` at most 25, as Databricks allows);
        ``active_only``: those not ended (pending, running, terminating)."""
        if set(request) - {"active_only", "run_type", "limit", "page_token"}:
            raise RequestRejected(f"runs/list filters the emulation does not apply: {sorted(request)}")
        if request.get("run_type", jobs.RunType.SUBMIT_RUN) != jobs.RunType.SUBMIT_RUN:
            return jobs.ListRunsResponse(runs=[], has_more=False)
        limit = request.get("limit") or 25
        if not 1 <= limit <= 25:
            raise RequestRejected(f"runs/list limit {limit} is not within 1-25")
        ended = (jobs.RunLifeCycleState.TERMINATED, jobs.RunLifeCycleState.SKIPPED, jobs.RunLifeCycleState.INTERNAL_ERROR)
        runs = [jobs.BaseRun(run_id=run_id, run_name=run["name"], state=self.state(run), run_type=jobs.RunType.SUBMIT_RUN)
                for run_id, run in sorted(self.runs.items(), reverse=True)]
        if request.get("active_only"):
            runs = [run for run in runs if run.state.life_cycle_state not in ended]
        start = int(request.get("page_token") or 0)
        more = start + limit < len(runs)
        return jobs.ListRunsResponse(runs=runs[start:start + limit], has_more=more,
                                     next_page_token=str(start + limit) if more else None)

    def run_info(self, run_id: int) -> jobs.Run:
        run = self.runs[run_id]
        state = self.state(run)
        task = jobs.RunTask(task_key="contract_gate", run_id=run_id + 1, state=state,
                            start_time=run.get("start_time", 0))
        return jobs.Run(run_id=run_id, run_name=run["name"], state=state, tasks=[task],
                        run_page_url=f"http://127.0.0.1:{self.port}/#job/runs/{run_id}")


# -- the emulated SQL warehouse: Unity Catalog grants ------------------------------------------
_TOKEN = re.compile(r"`(?:[^`]|``)*`|[A-Za-z_][A-Za-z0-9_]*|\S")
_SECURABLES = ("TABLE", "SCHEMA", "CATALOG")


class SqlError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def _identifier(token: str) -> str:
    if token.startswith("`") and len(token) > 1:
        return token[1:-1].replace("``", "`")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", token):
        raise SqlError("PARSE_SYNTAX_ERROR", f"Syntax error at or near '{token}'")
    return token


class _Statement:
    """A cursor over one statement's tokens."""

    def __init__(self, text: str) -> None:
        self.tokens = _TOKEN.findall(text)
        self.at = 0

    def next(self) -> str:
        if self.at >= len(self.tokens):
            raise SqlError("PARSE_SYNTAX_ERROR", "Syntax error at end of input")
        self.at += 1
        return self.tokens[self.at - 1]

    def expect(self, *words: str) -> None:
        for word in words:
            token = self.next()
            if token.upper() != word:
                raise SqlError("PARSE_SYNTAX_ERROR", f"Syntax error at or near '{token}': expected {word}")

    def name(self) -> str:
        parts = [_identifier(self.next())]
        while self.at < len(self.tokens) and self.tokens[self.at] == ".":
            self.at += 1
            parts.append(_identifier(self.next()))
        return ".".join(parts)

    def end(self) -> None:
        if self.at != len(self.tokens):
            raise SqlError("PARSE_SYNTAX_ERROR", f"Syntax error at or near '{self.tokens[self.at]}'")
