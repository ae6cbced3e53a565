"""The ``contract-gate`` command line: one module per sub-command, each exposing
``register(subparsers)`` that adds its parser and sets ``func`` (returns the exit code)."""
