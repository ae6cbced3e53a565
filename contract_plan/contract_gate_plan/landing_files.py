"""The entries of a file landing on a local filesystem: regular files and folders, nothing else.

What lands is written by the producer, so it is as hostile as the contract. A symbolic link in
the landing would make the gate read, and publish, a file outside its batch (another team's
data, a secret); a FIFO or a device would hang the read. Every reader of a local file landing
lists it here and refuses the batch, naming the entry: the batch identity
(``contract_gate.submission``), the landing watch (``contract_gate.landing_batches``) and the
stage step, which checks again right before Spark reads, since a link added after the batch
was identified would otherwise still be followed.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path


class LandingRefused(ValueError):
    """The landing holds something the gate will not read (named in the message)."""


@dataclass(frozen=True)
class Entry:
    """One entry of a landing: ``relative`` is ``"."`` for the landing itself."""

    relative: str
    is_file: bool
    mtime: float

    @property
    def skipped(self) -> bool:
        """A name Spark and the batch identity skip at any level (``_SUCCESS``, ``.crc``)."""
        return any(part.startswith(("_", ".")) for part in self.relative.split("/") if part != ".")


def landing_entries(path: str | Path) -> list[Entry]:
    """The landing (a folder or a single file) and everything below it; [] when nothing is there.

    :raises LandingRefused: the landing, or an entry below it, is a link or a special file."""
    landing = Path(path)
    try:
        top = os.lstat(landing)
    except FileNotFoundError:
        return []
    _require_plain(top, landing, ".")
    entries = [Entry(".", stat.S_ISREG(top.st_mode), top.st_mtime)]
    if not stat.S_ISDIR(top.st_mode):
        return entries
    for root, dirs, names in os.walk(landing):
        dirs.sort()
        for name in [*dirs, *sorted(names)]:
            entry = Path(root) / name
            info = os.lstat(entry)
            relative = entry.relative_to(landing).as_posix()
            _require_plain(info, landing, relative)
            entries.append(Entry(relative, stat.S_ISREG(info.st_mode), info.st_mtime))
    return entries


def data_files(path: str | Path) -> list[Path]:
    """The files Spark reads at the landing, in a stable order (skipped names left out)."""
    landing = Path(path)
    return [landing / entry.relative for entry in landing_entries(landing) if entry.is_file and not entry.skipped]


def _require_plain(info: os.stat_result, landing: Path, relative: str) -> None:
    if stat.S_ISLNK(info.st_mode) or not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
        what = f"landing {landing}" if relative == "." else f"{relative} in landing {landing}"
        raise LandingRefused(
            f"{what} is a link or a special file; the gate reads regular files inside its landing only"
        )
