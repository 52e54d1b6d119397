#!/usr/bin/env bash
# Benchmarks (not part of the tests): sets up, then prints one JSON document on stdout.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$GATEHOUSE_ROOT"
exec </dev/null
bash scripts/setup.sh >&2
ensure_test_registry >&2 # the setup-cache benchmark's npm registry
node bench/dist/run.mjs
