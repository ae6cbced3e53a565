"""A real S3-compatible server on 127.0.0.1: moto's standalone server (``moto[server]``), a process
of its own, with its request log in a file so a test can see which requests reached it.

``connection()`` is an Airflow ``aws`` connection to it (``AIRFLOW_CONN_*`` value): the amazon
provider's S3 filesystem takes the endpoint from the connection's ``endpoint_url``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

from _smtp_inbox import free_port
from waiting import wait_until

START_TIMEOUT = 120
REGION = "us-east-1"
KEY, SECRET = "contract-gate-test", "contract-gate-test-secret"


class S3Server:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.log = folder / "moto-server.log"
        self.process: subprocess.Popen | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> S3Server:
        self.folder.mkdir(parents=True, exist_ok=True)
        with self.log.open("wb") as log:
            self.process = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1",
                                             "-p", str(self.port)], stdout=log, stderr=subprocess.STDOUT)
        wait_until(self._ready, START_TIMEOUT, interval=0.2, message="the moto S3 server answering")
        return self

    def _ready(self) -> bool:
        if self.process.poll() is not None:
            raise RuntimeError(f"the moto server exited ({self.process.returncode}): {self.log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{self.endpoint}/moto-api/", timeout=2):
                return True
        except OSError:
            return False

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)

    def connection(self) -> str:
        return json.dumps({"conn_type": "aws", "login": KEY, "password": SECRET,
                           "extra": {"endpoint_url": self.endpoint, "region_name": REGION}})

    def client(self):
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, region_name=REGION,
                            aws_access_key_id=KEY, aws_secret_access_key=SECRET)

    def requests(self) -> list[str]:
        """The request lines the server logged so far (``GET /bucket/key HTTP/1.1``)."""
        return [line.split('"')[1] for line in self.log.read_text(errors="replace").splitlines()
                if line.count('"') >= 2 and "HTTP/" in line]
