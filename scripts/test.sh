#!/usr/bin/env bash
# The test command (README quick start, .ci/run): sets up what it needs, then type-check, lint and
# every test against a real Docker engine and a real NATS server. Idempotent; needs no stdin.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$GATEHOUSE_ROOT"
exec </dev/null

bash scripts/setup.sh
ensure_test_registry
say "type-check: tsc --noEmit"
npx tsc -p tsconfig.json --noEmit
say "format: prettier --check (120 columns; .prettierrc.json)"
npx prettier --check --log-level warn "**/*.{ts,js,mjs,cjs}"
say "imports: no cycles (dependency-cruiser)"
npx depcruise orchestrator/src sandbox-agent/src egress-proxy/src shared/src --config .dependency-cruiser.cjs --output-type err
say "lint: eslint"
npx eslint .
# Sandboxes of earlier, killed test runs: removed once, before the files run in parallel (each
# test reaps only its own runs, so one file never takes another's deliberately crashed run).
say "tests: reaping sandboxes of dead orchestrators (gatehouse sandbox reap)"
node orchestrator/bin/gatehouse.mjs sandbox reap > /dev/null
say "tests: vitest run (real Docker and NATS)"
npx vitest run "$@"
