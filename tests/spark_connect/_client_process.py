"""Run ``_connect_client.py`` (a Spark Connect client doing gate steps) in its own process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

CLIENT = Path(__file__).with_name("_connect_client.py")


def run_client(command: str, url: str, folder: Path) -> dict:
    """``_connect_client.py <command> <url> <folder>`` to its end; the JSON of its last line.

    The client's log is kept in ``<folder>/client-<command>.log``: a step that failed inside the
    client is reported in the JSON, and its reason is in the log."""
    done = subprocess.run([sys.executable, str(CLIENT), command, url, str(folder)], capture_output=True,
                          text=True, timeout=900, cwd=folder)
    (folder / f"client-{command}.log").write_text(done.stderr, encoding="utf-8")
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])
