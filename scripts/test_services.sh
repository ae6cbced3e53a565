#!/usr/bin/env bash
# What only the tests need from Debian, installed when missing: PostgreSQL (the tests that run
# Airflow on a real PostgreSQL metadata database, as the compose stack does) and Chromium (the
# browser tests of the gate's pages, driven by Playwright). scripts/test.sh runs it first; CI
# starts it beside scripts/install.sh, as it downloads while the other builds.
set -euo pipefail
# apt waits for the package lock instead of failing while another apt (install.sh's Java) holds it
APT=(apt-get -o DPkg::Lock::Timeout=600)
missing=()
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1; then
  missing+=(postgresql)
fi
if ! command -v chromium >/dev/null 2>&1; then
  missing+=(chromium)
fi
if [ "${#missing[@]}" -gt 0 ]; then
  echo "test services: installing ${missing[*]} for the tests" >&2
  "${APT[@]}" update -qq && "${APT[@]}" install -y -qq "${missing[@]}" >/dev/null
fi
