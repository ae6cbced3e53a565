"""A local emulation of the Databricks REST endpoints the ``databricks`` runner uses, on 127.0.0.1.

Endpoints (request and response shapes as documented for the Jobs API 2.2, DBFS API 2.0 and the
SQL Statement Execution API 2.0): ``POST jobs/runs/submit``, ``GET jobs/runs/get``,
``GET jobs/runs/get-output``, ``POST jobs/runs/cancel``, ``POST dbfs/put``, ``GET dbfs/read``,
``POST sql/statements`` (only the Unity Catalog statements the gate issues: ``GRANT``, ``REVOKE``,
``SHOW GRANTS``, parsed with Databricks' identifier quoting and kept in an emulated grant table;
objects must be registered in ``catalog_objects`` first, as tables exist in a metastore). A submitted
``spark_python_task`` runs as a local-mode spark-submit, as a single-node cluster would; the
cluster's ``/dbfs`` mount is emulated by mapping ``/dbfs/...`` parameters to a local folder. A
run's ``timeout_seconds`` ends it ``TIMEDOUT``.
Not emulated: authentication (any bearer token is accepted), clusters, libraries, repairs.
"""

from __future__ import annotations

import base64
import itertools
import json
import re
import subprocess
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit


class JobsApiEmulator:
    def __init__(self, dbfs_root: Path, cwd: Path) -> None:
        self.dbfs_root = dbfs_root
        self.cwd = cwd
        self.runs: dict[int, dict] = {}
        self.submitted: list[dict] = []
        self.statements: list[str] = []
        self.catalog_objects: set[tuple[str, str]] = set()  # (TABLE | SCHEMA | CATALOG, lower-case name)
        self.grants: dict[tuple[str, str], dict[str, set[str]]] = {}  # object -> principal -> privileges
        self._ids = itertools.count(1000)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.port = self._server.server_address[1]

    def __enter__(self) -> JobsApiEmulator:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        for run in self.runs.values():
            if run["process"] and run["process"].poll() is None:
                run["process"].kill()
        self._server.shutdown()

    # -- the emulated cluster --------------------------------------------------------------
    def local(self, path: str) -> Path:
        return self.dbfs_root / path.removeprefix("dbfs:").removeprefix("/dbfs").lstrip("/")

    def launch(self, run_id: int, task: dict) -> None:
        from contract_gate.runners.local import LocalRunner

        python = task["spark_python_task"]
        parameters = [str(self.local(p)) if p.startswith("/dbfs/") else p for p in python["parameters"]]
        runner = LocalRunner(cores=2)
        scratch = self.dbfs_root / "_cluster" / str(run_id)
        scratch.mkdir(parents=True)
        argv = runner.submit_argv(python["python_file"], parameters, scratch, f"run-{run_id}")
        run = self.runs[run_id]
        run["process"] = subprocess.Popen(argv, cwd=self.cwd, env=runner.environment(), stdout=subprocess.PIPE,
                                          stderr=subprocess.STDOUT, text=True)
        run["start_time"] = int(time.time() * 1000)
        if run["timeout_seconds"]:
            timer = threading.Timer(run["timeout_seconds"], self.time_out, args=(run,))
            timer.daemon = True
            timer.start()
        for line in run["process"].stdout:
            run["output"].append(line.rstrip())
        run["process"].wait()

    @staticmethod
    def time_out(run: dict) -> None:
        if run["process"].poll() is None:
            run["timed_out"] = True
            run["process"].terminate()

    def state(self, run: dict) -> dict:
        process = run["process"]
        if process is None:
            return {"life_cycle_state": "PENDING", "state_message": "Waiting for cluster"}
        if process.poll() is None:
            return {"life_cycle_state": "RUNNING", "state_message": "In run"}
        if run.get("timed_out"):
            return {"life_cycle_state": "TERMINATED", "result_state": "TIMEDOUT", "state_message": "Run timed out"}
        if run.get("cancelled"):
            return {"life_cycle_state": "TERMINATED", "result_state": "CANCELED", "state_message": "Run cancelled"}
        if process.returncode == 0:
            return {"life_cycle_state": "TERMINATED", "result_state": "SUCCESS", "state_message": ""}
        return {"life_cycle_state": "TERMINATED", "result_state": "FAILED",
                "state_message": f"Task contract_gate failed with exit code {process.returncode}"}

    # -- the emulated SQL warehouse -------------------------------------------------------
    def sql(self, text: str) -> dict:
        """Run one statement on the emulated warehouse (Unity Catalog grants only)."""
        statement = _Statement(text)
        verb = statement.next().upper()
        if verb == "SHOW":
            statement.expect("GRANTS", "ON")
            securable = self._securable(statement)
            statement.end()
            rows = [[principal, privilege, securable[0], securable[1]]
                    for principal, privileges in sorted(self.grants.get(securable, {}).items())
                    for privilege in sorted(privileges)]
            columns = [{"name": name} for name in ("Principal", "ActionType", "ObjectType", "ObjectKey")]
            return {"status": {"state": "SUCCEEDED"}, "manifest": {"schema": {"columns": columns}},
                    "result": {"data_array": rows}}
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
        return {"status": {"state": "SUCCEEDED"}}

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
            protocol_version = "HTTP/1.1"  # keep-alive, as the provider's aiohttp session expects

            def log_message(self, *args) -> None:
                pass

            def reply(self, body: dict, status: int = 200) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def body(self) -> dict:
                length = int(self.headers.get("Content-Length") or 0)
                return json.loads(self.rfile.read(length) or b"{}")

            def do_GET(self) -> None:
                # The provider's sync client sends GET parameters in the query string, its async
                # client as a JSON body: accept both, as the service does.
                url = urlsplit(self.path)
                query = {**self.body(), **{k: v[0] for k, v in parse_qs(url.query).items()}}
                self.reply(*emulator.get(url.path, query))

            def do_POST(self) -> None:
                self.reply(*emulator.post(urlsplit(self.path).path, self.body()))

        return Handler

    def get(self, path: str, query: dict) -> tuple[dict, int]:
        if path.endswith("/jobs/runs/get"):
            run_id = int(query["run_id"])
            run = self.runs[run_id]
            state = self.state(run)
            task = {"task_key": "contract_gate", "run_id": run_id, "state": state, "start_time": run.get("start_time", 0)}
            return {"run_id": run_id, "state": state, "tasks": [task],
                    "run_page_url": f"http://127.0.0.1:{self.port}/#job/runs/{run_id}"}, 200
        if path.endswith("/jobs/runs/get-output"):
            run = self.runs[int(query["run_id"])]
            logs = "\n".join(run["output"])
            failed = self.state(run).get("result_state") == "FAILED"
            return ({"error": logs[-2000:], "logs": logs} if failed else {"logs": logs}), 200
        if path.endswith("/dbfs/read"):
            target = self.local(query["path"])
            if not target.is_file():
                return {"error_code": "RESOURCE_DOES_NOT_EXIST", "message": f"No file: {query['path']}"}, 404
            offset, length = int(query.get("offset", 0)), int(query.get("length", 1 << 20))
            chunk = target.read_bytes()[offset:offset + length]
            return {"bytes_read": len(chunk), "data": base64.b64encode(chunk).decode()}, 200
        return {"error_code": "ENDPOINT_NOT_FOUND", "message": path}, 404

    def post(self, path: str, body: dict) -> tuple[dict, int]:
        if path.endswith("/jobs/runs/submit"):
            run_id = next(self._ids)
            self.submitted.append(body)
            self.runs[run_id] = {"process": None, "output": deque(maxlen=400),
                                 "timeout_seconds": body.get("timeout_seconds")}
            (task,) = body["tasks"]
            threading.Thread(target=self.launch, args=(run_id, task), daemon=True).start()
            return {"run_id": run_id}, 200
        if path.endswith("/jobs/runs/cancel"):
            run = self.runs[int(body["run_id"])]
            run["cancelled"] = True
            if run["process"] and run["process"].poll() is None:
                run["process"].terminate()
            return {}, 200
        if path.endswith("/sql/statements"):
            self.statements.append(body["statement"])
            try:
                return {"statement_id": str(len(self.statements)), **self.sql(body["statement"])}, 200
            except SqlError as exc:
                return {"statement_id": str(len(self.statements)),
                        "status": {"state": "FAILED", "error": {"error_code": exc.code, "message": str(exc)}}}, 200
        if path.endswith("/dbfs/put"):
            target = self.local(body["path"])
            if target.exists() and not body.get("overwrite"):
                return {"error_code": "RESOURCE_ALREADY_EXISTS", "message": body["path"]}, 400
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(base64.b64decode(body["contents"]))
            return {}, 200
        return {"error_code": "ENDPOINT_NOT_FOUND", "message": path}, 404


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
