"""Contract errors that name the file, the YAML path and the line, and are collected, not raised one by one."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, order=True)
class ContractIssue:
    """One problem in a contract file. ``path`` is a YAML path such as
    ``schema[0].properties[2].logicalTypeOptions.minimum`` ("" for the document itself)."""

    file: str
    line: int | None
    path: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.path or '<document>'}: {self.message}"

    def as_dict(self) -> dict:
        return {"file": self.file, "line": self.line, "path": self.path, "message": self.message}


@dataclass
class ContractError(Exception):
    """Raised when a contract cannot be compiled; carries every issue found, sorted by line."""

    file: str
    issues: list[ContractIssue] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__(str(self))

    def __str__(self) -> str:
        lines = [f"{self.file}: {len(self.issues)} contract error(s)"]
        lines += [f"  {issue}" for issue in self.issues]
        return "\n".join(lines)


def yaml_path(parts) -> str:
    """Render a sequence of keys and indexes as ``a.b[0].c``."""
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text
