"""The hooks' errors, importable without the clients they come from (no SDK at import)."""


class StatementFailed(RuntimeError):
    """A statement the SQL warehouse did not run (its error code and message)."""
