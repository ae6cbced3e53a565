"""A throwaway PostgreSQL server from the Debian ``postgresql`` package, for Airflow's metadata DB.

``initdb`` in a temporary folder, ``postgres`` on 127.0.0.1 on a free port with its socket in
that folder, password authentication, stopped with ``pg_ctl stop`` (that data folder's server
only). PostgreSQL refuses to run as root, so as root the server runs as the package's ``postgres``
system user (``runuser``).
"""

from __future__ import annotations

import glob
import os
import secrets
import shutil
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

SERVER_USER = "postgres"  # the system user the Debian package creates
DATABASE = "airflow"
ROLE = "airflow"


def server_binaries() -> Path:
    """The folder of ``initdb``/``pg_ctl``: Debian keeps them in /usr/lib/postgresql/<major>/bin."""
    found = shutil.which("pg_ctl")
    if found:
        return Path(os.path.realpath(found)).parent
    folders = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name))
    if not folders:
        raise RuntimeError("PostgreSQL's server programs are not installed (initdb, pg_ctl): "
                           "scripts/install.sh installs the Debian postgresql package")
    return Path(folders[-1])


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class PostgresServer:
    folder: Path
    port: int
    password: str

    @property
    def url(self) -> str:
        """The SQLAlchemy URL Airflow's ``sql_alchemy_conn`` takes (the compose stack's driver)."""
        return f"postgresql+psycopg2://{ROLE}:{self.password}@127.0.0.1:{self.port}/{DATABASE}"

    def connect(self):
        import psycopg2

        return psycopg2.connect(host="127.0.0.1", port=self.port, user=ROLE, password=self.password,
                                dbname=DATABASE)

    def _run(self, *command: str) -> None:
        prefix = ["runuser", "-u", SERVER_USER, "--"] if os.geteuid() == 0 else []
        subprocess.run([*prefix, *command], check=True, capture_output=True, text=True, cwd=self.folder)

    def start(self) -> None:
        bin_dir = server_binaries()
        data = self.folder / "data"
        password_file = self.folder / "password"
        password_file.write_text(self.password + "\n")
        if os.geteuid() == 0:
            shutil.chown(self.folder, SERVER_USER)
            shutil.chown(password_file, SERVER_USER)
        self._run(str(bin_dir / "initdb"), "-D", str(data), "-U", ROLE, f"--pwfile={password_file}",
                  "--auth=scram-sha-256", "-E", "UTF8", "--no-sync")
        # -w: pg_ctl returns once the server accepts connections (or fails with its log's reason)
        options = f"-h 127.0.0.1 -p {self.port} -k {self.folder} -c fsync=off"
        self._run(str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(self.folder / "server.log"),
                  "-o", options, "-w", "-t", "60", "start")
        import psycopg2

        admin = psycopg2.connect(host="127.0.0.1", port=self.port, user=ROLE, password=self.password,
                                 dbname="postgres")
        admin.autocommit = True
        with admin.cursor() as cursor:
            cursor.execute(f"CREATE DATABASE {DATABASE}")
        admin.close()

    def stop(self) -> None:
        self._run(str(server_binaries() / "pg_ctl"), "-D", str(self.folder / "data"), "-m", "fast", "-w", "stop")


def start_postgres(folder: Path) -> PostgresServer:
    server = PostgresServer(folder=folder, port=free_port(), password=secrets.token_hex(12))
    try:
        server.start()
    except subprocess.CalledProcessError as error:
        log = folder / "server.log"
        raise RuntimeError(f"PostgreSQL did not start: {error.cmd[-1] if error.cmd else ''}\n{error.stderr}"
                           f"{log.read_text() if log.exists() else ''}") from error
    return server
