#!/usr/bin/env bash
# Lint and type checks (CI runs them): ruff over the tree, mypy over the modules tool.mypy lists.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/ruff check .
.venv/bin/mypy
